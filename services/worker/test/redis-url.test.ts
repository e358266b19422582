import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  eventually,
  LEFT_OPEN,
  redisKeyPrefix,
  reportOpenAtExit,
  runId,
  startService,
  TEST_REDIS_URL,
  useTestDatabase,
} from '@retention/testkit';
import { createTestCertificate, type TestCertificate } from './support/certificate.js';
import { PrivateRedis } from './support/redis-server.js';

/**
 * REDIS_URL as the processes read it (docs/decisions.md, "REDIS_URL"). Its own parts reach
 * every connection: TLS (rediss://), a password that needed percent-encoding, a database
 * number. Its query options are refused at start, naming REDIS_URL: ioredis would merge them
 * over the options our connections need, and BullMQ refuses a blocking connection whose
 * maxRetriesPerRequest is not null.
 */

const database = useTestDatabase();
const PREFIX = `${redisKeyPrefix(runId())}-redis-url`;
let certificate: TestCertificate;
let redis: PrivateRedis;

beforeAll(async () => {
  certificate = await createTestCertificate();
  redis = await PrivateRedis.start({ tls: certificate, password: 'pa%ss:w@rd/1' });
});

afterAll(async () => {
  await redis?.stop();
  await certificate?.remove();
});

function start(entry: 'api' | 'worker', env: Record<string, string>) {
  return startService(`services/${entry}/src/main.ts`, {
    DATABASE_URL: database.current.url,
    REDIS_KEY_PREFIX: PREFIX,
    PORT: '0',
    WORKER_PORT: '0',
    ...reportOpenAtExit(),
    ...env,
  });
}

/** Each client connected to the private Redis (but the one asking): its name, database and last command. */
async function clients(): Promise<Array<{ name: string; db: number; cmd: string }>> {
  const admin = redis.connect();
  try {
    const list = (await admin.client('LIST')) as string;
    const self = Number(await admin.client('ID'));
    return list
      .trim()
      .split('\n')
      .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=', 2))) as Record<string, string>)
      .filter((client) => Number(client.id) !== self)
      .map((client) => ({ name: client.name ?? '', db: Number(client.db), cmd: client.cmd ?? '' }));
  } finally {
    admin.disconnect();
  }
}

describe('REDIS_URL', () => {
  it('over TLS, with a percent-encoded password and a database number, serves every connection of the API and the worker', async () => {
    const env = { REDIS_URL: `${redis.url}/3`, NODE_EXTRA_CA_CERTS: certificate.certPath };
    const worker = start('worker', env);
    const api = start('api', env);
    try {
      await Promise.all([worker.waitFor(/worker started/), api.waitFor(/API listening/)]);
      // Settled: BullMQ's connections (named after the queues) are there, and none is still
      // connecting (no command yet, so no database chosen).
      const connected = await eventually(async () => {
        const now = await clients();
        const bullmq = now.filter((client) => client.name.startsWith(`${PREFIX}:`));
        return bullmq.length >= 2 && now.every((client) => client.cmd !== 'NULL') ? now : undefined;
      });
      expect(connected.map((client) => client.name)).toEqual(
        expect.arrayContaining([
          'retention-api',
          'retention-worker',
          'retention-worker-producer',
          'retention-worker-probe',
        ]),
      );
      // BullMQ's own connections (duplicates of ours) included: nothing landed on another database.
      expect(connected.filter((client) => client.db !== 3)).toEqual([]);
    } finally {
      expect(await worker.stop()).toBe(0);
      expect(await api.stop()).toBe(0);
    }
    for (const service of [worker, api]) expect(service.output()).not.toMatch(/"level":"(warn|error|fatal)"/);
  });

  it('with a query option that would override our connections (BullMQ refuses maxRetriesPerRequest), stops the worker at start naming it', async () => {
    const worker = start('worker', { REDIS_URL: `${TEST_REDIS_URL}/?maxRetriesPerRequest=3` });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain(
      'worker failed to start: Invalid REDIS_URL: query options are not accepted (maxRetriesPerRequest)',
    );
    expect(worker.output()).not.toMatch(LEFT_OPEN);
    expect(worker.output()).not.toMatch(/\n\s+at /);
  });
});
