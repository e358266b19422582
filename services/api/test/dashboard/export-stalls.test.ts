import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  CANCEL_SESSION_EXPORT_COLUMNS,
  CANCEL_SESSION_SORTS,
  cancelSessionListQuery,
  keysetOrdered,
} from '@retention/db';
import { createLogger, type Logger } from '@retention/runtime';
import express from 'express';
import { streamCsv, writeCsvPages, type CsvExportOptions } from '../../src/dashboard/insights-export.js';
import { useApi, workspaceWithToken } from '../harness.js';
import { dashboardClient, makeUser, signIn } from './support.js';

/**
 * CSV exports against clients that stop reading (docs/dashboard-api.md, "Exports"). The API gets
 * a pool of its own of 2 connections (the harness's own for a databaseUrl), so that an export
 * holding a connection while its client does not read would show at once: every other request
 * would wait for the pool.
 */
const api = useApi({ databaseUrl: (url) => url });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

/** Rows of long feedback: the export is some 25 MB, far more than the sockets' buffers hold. */
const ROWS = 20_000;
const FEEDBACK = 'All good, just too expensive for us. '.repeat(30);

/**
 * Rows whose feedback is as long as the schema allows (5,000 characters), each of four bytes
 * in UTF-8: 400 of them are one page of some 8 MB, more than the sockets' buffers hold.
 */
const ONE_PAGE_ROWS = 400;
const LONGEST_FEEDBACK = '\u{1F641}'.repeat(4_995);

/** A workspace with `rows` cancel sessions and a signed-in member (the lowest role). */
async function workspace(rows: number, feedback = FEEDBACK) {
  const { workspaceId } = await workspaceWithToken(api.current, {
    customers: [{ key: 'c', subscriptions: [{ key: 's' }] }],
  });
  const [customer] = await api.current.db('customers').where({ workspace_id: workspaceId }).select('id');
  await api.current.db.raw(
    `INSERT INTO cancel_sessions (workspace_id, customer_id, outcome, reason_code, feedback, monthly_mrr_cents,
                                  currency, created_at, ended_at)
     SELECT ?, ?, 'canceled', 'too_expensive', ? || g, 1000, 'usd', t, t
       FROM generate_series(1, ?) AS g, LATERAL (SELECT timestamptz '2025-01-01T00:00:00Z' + g * interval '1 second') AS s (t)`,
    [workspaceId, customer.id, feedback, rows],
  );
  const member = await makeUser(api.current.db, workspaceId, 'member');
  return { workspaceId, cookie: await signIn(call, member.email) };
}

const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/**
 * A client that sends the request, reads the status line and stops reading (the security
 * review's probe): resolves with the status line and the first bytes once they came.
 */
function stalledExport(url: string, cookie: string, path = '/dashboard/api/cancel_sessions/export.csv') {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  opened.push(socket);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nCookie: ${cookie}\r\n\r\n`);
  return new Promise<{ socket: Socket; statusLine: string; first: Buffer }>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, statusLine: chunk.toString('latin1').split('\r\n')[0]!, first: chunk });
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('the connection closed before any answer')));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Connections of this database's running a statement while they wait for the client (the API). */
async function connectionsInClientRead(): Promise<number> {
  const { rows } = await api.current.db.raw<{ rows: Array<{ n: number }> }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'active' AND wait_event = 'ClientRead'`,
  );
  return rows[0]!.n;
}

/** Polls until `check` holds, for at most `ms`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`never: ${what}`);
    await sleep(50);
  }
}

/** A logger whose entries the test reads. */
function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger(
    'api',
    'info',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    }),
  );
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, entries };
}

/**
 * A server of its own answering /export.csv with a workspace's cancel sessions through
 * streamCsv and `options` (bounds short enough for a test), logging to `logger`.
 */
async function exportServer(workspaceId: string, logger: Logger, options: CsvExportOptions) {
  const app = express();
  app.get('/export.csv', async (_req, res) => {
    const list = {
      query: () => cancelSessionListQuery(api.current.db, workspaceId, {}),
      order: CANCEL_SESSION_SORTS.order({}),
      idColumn: 's.id',
    };
    await streamCsv(res, logger, list, CANCEL_SESSION_EXPORT_COLUMNS, 'cancel-sessions.csv', options);
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Reads the rest of a paused client's answer until the connection closes: everything it received. */
async function readUntilClosed(socket: Socket, first: Buffer): Promise<string> {
  const received: Buffer[] = [first];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.resume();
  if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
  return Buffer.concat(received).toString('latin1');
}

/** The chunked body's closing chunk: a download that ends without it was cut. */
const LAST_CHUNK = '\r\n0\r\n\r\n';

describe('CSV exports whose clients stop reading', () => {
  it('hold no database connection: other requests are answered promptly while they wait', async () => {
    const a = await workspace(ROWS);
    const b = await workspace(ROWS);
    const other = await workspace(1);
    const answeredPromptly = async () => {
      const started = Date.now();
      const customers = await call('GET', '/customers', { cookie: other.cookie });
      expect(customers.status).toBe(200);
      // A held pool would keep this waiting for knex's acquire timeout (60 s); 10 s leaves room
      // for a loaded CI machine (3 s was seen beside a full test run) and still tells the two apart.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await connectionsInClientRead()).toBe(0);
    };

    // As many exports as the API's pool has connections, reading their status line and no more.
    const stalled = await Promise.all([a, b].map((w) => stalledExport(api.current.url, w.cookie)));
    expect(stalled.map((s) => s.statusLine)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    await sleep(1_000); // the buffers between the API and the sockets fill up
    await answeredPromptly();
    // Twice as many (two per workspace, the most a workspace may run): still nothing held.
    const more = await Promise.all([a, b].map((w) => stalledExport(api.current.url, w.cookie)));
    expect(more.map((s) => s.statusLine)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    await sleep(1_000);
    await answeredPromptly();
    // The exports are still open, only waiting for their clients.
    expect([...stalled, ...more].filter((s) => s.socket.destroyed)).toEqual([]);
  }, 60_000);

  it('allow two at a time per workspace and four per process: one more is a 429 with Retry-After, and a slot is free again once an export ends or its client goes', async () => {
    const a = await workspace(ROWS);
    const other = await workspace(1);
    const [first, second] = await Promise.all([
      stalledExport(api.current.url, a.cookie),
      stalledExport(api.current.url, a.cookie),
    ]);
    expect([first.statusLine, second.statusLine]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);

    const third = await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(third.body).toEqual({
      error: {
        type: 'rate_limit_exceeded',
        message: expect.stringMatching(/^Too many CSV exports at once: at most 2 at a time for a workspace\./),
      },
    });
    // The campaigns and customers exports count too; another workspace is not held by this one's.
    expect((await call('GET', '/campaigns/export.csv', { cookie: a.cookie })).status).toBe(429);
    const customers = await call('GET', '/customers/export.csv', { cookie: a.cookie });
    expect([customers.status, customers.headers.get('retry-after')]).toEqual([429, '5']);
    expect((await call('GET', '/cancel_sessions/export.csv', { cookie: other.cookie })).status).toBe(200);

    // Four running in the process, two of another workspace's besides: a fifth is refused, whoever asks.
    const b = await workspace(ROWS);
    const ofB = await Promise.all([b, b].map((w) => stalledExport(api.current.url, w.cookie)));
    const fifth = await call('GET', '/cancel_sessions/export.csv', { cookie: other.cookie });
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get('retry-after')).toBe('5');
    expect(fifth.body.error.message).toBe('Too many CSV exports are running. Wait a moment and try again.');
    for (const s of ofB) s.socket.destroy();
    const otherExported = async () =>
      (await call('GET', '/cancel_sessions/export.csv', { cookie: other.cookie })).status === 200;
    await eventually("another workspace's export is served once the process has room", otherExported);

    // A client that goes away frees its slot.
    first.socket.destroy();
    const exported = async () => (await call('GET', '/campaigns/export.csv', { cookie: a.cookie })).status === 200;
    await eventually('an export is served once a client went away', exported);
    // So does an export read to its end: one after another, each of them is served.
    for (let i = 0; i < 3; i += 1) {
      const whole = await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie });
      expect(whole.status).toBe(200);
      expect(whole.text.trimEnd().split('\n')).toHaveLength(ROWS + 1);
    }
    second.socket.destroy();
  }, 60_000);
});

describe('an export whose only page its client has not taken', () => {
  it('keeps its slot until the client takes it: another beyond the two is a 429 meanwhile', async () => {
    const a = await workspace(ONE_PAGE_ROWS, LONGEST_FEEDBACK);
    const [first, second] = await Promise.all([
      stalledExport(api.current.url, a.cookie),
      stalledExport(api.current.url, a.cookie),
    ]);
    expect([first.statusLine, second.statusLine]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    await sleep(500); // both pages are written, as far as the sockets take them
    expect((await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie })).status).toBe(429);

    // Once a client has taken its page (the closing chunk came), its slot is free again.
    const received: Buffer[] = [first.first];
    first.socket.on('data', (chunk: Buffer) => received.push(chunk));
    first.socket.resume();
    await eventually('the first client has the whole download', () =>
      Buffer.concat(received).toString('latin1').endsWith(LAST_CHUNK),
    );
    const exported = async () =>
      (await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie })).status === 200;
    await eventually('an export is served once a client took its page', exported);
  }, 60_000);
});

describe('HEAD on an export', () => {
  it('answers what its GET would, headers only, without reading the list or taking a slot', async () => {
    const a = await workspace(ROWS);
    const today = new Date().toISOString().slice(0, 10);
    for (const [path, filename] of [
      ['/cancel_sessions/export.csv', `cancel-sessions-${today}.csv`],
      ['/campaigns/export.csv', `campaigns-${today}.csv`],
      ['/customers/export.csv', `customers-${today}.csv`],
    ] as const) {
      const head = await call('HEAD', path, { cookie: a.cookie });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(head.headers.get('content-disposition')).toBe(`attachment; filename="${filename}"`);
      expect(head.text).toBe('');
    }
    // The HEADs took no slot: two exports still start.
    const held = await Promise.all([a, a].map((w) => stalledExport(api.current.url, w.cookie)));
    expect(held.map((s) => s.statusLine)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    // With the workspace's two slots taken, a HEAD gets the 429 its GET would, and when to try again.
    const refused = await call('HEAD', '/cancel_sessions/export.csv', { cookie: a.cookie });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie })).status).toBe(429);
    expect((await call('HEAD', '/customers/export.csv', { cookie: a.cookie })).status).toBe(429);

    // Its filters are checked as a GET's are.
    expect((await call('HEAD', '/cancel_sessions/export.csv?reason=x', { cookie: a.cookie })).status).toBe(400);
    expect((await call('HEAD', '/customers/export.csv?tag=', { cookie: a.cookie })).status).toBe(400);
    for (const { socket } of held) socket.destroy();
    await eventually(
      'a HEAD is answered once the slots are free',
      async () => (await call('HEAD', '/cancel_sessions/export.csv', { cookie: a.cookie })).status === 200,
    );
    // And no query runs: with the list's query failing, a HEAD is still answered.
    await withoutFeedbackColumn(async () => {
      expect((await call('HEAD', '/cancel_sessions/export.csv', { cookie: a.cookie })).status).toBe(200);
    });
  }, 60_000);
});

/** Runs `body` while cancel_sessions.feedback is renamed away, so that the export's query fails. */
async function withoutFeedbackColumn(body: () => Promise<void>): Promise<void> {
  await api.current.db.raw('ALTER TABLE cancel_sessions RENAME COLUMN feedback TO feedback_gone');
  try {
    await body();
  } finally {
    await api.current.db.raw('ALTER TABLE cancel_sessions RENAME COLUMN feedback_gone TO feedback');
  }
}

describe('an export whose first page cannot be read', () => {
  it('is answered with the JSON error, not a cut connection, and frees its slot', async () => {
    const a = await workspace(3);
    await withoutFeedbackColumn(async () => {
      for (let i = 0; i < 3; i += 1) {
        const reply = await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie });
        expect(reply.status).toBe(500);
        expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
        expect(reply.headers.get('content-disposition')).toBeNull();
        expect(reply.body).toEqual({
          error: {
            type: 'database_error',
            message: 'The server failed to complete the request. Retry the request shortly.',
          },
        });
      }
    });
    expect((await call('GET', '/cancel_sessions/export.csv', { cookie: a.cookie })).status).toBe(200);
  });
});

describe('a CSV export that stays stalled', () => {
  it('is cut after stallMs without a drain, and logged once', async () => {
    const { workspaceId } = await workspace(ROWS);
    const { logger, entries } = capturedLogger();
    const server = await exportServer(workspaceId, logger, { stallMs: 500 });
    try {
      const { socket, statusLine, first } = await stalledExport(server.url, 'none=1', '/export.csv');
      expect(statusLine).toBe('HTTP/1.1 200 OK');
      const stalls = () => entries().filter((entry) => /stalled/.test(String(entry.msg)));
      await eventually('the stall is logged', () => stalls().length > 0);
      // Read what was sent before the cut: the download ends short of its last rows, without
      // the chunked body's closing chunk.
      const received = await readUntilClosed(socket, first);
      // (Booleans: a failure must not print megabytes of CSV.)
      expect(received.endsWith(LAST_CHUNK)).toBe(false);
      expect(received.includes(`${FEEDBACK}${ROWS}"`)).toBe(true); // the newest row came
      expect(received.includes(`${FEEDBACK}1"`)).toBe(false); // the oldest never did
      await sleep(600); // another stallMs: the export is over, and said so once
      expect(stalls()).toHaveLength(1);
      expect(stalls()[0]).toMatchObject({ level: 'warn', filename: 'cancel-sessions.csv', stall_ms: 500 });
      expect(await connectionsInClientRead()).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('is cut after stallMs when its client never takes the last page, even the only one, and logged', async () => {
    const { workspaceId } = await workspace(ONE_PAGE_ROWS, LONGEST_FEEDBACK);
    const { logger, entries } = capturedLogger();
    const server = await exportServer(workspaceId, logger, { stallMs: 500 });
    try {
      const { socket, statusLine, first } = await stalledExport(server.url, 'none=1', '/export.csv');
      expect(statusLine).toBe('HTTP/1.1 200 OK');
      const stalls = () => entries().filter((entry) => /stalled/.test(String(entry.msg)));
      await eventually('the stall is logged', () => stalls().length > 0, 3_000);
      expect(stalls()[0]).toMatchObject({ level: 'warn', filename: 'cancel-sessions.csv', stall_ms: 500 });
      const received = await readUntilClosed(socket, first);
      expect(received.endsWith(LAST_CHUNK)).toBe(false);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('a CSV export read too slowly', () => {
  it('is cut once its download averages less than minBytesPerSecond after graceMs, though every page drains within stallMs, and logged', async () => {
    const { workspaceId } = await workspace(ROWS);
    const { logger, entries } = capturedLogger();
    // 1 MB/s after half a second, against a client taking some 100 KB/s: each page (about
    // 550 KB) drains in seconds, far within the default stallMs of 30 s.
    const server = await exportServer(workspaceId, logger, { minBytesPerSecond: 1_000_000, graceMs: 500 });
    try {
      const { socket, statusLine, first } = await stalledExport(server.url, 'none=1', '/export.csv');
      expect(statusLine).toBe('HTTP/1.1 200 OK');
      const received: Buffer[] = [first];
      let throttled = true;
      socket.on('data', (chunk: Buffer) => {
        received.push(chunk);
        if (!throttled) return;
        socket.pause();
        setTimeout(() => socket.resume(), chunk.length / 100); // 100 bytes a millisecond
      });
      socket.resume();
      const cuts = () => entries().filter((entry) => /CSV export/.test(String(entry.msg)));
      // Read to its end at this pace, the export (some 25 MB) would take four minutes.
      await eventually('the slow download is cut', () => cuts().length > 0, 20_000);
      expect(cuts()).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: expect.stringMatching(/^CSV export too slow/),
          filename: 'cancel-sessions.csv',
          min_bytes_per_second: 1_000_000,
        }),
      ]);
      // What the sockets still hold is read at once: the download ends short.
      throttled = false;
      socket.resume();
      if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
      expect(Buffer.concat(received).toString('latin1').endsWith(LAST_CHUNK)).toBe(false);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('an export read page by page', () => {
  it('writes every row that existed when it began exactly once, in order, whatever is inserted meanwhile', async () => {
    const { workspaceId } = await workspace(0);
    const db = api.current.db;
    const [customer] = await db('customers').where({ workspace_id: workspaceId }).select('id');
    const session = (at: string) => ({
      workspace_id: workspaceId,
      customer_id: customer.id,
      outcome: 'canceled',
      reason_code: 'other',
      monthly_mrr_cents: 1,
      currency: 'usd',
      created_at: new Date(at),
      ended_at: new Date(at),
    });
    // Ten sessions, four of them at one instant: pages of three end inside that group.
    const times = ['01', '02', '03', '03', '03', '03', '04', '05', '06', '07'];
    await db('cancel_sessions').insert(times.map((second) => session(`2026-01-01T00:00:${second}.000Z`)));
    const before = await keysetOrdered(
      cancelSessionListQuery(db, workspaceId, {}),
      CANCEL_SESSION_SORTS.order({}),
      's.id',
    ).pluck('s.id');

    let text = '';
    let inserted = 0;
    const sink = new Writable({
      highWaterMark: 1, // every page waits for a drain, where the inserts land
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        // Between pages: a newer session, and one in the group of equal instants.
        inserted += 2;
        db('cancel_sessions')
          .insert([session('2026-02-01T00:00:00.000Z'), session('2026-01-01T00:00:03.000Z')])
          .then(() => done(), done);
      },
    });
    const list = {
      query: () => cancelSessionListQuery(db, workspaceId, {}),
      order: CANCEL_SESSION_SORTS.order({}),
      idColumn: 's.id',
    };
    expect(await writeCsvPages(sink, list, CANCEL_SESSION_EXPORT_COLUMNS, { pageSize: 3 })).toBe('done');

    expect(inserted).toBeGreaterThanOrEqual(8);
    const ids = text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]!);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => before.includes(id))).toEqual(before);
  });

  it('leaves out a row changed out of its filter before its page is read, and writes one changed into it', async () => {
    const { workspaceId } = await workspace(0);
    const db = api.current.db;
    const [customer] = await db('customers').where({ workspace_id: workspaceId }).select('id');
    const seconds = ['01', '02', '03', '04', '05', '06', '07', '08', '09'];
    const ids: string[] = await db('cancel_sessions')
      .insert(
        seconds.map((second) => ({
          workspace_id: workspaceId,
          customer_id: customer.id,
          outcome: second === '02' ? 'abandoned' : 'canceled',
          reason_code: 'other',
          monthly_mrr_cents: 1,
          currency: 'usd',
          created_at: new Date(`2026-01-01T00:00:${second}.000Z`),
          ended_at: new Date(`2026-01-01T00:00:${second}.000Z`),
        })),
      )
      .returning('id')
      .then((rows: Array<{ id: string }>) => rows.map((row) => row.id));
    const [at02, at03] = [ids[1]!, ids[2]!];

    let text = '';
    let changed = false;
    const sink = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        if (changed) return done();
        // After the first page (09, 08, 07): 03 leaves the filter, 02 enters it.
        changed = true;
        Promise.all([
          db('cancel_sessions').where({ id: at03 }).update({ outcome: 'abandoned' }),
          db('cancel_sessions').where({ id: at02 }).update({ outcome: 'canceled' }),
        ]).then(() => done(), done);
      },
    });
    const list = {
      query: () => cancelSessionListQuery(db, workspaceId, { outcome: 'canceled' }),
      order: CANCEL_SESSION_SORTS.order({}),
      idColumn: 's.id',
    };
    expect(await writeCsvPages(sink, list, CANCEL_SESSION_EXPORT_COLUMNS, { pageSize: 3 })).toBe('done');
    const written = text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]!);
    expect(written).toEqual([...ids].reverse().filter((id) => id !== at03));
  });
});
