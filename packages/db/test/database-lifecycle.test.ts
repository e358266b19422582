import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { dropDatabase, ensureDatabase } from '@retention/db';
import { databaseNamePrefix, databaseUrl, runId, TEST_POSTGRES_URL } from '@retention/testkit';

async function exists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    return Boolean((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount);
  } finally {
    await admin.end();
  }
}

describe('ensureDatabase and dropDatabase', () => {
  it('create a missing database once, and drop it even while a client is connected', async () => {
    const name = `${databaseNamePrefix(runId())}${randomBytes(4).toString('hex')}`;
    const url = databaseUrl(name);
    expect(await ensureDatabase(url)).toBe(true);
    expect(await ensureDatabase(url)).toBe(false);

    const connected = new pg.Client({ connectionString: url });
    connected.on('error', () => {}); // the drop terminates it
    await connected.connect();
    await dropDatabase(url);
    expect(await exists(name)).toBe(false);
    await dropDatabase(url); // already gone: nothing to do
    await connected.end().catch(() => {});
  });
});
