import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db } from '@retention/db';
import { databaseNamePrefix, databaseUrl, runId, TEST_POSTGRES_URL, templateDatabaseName } from './environment.js';

export interface TestDatabase {
  url: string;
  name: string;
  db: Db;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

async function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** A fresh, fully migrated database of its own, cloned from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const id = runId();
  const name = `${databaseNamePrefix(id)}${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) =>
    admin.query(
      `CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(templateDatabaseName(id))}`,
    ),
  );
  const url = databaseUrl(name);
  const db = createDb(url, { poolMax: 20 });
  return {
    url,
    name,
    db,
    async drop() {
      await db.destroy();
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    },
  };
}

/** An empty database with no schema at all, for migration tests. */
export async function createEmptyDatabase(): Promise<TestDatabase> {
  const name = `${databaseNamePrefix(runId())}${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  const url = databaseUrl(name);
  const db = createDb(url, { poolMax: 2 });
  return {
    url,
    name,
    db,
    async drop() {
      await db.destroy();
      await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
    },
  };
}

/** Runs `use` on a fresh, fully migrated database of its own, dropped afterwards whatever happens. */
export function withTestDatabase<T>(use: (database: TestDatabase) => Promise<T>): Promise<T> {
  return usingDatabase(createTestDatabase(), use);
}

/** Runs `use` on an empty database (no schema at all), dropped afterwards whatever happens. */
export function withEmptyDatabase<T>(use: (database: TestDatabase) => Promise<T>): Promise<T> {
  return usingDatabase(createEmptyDatabase(), use);
}

async function usingDatabase<T>(
  created: Promise<TestDatabase>,
  use: (database: TestDatabase) => Promise<T>,
): Promise<T> {
  const database = await created;
  try {
    return await use(database);
  } finally {
    await database.drop();
  }
}
