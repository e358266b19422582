import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { parseSecretsKey } from '@retention/core';

/** Shared plumbing of the benchmarks: processes, load runs, and the report. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LOG_DIRECTORY = path.join(ROOT, 'bench/results/logs');
let startedProcesses = 0;

/** A port free right now (the OS picks it), for a bench server started next: two benches on one machine never collide. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Running {
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a TypeScript entry point as its own process, its output going to a log file under
 * bench/results/logs, and waits until `ready` appears there. A file rather than a pipe: the
 * services log every request, and a pipe would make this process (which also runs the load
 * generator) read and buffer every line, stealing CPU from what is measured. In production the
 * lines go to a collector on another core or machine.
 */
/**
 * Every service refuses to start without SECRETS_KEY: a bench run makes one of its own (nothing
 * it seeds needs an older key) unless the environment gives one.
 */
const BENCH_SECRETS_KEY = process.env.SECRETS_KEY ?? randomBytes(32).toString('base64');

/** That key as bytes: for the migrations and for sealing what a bench writes itself. */
export const benchSecretsKey = (): Buffer => parseSecretsKey({ SECRETS_KEY: BENCH_SECRETS_KEY });

export async function startProcess(entry: string, env: Record<string, string>, ready: RegExp): Promise<Running> {
  await mkdir(LOG_DIRECTORY, { recursive: true });
  // Named by entry point and start order, so the next run overwrites them instead of piling up.
  startedProcesses += 1;
  const logPath = path.join(LOG_DIRECTORY, `${startedProcesses}-${entry.replace(/\W+/g, '-')}.log`);
  const logFd = openSync(logPath, 'w');
  // BENCH_CPU_PROF_DIR: each started process writes a V8 CPU profile there when it exits.
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, SECRETS_KEY: BENCH_SECRETS_KEY, ...env },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (;;) {
    const output = readFileSync(logPath, 'utf8');
    if (ready.test(output)) break;
    const code = await Promise.race([exited, new Promise<'waiting'>((resolve) => setTimeout(resolve, 50, 'waiting'))]);
    if (code !== 'waiting')
      throw new Error(`${entry} exited with ${code}:\n${readFileSync(logPath, 'utf8').slice(-10_000)}`);
  }
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Requests answered in the run. */
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export async function load(
  url: string,
  headers: Record<string, string>,
  durationSeconds: number,
  connections = 50,
  /** Headers of the n-th connection (a session cookie each, for the dashboard); else `headers`. */
  connectionHeaders?: (index: number) => Record<string, string>,
): Promise<LoadResult> {
  let opened = 0;
  const result = await autocannon({
    url,
    headers,
    connections,
    duration: durationSeconds,
    pipelining: 1,
    ...(connectionHeaders && {
      setupClient: (client: autocannon.Client) => {
        client.setHeaders({ ...headers, ...connectionHeaders(opened++ % connections) });
      },
    }),
  });
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export function table(rows: Array<Record<string, string | number>>): string {
  const columns = Object.keys(rows[0] ?? {});
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => String(row[column]).length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return [
    line(columns),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((row) => line(columns.map((c) => String(row[c])))),
  ].join('\n');
}

export async function saveReport(name: string, report: unknown): Promise<string> {
  const directory = path.join(ROOT, 'bench', 'results');
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/**
 * CPU time (user + system) a process has used so far, in milliseconds, from /proc (Linux);
 * null elsewhere. Read before and after a load run, it gives CPU per request, a figure the
 * other work on a shared machine disturbs far less than latency.
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * CPU time of every PostgreSQL process on this machine so far, in milliseconds (Linux; null
 * elsewhere). The server is shared with whatever else runs, so read around a load run it is
 * the noisiest of the CPU figures, but it is where a stored row's cost shows.
 */
export function postgresCpuMs(): number | null {
  try {
    let total = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
        total += processCpuMs(Number(entry)) ?? 0;
      } catch {
        // The process ended while it was read.
      }
    }
    return total;
  } catch {
    return null;
  }
}
