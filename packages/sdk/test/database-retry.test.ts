import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures } from '@retention/domain';
import { DatabaseError } from '@retention/sdk';
import { eventually, freePort, TEST_POSTGRES_URL, testSecretsKeyBytes } from '@retention/testkit';
import { useApi } from '../../../services/api/test/harness.js';
import { rejectionOf } from '../../../services/api/test/client-helpers.js';

/**
 * The API reaches this file's database through a TCP relay on a port of our own: closed,
 * the API answers 500 database_error; opened, the database is back.
 */
let relayPort = 0;
let relay: Server | undefined;
const relayed = new Set<Socket>();

beforeAll(async () => {
  relayPort = await freePort();
});

const api = useApi({
  databaseUrl: (url) => {
    const routed = new URL(url);
    routed.port = String(relayPort);
    return routed.toString();
  },
});

async function openRelay(): Promise<void> {
  const postgres = new URL(TEST_POSTGRES_URL);
  relay = createServer((socket) => {
    const upstream = createConnection(Number(postgres.port || 5432), postgres.hostname);
    for (const end of [socket, upstream]) {
      relayed.add(end);
      end.on('error', () => {
        socket.destroy();
        upstream.destroy();
      });
      end.on('close', () => relayed.delete(end));
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => relay!.listen(relayPort, '127.0.0.1', resolve));
}

async function closeRelay(): Promise<void> {
  for (const socket of relayed) socket.destroy();
  await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
  relay = undefined;
}

afterAll(closeRelay);

let token: string;
beforeAll(async () => {
  const result = await loadFixtures(api.current.db, testSecretsKeyBytes(), {
    workspaces: [{ key: 'w', tokens: [{ key: 't' }] }],
  });
  token = result.workspaces.w!.tokens.t!.token;
});

function databaseErrorsSince(mark: number): number {
  return api.current
    .logs()
    .slice(mark)
    .filter((line) => line.status === 500 && String(line.path).endsWith('/stats')).length;
}

describe('a 500 database_error', () => {
  it('is retried maxRetries times with back-off, then thrown as a DatabaseError', async () => {
    const mark = api.current.logs().length;
    const started = Date.now();
    const error = await rejectionOf(api.current.client(token, { maxRetries: 2 }).stats.retrieve());
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({ type: 'database_error', status: 500 });
    expect(error.message).toMatch(/retry/i);
    expect(databaseErrorsSince(mark)).toBe(3);
    // Two back-offs of at least 250 ms and 500 ms ("equal jitter" keeps half of each step).
    expect(elapsed).toBeGreaterThanOrEqual(750);
    expect(api.current.logs().some((line) => line.requestId === error.requestId)).toBe(true);
  });

  it('is never waited on for longer than maxRetryWaitSeconds in all', async () => {
    const mark = api.current.logs().length;
    const started = Date.now();
    const error = await rejectionOf(
      api.current.client(token, { maxRetries: 10, maxRetryWaitSeconds: 1 }).stats.retrieve(),
    );
    expect(error).toBeInstanceOf(DatabaseError);
    // Uncapped, ten back-offs would wait many seconds; the cap's 1 s plus three failing
    // requests on a loaded machine (1.7 s was seen beside a full test run) stays far under 3 s.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(databaseErrorsSince(mark)).toBeGreaterThanOrEqual(2);
  });

  it('is not retried with maxRetries 0', async () => {
    const mark = api.current.logs().length;
    const error = await rejectionOf(api.current.client(token, { maxRetries: 0 }).stats.retrieve());
    expect(error).toBeInstanceOf(DatabaseError);
    expect(databaseErrorsSince(mark)).toBe(1);
  });

  it('turns into the answer when the database comes back during the back-off', async () => {
    const mark = api.current.logs().length;
    const call = api.current.client(token, { maxRetries: 5 }).stats.retrieve();
    await eventually(() => databaseErrorsSince(mark) >= 1);
    await openRelay();
    const stats = await call;
    expect(stats.object).toBe('stats');
    expect(databaseErrorsSince(mark)).toBeGreaterThanOrEqual(1);
  });
});
