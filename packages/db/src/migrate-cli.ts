/**
 * `npm run migrate`: creates the database at DATABASE_URL if it is missing and applies every
 * pending migration. Prints one JSON line; exits 1 with a readable message on failure.
 *
 *   migrate [--wait 30s]
 *
 * `--wait` keeps trying to reach the server for that long before failing (docker compose
 * passes it: the server may accept connections a moment after it is reported healthy);
 * without it an unreachable server fails at once.
 *
 * Runs at the same moment are safe (two deploy jobs): the database is created by one and found
 * by the other, and the migrations run one run at a time; the later run finds nothing pending.
 *
 * SECRETS_KEY is required (the configuration says so before anything is touched): migration
 * 0019 seals the webhook signing secrets already stored with it.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, parseDuration, redactUrl } from '@retention/core';
import { createDb } from './connection.js';
import { describeConnectionFailure } from './diagnostics.js';
import { ensureDatabase, migrateLatest } from './migrate.js';
import { retryWhileUnreachable } from './retry-while-unreachable.js';

function waitMs(): number {
  const { values } = parseArgs({ options: { wait: { type: 'string', default: '0s' } } });
  const millis = parseDuration(values.wait);
  if (millis === null) throw new ConfigError('--wait', `"${values.wait}" is not a duration such as 30s`);
  return millis;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const address = redactUrl(config.databaseUrl);
  let told = false;
  const created = await retryWhileUnreachable(() => ensureDatabase(config.databaseUrl), {
    forMs: waitMs(),
    onRetry: (error) => {
      if (told) return;
      told = true;
      process.stderr.write(`waiting for PostgreSQL at ${address} (${(error as Error).message})\n`);
    },
  });
  const db = createDb(config.databaseUrl, { poolMax: 1, applicationName: 'retention-migrate' });
  try {
    const applied = await migrateLatest(db, { secretsKey: config.secretsKey });
    process.stdout.write(`${JSON.stringify({ database: address, created_database: created, applied })}\n`);
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
