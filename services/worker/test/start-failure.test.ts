import { describe, expect, it } from '@jest/globals';
import {
  LEFT_OPEN,
  redisKeyPrefix,
  reportOpenAtExit,
  runId,
  startService,
  TEST_REDIS_URL,
  useTakenPort,
  useTestDatabase,
} from '@retention/testkit';

/**
 * A worker whose start fails after it opened PostgreSQL and Redis closes everything it opened
 * and ends by itself, exit code 1, naming the problem. main.ts no longer ends a failed start
 * with process.exit: a connection left open keeps the process running, until a guard ends it
 * five seconds later and says so; and the process reports what it still had open as it exits
 * (reportOpenAtExit). Those lines are what these tests look for.
 */

const database = useTestDatabase();

function startWorker(env: Record<string, string>) {
  return startService('services/worker/src/main.ts', {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-start-failure`,
    WORKER_PORT: '0',
    ...reportOpenAtExit(),
    ...env,
  });
}

describe('a worker whose start fails', () => {
  const taken = useTakenPort();

  it('on a setting refused while the worker is built (a throw, after Postgres and Redis opened), closes them and exits 1 naming it', async () => {
    // A password pasted into SMTP_URL as it is: the mailer, built after the worker's Redis
    // connections and its delivery queue, cannot decode it.
    const worker = startWorker({ SMTP_URL: 'smtp://alerts:50%off@mail.example.com:587' });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain('worker failed to start: Invalid SMTP_URL: ');
    expect(worker.output()).toContain('not percent-encoded');
    expect(worker.output()).not.toContain('50%off');
    expect(worker.output()).not.toMatch(LEFT_OPEN);
    expect(worker.output()).not.toMatch(/\n\s+at /);
  });

  it('when WORKER_PORT is taken (everything else started), closes all of it and exits 1 naming the port', async () => {
    const port = taken.port;
    const worker = startWorker({ WORKER_PORT: String(port) });
    expect(await worker.exited).toBe(1);
    expect(worker.output()).toContain(`worker failed to start: cannot listen on WORKER_PORT ${port}`);
    expect(worker.output()).not.toMatch(LEFT_OPEN);
  });
});
