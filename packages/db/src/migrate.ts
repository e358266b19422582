import type { Knex } from 'knex';
import pg from 'pg';
import { pgErrorCode, type Db } from './connection.js';
import { describeConnectionFailure, describeNotMigrated } from './diagnostics.js';
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
  return { migrationSource, tableName: MIGRATIONS_TABLE };
}

/** Where knex records the migrations applied, one row each. */
const MIGRATIONS_TABLE = 'knex_migrations';

/**
 * Brings the schema to the latest version; returns the names of the migrations applied.
 * `secretsKey` (config.secretsKey, SECRETS_KEY) seals the secrets a migration moves to rest
 * (0019 seals the webhook signing secrets): without a valid one nothing is run, and the error
 * names SECRETS_KEY.
 */
export async function migrateLatest(db: Db, context: MigrationContext): Promise<string[]> {
  requireSecretsKey(context);
  return oneMigrationAtATime(db, async () => {
    const [, applied] = (await db.migrate.latest(migrationConfig(context))) as [number, string[]];
    return applied;
  });
}

/** The advisory lock that migrations take, whoever runs them: any bigint, the same every release. */
const MIGRATIONS_ADVISORY_LOCK = 7_240_190_019;

/**
 * Runs `work` once no other process of this service is migrating the same database. knex's own
 * lock (knex_migrations_lock) does not wait: a second `migrate` at the same moment failed at
 * once, on "Migration table is already locked" or, on a new database, while both created
 * knex's tables ('type "knex_migrations" already exists'). This one waits, on a connection of
 * its own outside the pool (the migration may have a pool of one), and ends with it, so a
 * migration killed halfway leaves no lock behind. The second run then finds nothing pending.
 */
async function oneMigrationAtATime<T>(db: Db, work: () => Promise<T>): Promise<T> {
  const client = db.client as Knex.Client;
  const connection = (await client.acquireRawConnection()) as pg.Client;
  try {
    await connection.query('SELECT pg_advisory_lock($1)', [MIGRATIONS_ADVISORY_LOCK]);
    return await work();
  } finally {
    // Closing the session releases its lock.
    await client.destroyRawConnection(connection).catch(() => undefined);
  }
}

/** Undoes every migration, newest first; returns the names undone. Needs the key as migrateLatest does. */
export async function rollbackAll(db: Db, context: MigrationContext): Promise<string[]> {
  requireSecretsKey(context);
  return oneMigrationAtATime(db, async () => {
    const [, undone] = (await db.migrate.rollback(migrationConfig(context), true)) as [number, string[]];
    return undone;
  });
}

export async function pendingMigrations(db: Db): Promise<string[]> {
  const [, pending] = (await db.migrate.list(migrationConfig())) as [unknown[], Migration[]];
  return pending.map((migration) => migration.name);
}

/**
 * The migrations of this release the database has not had, in order; every one of them when
 * it was never migrated. Read-only, unlike knex's `migrate.list`, which creates its tables:
 * the services ask this at start, and must not touch a database they will refuse.
 *
 * Migrations the database has had that this release does not know are no concern of it: a
 * newer release migrated the database during a rolling deploy, and (docs/upgrading.md) its
 * schema still serves this release until the new processes replace these.
 */
export async function unappliedMigrations(db: Db): Promise<string[]> {
  let applied: Set<string>;
  try {
    const rows: Array<{ name: string }> = await db(MIGRATIONS_TABLE).select('name');
    applied = new Set(rows.map((row) => row.name));
  } catch (error) {
    if (pgErrorCode(error) === '42P01')
      applied = new Set(); // undefined_table: never migrated
    else throw error;
  }
  return MIGRATIONS.map((migration) => migration.name).filter((name) => !applied.has(name));
}

/**
 * What the API and the worker check of their database at start, one error in words each: it
 * answers (describeConnectionFailure), and it has every migration of this release, in the words
 * the CLI uses for one never migrated (describeNotMigrated), so that they stop at once instead
 * of answering 500 and logging SQL errors on every poll.
 */
export async function requireUsableDatabase(db: Db, databaseUrl: string): Promise<void> {
  try {
    await db.raw('SELECT 1');
  } catch (error) {
    throw new Error(describeConnectionFailure('PostgreSQL', databaseUrl, error));
  }
  const missing = await unappliedMigrations(db);
  if (missing.length > 0) throw new Error(describeNotMigrated(databaseUrl, missing));
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
      if (createdMeanwhile(error)) return false;
      throw error;
    }
  });
}

/**
 * CREATE DATABASE failed because another process (a second `migrate`) created it between our
 * look and our CREATE: duplicate_database, or, when both CREATEs ran at the same moment, the
 * unique index of pg_database's names. Either way it exists now, which is what was asked.
 */
function createdMeanwhile(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (code === '42P04') return true; // duplicate_database
  return (
    code === '23505' && // unique_violation
    typeof error === 'object' &&
    error !== null &&
    'constraint' in error &&
    error.constraint === 'pg_database_datname_index'
  );
}

/** Drops the database named in `databaseUrl`, if it exists, closing its connections: for throw-away databases. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  await withMaintenanceClient(databaseUrl, (client, name) =>
    client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  );
}
