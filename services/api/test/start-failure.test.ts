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
 * An API whose start fails after it opened PostgreSQL and Redis closes everything it opened
 * and ends by itself, exit code 1, naming the problem (runServiceStart, which the worker's
 * start shares). A connection left open would keep it running until a guard ends it five
 * seconds later, saying so; and the process reports what it still had open as it exits
 * (reportOpenAtExit), which catches a leak that an early process.exit would hide.
 */

const database = useTestDatabase();

function startApi(env: Record<string, string>) {
  return startService('services/api/src/main.ts', {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-api-start-failure`,
    PORT: '0',
    API_INTERNAL_PORT: '0',
    ...reportOpenAtExit(),
    ...env,
  });
}

/** The exit code, once the process has ended; it must end soon after saying it failed. */
async function exitAfterFailure(api: ReturnType<typeof startApi>): Promise<number | null> {
  await api.waitFor(/api failed to start: /);
  const failed = Date.now();
  const code = await api.exited;
  expect(Date.now() - failed).toBeLessThan(3_000);
  return code;
}

describe('an API whose start fails', () => {
  const taken = useTakenPort();

  it('on a setting refused while the app is built (a throw, after Postgres and Redis opened), closes them and exits 1 naming it', async () => {
    // A password pasted into SMTP_URL as it is: the dashboard's mailer cannot decode it.
    const api = startApi({ SMTP_URL: 'smtp://alerts:50%off@mail.example.com:587' });
    expect(await exitAfterFailure(api)).toBe(1);
    expect(api.output()).toContain('api failed to start: Invalid SMTP_URL: ');
    expect(api.output()).toContain('not percent-encoded');
    expect(api.output()).not.toContain('50%off');
    expect(api.output()).not.toMatch(LEFT_OPEN);
    expect(api.output()).not.toMatch(/\n\s+at /);
  });

  it('when PORT is taken, closes all it opened and exits 1 naming PORT', async () => {
    const port = taken.port;
    const api = startApi({ PORT: String(port) });
    expect(await exitAfterFailure(api)).toBe(1);
    expect(api.output()).toContain(`api failed to start: cannot listen on PORT ${port}`);
    expect(api.output()).not.toMatch(LEFT_OPEN);
  });

  it('when API_INTERNAL_PORT is taken (the public port already listening), closes both and exits 1 naming it', async () => {
    const port = taken.port;
    const api = startApi({ API_INTERNAL_PORT: String(port) });
    expect(await exitAfterFailure(api)).toBe(1);
    expect(api.output()).toContain(`api failed to start: cannot listen on API_INTERNAL_PORT ${port}`);
    expect(api.output()).not.toMatch(LEFT_OPEN);
  });
});

describe('an API on a database that lacks a migration of this release', () => {
  const latest = MIGRATIONS.at(-1)!.name;

  it('never migrated: exits 1 in one line naming the database and `npm run migrate`, closing all it opened, touching nothing', () =>
    withEmptyDatabase(async (empty) => {
      const api = startApi({ DATABASE_URL: empty.url });
      expect(await exitAfterFailure(api)).toBe(1);
      expect(api.output()).toMatch(
        new RegExp(
          `api failed to start: the database of \\S+/${empty.name} is not migrated \\(${MIGRATIONS.length} migrations are not applied, from 0001-tenancy\\); apply the migrations with \`npm run migrate\``,
        ),
      );
      expect(api.output()).not.toMatch(LEFT_OPEN);
      expect(api.output()).not.toMatch(/\n\s+at /);
      // Asking did not create knex's tables in a database the API refused.
      const tables = await empty.db.raw("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
      expect(tables.rows[0].n).toBe(0);
    }));

  it('missing the latest migration: exits 1 naming it', () =>
    withTestDatabase(async (behind) => {
      await behind.db('knex_migrations').where({ name: latest }).delete();
      const api = startApi({ DATABASE_URL: behind.url });
      expect(await exitAfterFailure(api)).toBe(1);
      expect(api.output()).toContain(
        `is not migrated (migration ${latest} is not applied); apply the migrations with \`npm run migrate\``,
      );
      expect(api.output()).not.toMatch(LEFT_OPEN);
    }));

  it('with a migration this release does not know (a newer release migrated it during a rolling deploy): starts', () =>
    withTestDatabase(async (ahead) => {
      await ahead
        .db('knex_migrations')
        .insert({ name: '9999-from-a-newer-release', batch: 999, migration_time: new Date() });
      const api = startApi({ DATABASE_URL: ahead.url });
      await api.waitFor(/API listening/);
      expect(await api.stop()).toBe(0);
    }));
});
