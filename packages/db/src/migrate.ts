import type { Knex } from 'knex';
import pg from 'pg';
import { pgErrorCode, type Db } from './connection.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { requireSecretsKey, type MigrationContext } from './migrations/context.js';

/**
 * The migrations as knex runs them: each is handed the context (SECRETS_KEY, for the
 * migrations that seal or open secrets at rest) beside its transaction.
 */
function migrationConfig(context?: MigrationContext): Knex.MigratorConfig {
  const migrationSource: Knex.MigrationSource<Migration> = {
    getMigrations: () => Promise.resolve([...MIGRATIONS]),
    getMigrationName: (migration) => migration.name,
    getMigration: (migration) =>
      Promise.resolve({
        up: (knex: Knex) => migration.up(knex, context),
        down: (knex: Knex) => migration.down(knex, context),
      }),
  };
  return { migrationSource, tableName: 'knex_migrations' };
}

/**
 * Brings the schema to the latest version; returns the names of the migrations applied.
 * `secretsKey` (config.secretsKey, SECRETS_KEY) seals the secrets a migration moves to rest
 * (0019 seals the webhook signing secrets): without a valid one nothing is run, and the error
 * names SECRETS_KEY.
 */
export async function migrateLatest(db: Db, context: MigrationContext): Promise<string[]> {
  requireSecretsKey(context);
  const [, applied] = (await db.migrate.latest(migrationConfig(context))) as [number, string[]];
  return applied;
}

/** Undoes every migration, newest first; returns the names undone. Needs the key as migrateLatest does. */
export async function rollbackAll(db: Db, context: MigrationContext): Promise<string[]> {
  requireSecretsKey(context);
  const [, undone] = (await db.migrate.rollback(migrationConfig(context), true)) as [number, string[]];
  return undone;
}

export async function pendingMigrations(db: Db): Promise<string[]> {
  const [, pending] = (await db.migrate.list(migrationConfig())) as [unknown[], Migration[]];
  return pending.map((migration) => migration.name);
}

/** The database `databaseUrl` names, and a client of the server's `postgres` maintenance database. */
async function withMaintenanceClient<T>(
  databaseUrl: string,
  work: (client: pg.Client, name: string) => Promise<T>,
): Promise<T> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client, name);
  } finally {
    await client.end();
  }
}

/**
 * Creates the database named in `databaseUrl` when it does not exist, connecting to the
 * server's `postgres` maintenance database with the same credentials.
 * Returns true when it created the database.
 */
export function ensureDatabase(databaseUrl: string): Promise<boolean> {
  return withMaintenanceClient(databaseUrl, async (client, name) => {
    try {
      const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (existing.rowCount) return false;
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (error) {
      if (pgErrorCode(error) === '42P04') return false; // created by a concurrent process
      throw error;
    }
  });
}

/** Drops the database named in `databaseUrl`, if it exists, closing its connections: for throw-away databases. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  await withMaintenanceClient(databaseUrl, (client, name) =>
    client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  );
}
