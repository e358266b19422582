/**
 * `npm run migrate`: creates the database at DATABASE_URL if it is missing and applies every
 * pending migration. Prints one JSON line; exits 1 with a readable message on failure.
 */
import { ConfigError, loadConfig, redactUrl } from '@retention/core';
import { createDb } from './connection.js';
import { describeConnectionFailure } from './diagnostics.js';
import { ensureDatabase, migrateLatest } from './migrate.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const created = await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, { poolMax: 1, applicationName: 'retention-migrate' });
  try {
    const applied = await migrateLatest(db);
    process.stdout.write(
      `${JSON.stringify({ database: redactUrl(config.databaseUrl), created_database: created, applied })}\n`,
    );
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? error.message
      : describeConnectionFailure('PostgreSQL', process.env.DATABASE_URL, error);
  process.stderr.write(`migrate failed: ${message}\n`);
  process.exitCode = 1;
});
