import { rm } from 'node:fs/promises';
import pg from 'pg';
import { Redis } from 'ioredis';
import { databaseNamePrefix, redisKeyPrefix, runId, TEST_POSTGRES_URL, TEST_REDIS_URL } from './environment.js';
import { BUNDLE_DIR_VARIABLE } from './process-bundle.js';

/** Drops every database and Redis key this run made, and its bundle, so runs never pile up. */
export default async function globalTeardown(): Promise<void> {
  const bundle = process.env[BUNDLE_DIR_VARIABLE];
  if (bundle) await rm(bundle, { recursive: true, force: true });
  const id = runId();
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [databaseNamePrefix(id)],
    );
    for (const { datname } of rows) {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }

  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisKeyPrefix(id)}*`, 'COUNT', 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
