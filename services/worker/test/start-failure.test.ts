import { describe, expect, it } from '@jest/globals';
import { MIGRATIONS } from '@retention/db';
import {
  LEFT_OPEN,
  redisKeyPrefix,
  reportOpenAtExit,
  runId,
  startService,
  TEST_REDIS_URL,
  useTakenPort,
  useTestDatabase,
  withEmptyDatabase,
  withTestDatabase,
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

describe('a worker on a database that lacks a migration of this release', () => {
  const latest = MIGRATIONS.at(-1)!.name;

  it('never migrated: exits 1 in one line naming the database and `npm run migrate`, closing all it opened', () =>
    withEmptyDatabase(async (empty) => {
      const worker = startWorker({ DATABASE_URL: empty.url });
      expect(await worker.exited).toBe(1);
      expect(worker.output()).toMatch(
        new RegExp(
          `worker failed to start: the database of \\S+/${empty.name} is not migrated \\(${MIGRATIONS.length} migrations are not applied, from 0001-tenancy\\); apply the migrations with \`npm run migrate\``,
        ),
      );
      // That line alone: no SQL error logged by a loop that got to run.
      expect(worker.output().trim().split('\n')).toHaveLength(1);
      expect(worker.output()).not.toMatch(LEFT_OPEN);
    }));

  it('missing the latest migration: exits 1 naming it', () =>
    withTestDatabase(async (behind) => {
      await behind.db('knex_migrations').where({ name: latest }).delete();
      const worker = startWorker({ DATABASE_URL: behind.url });
      expect(await worker.exited).toBe(1);
      expect(worker.output()).toContain(`is not migrated (migration ${latest} is not applied)`);
      expect(worker.output()).not.toMatch(LEFT_OPEN);
    }));

  it('with a migration this release does not know (a newer release migrated it during a rolling deploy): starts', () =>
    withTestDatabase(async (ahead) => {
      await ahead
        .db('knex_migrations')
        .insert({ name: '9999-from-a-newer-release', batch: 999, migration_time: new Date() });
      const worker = startWorker({ DATABASE_URL: ahead.url });
      await worker.waitFor(/worker started/);
      expect(await worker.stop()).toBe(0);
    }));
});
