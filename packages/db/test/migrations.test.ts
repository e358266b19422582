import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { MIGRATIONS, migrateLatest, pendingMigrations, rollbackAll } from '@retention/db';
import {
  createEmptyDatabase,
  databaseNamePrefix,
  databaseUrl,
  REPO_ROOT,
  runId,
  TEST_POSTGRES_URL,
} from '@retention/testkit';

const run = promisify(execFile);

async function tables(db: Awaited<ReturnType<typeof createEmptyDatabase>>['db']): Promise<string[]> {
  const { rows } = await db.raw<{ rows: Array<{ tablename: string }> }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%' ORDER BY 1",
  );
  return rows.map((row) => row.tablename);
}

const EXPECTED_TABLES = [
  'api_tokens',
  'campaign_rollups',
  'cancel_session_rollups',
  'cancel_sessions',
  'customers',
  'events',
  'fx_rates',
  'reactivations',
  'recovery_campaigns',
  'recovery_time_rollups',
  'subscriptions',
  'trial_reminders',
  'users',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_endpoints',
  'winbacks',
  'workspaces',
];

describe('migrations', () => {
  it('build the whole schema on an empty database, roll every one back, and apply again', async () => {
    const database = await createEmptyDatabase();
    try {
      expect(await migrateLatest(database.db)).toEqual(MIGRATIONS.map((migration) => migration.name));
      expect(await tables(database.db)).toEqual(EXPECTED_TABLES);
      expect(await pendingMigrations(database.db)).toEqual([]);

      expect(await rollbackAll(database.db)).toEqual(MIGRATIONS.map((migration) => migration.name).reverse());
      expect(await tables(database.db)).toEqual([]);
      const { rows: functions } = await database.db.raw<{ rows: unknown[] }>(
        "SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace",
      );
      expect(functions).toEqual([]);

      expect(await migrateLatest(database.db)).toHaveLength(MIGRATIONS.length);
      expect(await tables(database.db)).toEqual(EXPECTED_TABLES);
      expect(await migrateLatest(database.db)).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  describe('npm run migrate', () => {
    const name = `${databaseNamePrefix(runId())}migrate_cli`;
    afterAll(async () => {
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await admin.end();
    });

    it('creates a missing database and migrates it, then has nothing left to do', async () => {
      const env = { ...process.env, DATABASE_URL: databaseUrl(name) };
      const script = path.join(REPO_ROOT, 'packages/db/src/migrate-cli.ts');
      const first = await run(process.execPath, ['--import', 'tsx', script], { env, cwd: REPO_ROOT });
      expect(JSON.parse(first.stdout)).toMatchObject({
        created_database: true,
        applied: MIGRATIONS.map((m) => m.name),
      });
      const second = await run(process.execPath, ['--import', 'tsx', script], { env, cwd: REPO_ROOT });
      expect(JSON.parse(second.stdout)).toMatchObject({ created_database: false, applied: [] });
    });

    it('says which server it could not reach, without a stack trace', async () => {
      const env = { ...process.env, DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' };
      const script = path.join(REPO_ROOT, 'packages/db/src/migrate-cli.ts');
      const failure = await run(process.execPath, ['--import', 'tsx', script], { env, cwd: REPO_ROOT }).catch(
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure).toMatchObject({ code: 1 });
      const stderr = (failure as { stderr: string }).stderr;
      expect(stderr).toContain('cannot reach PostgreSQL at postgres://nobody:***@127.0.0.1:1/none');
      expect(stderr).toContain('compose.dev.yml up -d postgres redis');
      expect(stderr).not.toContain('secret');
      expect(stderr).not.toMatch(/\n\s+at /);
    });
  });
});
