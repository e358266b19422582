/**
 * Builds the dashboard (services/dashboard) when its build is missing or older than its
 * sources (src/, public/, index.html, the Vite config, package.json): `npm start`, `npm run start:api` and the browser tests all call this one function,
 * so the dashboard is served right after `npm ci`. The check compares file times only (a few
 * dozen stat calls), so an up-to-date build costs milliseconds.
 *
 *   node --import tsx scripts/dashboard-build.ts [--force]
 */
import { spawn } from 'node:child_process';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DASHBOARD_DIR = path.join(root, 'services', 'dashboard');
export const DASHBOARD_DIST = path.join(DASHBOARD_DIR, 'dist');
const SOURCES = ['src', 'public', 'index.html', 'vite.config.js', 'package.json'];

async function newestMtime(target: string): Promise<number> {
  const info = await stat(target).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(target, { withFileTypes: true });
  const times = await Promise.all(entries.map((entry) => newestMtime(path.join(target, entry.name))));
  return Math.max(info.mtimeMs, ...times);
}

/** Why the build must be (re)made, or null when it is up to date. */
async function dashboardBuildStaleness(): Promise<string | null> {
  const built = await stat(path.join(DASHBOARD_DIST, 'index.html')).catch(() => null);
  if (!built) return 'the dashboard has not been built';
  const sources = Math.max(...(await Promise.all(SOURCES.map((name) => newestMtime(path.join(DASHBOARD_DIR, name))))));
  return sources > built.mtimeMs ? 'the dashboard sources changed since its last build' : null;
}

function runVite(outDir: string): Promise<void> {
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', outDir], {
      cwd: DASHBOARD_DIR,
      // Vite keeps a NODE_ENV it inherits: under jest (test) that would ship React's development build.
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`the dashboard build (vite build) failed with exit code ${code}`)),
    );
  });
}

/**
 * Builds into a directory of its own, then swaps it in: a server reading dist/ meanwhile, or a
 * second process building at the same time (parallel test files), never sees half a build.
 */
async function buildDashboard(): Promise<void> {
  const staging = path.join(DASHBOARD_DIR, `.dist-${process.pid}-${Date.now()}`);
  try {
    await runVite(staging);
    const retired = `${staging}-old`;
    await rename(DASHBOARD_DIST, retired).catch(() => undefined);
    await rename(staging, DASHBOARD_DIST).catch((error: NodeJS.ErrnoException) => {
      // Another process swapped its build in first: theirs is as fresh as ours.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
    await rm(retired, { recursive: true, force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Builds the dashboard when it is missing or stale; `log` hears why. Returns whether it built. */
export async function ensureDashboardBuilt(log: (line: string) => void = () => undefined): Promise<boolean> {
  const reason = await dashboardBuildStaleness();
  if (!reason) return false;
  log(`Building the dashboard: ${reason} (a few seconds)...`);
  await buildDashboard();
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const run = process.argv.includes('--force') ? buildDashboard().then(() => true) : ensureDashboardBuilt(say);
  run.then(
    (built) => say(built ? `dashboard built: ${path.relative(root, DASHBOARD_DIST)}` : 'dashboard build is up to date'),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
