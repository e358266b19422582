import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { openSecret, sealSecret } from '@retention/core';
import { connectProcessor, loadFixtures, OPERATOR, resealSecrets, rollSigningSecret } from '@retention/domain';
import type { Db, Transaction } from '@retention/db';
import {
  createTestDatabase,
  eventually,
  testSecretsKey,
  testSecretsKeyBytes,
  type TestDatabase,
} from '@retention/testkit';
import { cliWithEnv } from './helpers.js';

/**
 * `secrets reseal`, the last step of rotating SECRETS_KEY (docs/operator-cli.md, "Rotating the
 * key"): the secrets were sealed with the run's key (the old one); the CLI runs with a new
 * SECRETS_KEY and the old one as SECRETS_KEY_PREVIOUS.
 */

const oldKey = testSecretsKeyBytes();
const newKey = randomBytes(32);
const rotating = { SECRETS_KEY: newKey.toString('base64'), SECRETS_KEY_PREVIOUS: testSecretsKey() };
const keyring = { current: newKey, previous: oldKey };

const databases: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

/**
 * Every kind of stored secret, sealed with the old key: two endpoints, one of them rolled with
 * an overlap (so it has a previous secret), and a processor connection with its API key.
 */
async function storeSecrets(db: Db) {
  const fixtures = await loadFixtures(db, oldKey, {
    workspaces: [
      {
        key: 'A',
        users: [{ key: 'owner', email: 'owner@reseal.test', role: 'owner' }],
        webhooks: [
          { key: 'one', url: 'https://hooks.example.com/one' },
          { key: 'two', url: 'https://hooks.example.com/two' },
        ],
      },
    ],
  });
  const workspace = fixtures.workspaces.A!;
  const rolled = await rollSigningSecret(db, oldKey, {
    endpoint_id: workspace.webhooks.one!.id,
    actor_id: workspace.users.owner!,
    overlap_seconds: 3600,
  });
  const processor = {
    webhook_secret: `whsec_${randomBytes(20).toString('hex')}`,
    api_key: `rk_test_${randomBytes(20).toString('hex')}`,
  };
  await connectProcessor(
    db,
    oldKey,
    { workspace_id: workspace.id, provider: 'stripe', ...processor },
    'accepted',
    OPERATOR,
  );
  return {
    owner: workspace.users.owner!,
    endpoints: [workspace.webhooks.one!.id, workspace.webhooks.two!.id].sort(),
    /** The secrets in the clear, as every sealed column should open to, in a stable order. */
    plaintexts: [
      rolled.secret,
      workspace.webhooks.one!.secret,
      workspace.webhooks.two!.secret,
      processor.webhook_secret,
      processor.api_key,
    ].sort(),
  };
}

/** Every sealed value stored, ordered by table, row and column. */
async function sealedValues(db: Db): Promise<string[]> {
  const endpoints = await db('webhook_endpoints')
    .orderBy('id')
    .select('signing_secret_sealed', 'previous_signing_secret_sealed');
  const connections = await db('processor_connections').orderBy('id').select('webhook_secret_sealed', 'api_key_sealed');
  return [...endpoints, ...connections].flatMap((row) =>
    Object.values(row as Record<string, string | null>).filter((value): value is string => value !== null),
  );
}

/** What `key` alone opens them to, sorted: throws when it cannot open one. */
async function openedWith(db: Db, key: Buffer): Promise<string[]> {
  return (await sealedValues(db)).map((sealed) => openSecret(key, sealed)).sort();
}

const reseal = (database: TestDatabase, env: Record<string, string> = rotating) =>
  cliWithEnv(database.url, env, 'secrets', 'reseal');

describe('secrets reseal', () => {
  it('re-seals every kind of secret with SECRETS_KEY: each then opens with the new key alone, to the same secret', async () => {
    const database = await freshDatabase();
    const stored = await storeSecrets(database.db);

    const result = await reseal(database);
    expect(result.code).toBe(0);
    expect(result.json).toEqual({
      object: 'secrets_reseal',
      resealed: {
        signing_secrets: 2,
        previous_signing_secrets: 1,
        processor_webhook_secrets: 1,
        processor_api_keys: 1,
      },
      already_current: 0,
    });
    expect(await openedWith(database.db, newKey)).toEqual(stored.plaintexts);
    for (const sealed of await sealedValues(database.db)) expect(() => openSecret(oldKey, sealed)).toThrow();

    // Counts and nothing else: no secret, no key, sealed or not.
    const printed = result.stdout + result.stderr;
    for (const secret of [...stored.plaintexts, ...(await sealedValues(database.db))])
      expect(printed).not.toContain(secret);
    for (const key of [newKey, oldKey])
      for (const written of [key.toString('base64'), key.toString('hex')]) expect(printed).not.toContain(written);
  });

  it('is safe to run again: a second run finds every value already sealed with SECRETS_KEY and changes nothing', async () => {
    const database = await freshDatabase();
    const stored = await storeSecrets(database.db);
    expect((await reseal(database)).code).toBe(0);
    const afterFirst = await sealedValues(database.db);

    const again = await reseal(database);
    expect(again.code).toBe(0);
    expect(again.json).toEqual({
      object: 'secrets_reseal',
      resealed: {
        signing_secrets: 0,
        previous_signing_secrets: 0,
        processor_webhook_secrets: 0,
        processor_api_keys: 0,
      },
      already_current: 5,
    });
    expect(await sealedValues(database.db)).toEqual(afterFirst);
    // And, the rotation over, SECRETS_KEY alone (no previous key) finds nothing left to do.
    const alone = await reseal(database, { SECRETS_KEY: rotating.SECRETS_KEY });
    expect(alone.json).toMatchObject({ already_current: 5 });
    expect(await openedWith(database.db, newKey)).toEqual(stored.plaintexts);
  });

  it('refuses, changing nothing, when a secret opens with neither key: it names the keys and the row', async () => {
    const database = await freshDatabase();
    const { db } = database;
    await storeSecrets(db);
    // The processor's key, in the last table reseal visits: every endpoint comes before it.
    const connection = await db('processor_connections').first('id');
    await db('processor_connections')
      .where({ id: connection.id })
      .update({ api_key_sealed: sealSecret(randomBytes(32), 'rk_test_sealedUnderAThirdKey0000') });
    const before = await sealedValues(db);

    const refused = await reseal(database);
    expect(refused.code).toBe(1);
    expect(refused.error).toMatchObject({ type: 'conflict' });
    expect(refused.error!.message).toMatch(
      /1 stored secret\(s\) open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS/,
    );
    expect(refused.error!.message).toContain(`processor_connections ${connection.id} (processor_api_keys)`);
    expect(refused.error!.message).toMatch(/Nothing was re-sealed/);
    expect(refused.stderr).not.toMatch(/whsec_|rk_test_/);
    expect(await sealedValues(db)).toEqual(before);

    // Without SECRETS_KEY_PREVIOUS the old secrets open with no key either: refused, saying it is not set.
    const noPrevious = await reseal(database, { SECRETS_KEY: rotating.SECRETS_KEY });
    expect(noPrevious.code).toBe(1);
    expect(noPrevious.error!.message).toMatch(
      /5 stored secret\(s\) do not open with SECRETS_KEY, and SECRETS_KEY_PREVIOUS is not set/,
    );
    expect(await sealedValues(db)).toEqual(before);
  });

  it('stops at a malformed SECRETS_KEY_PREVIOUS, naming it and never its value, before touching anything', async () => {
    const database = await freshDatabase();
    await storeSecrets(database.db);
    const before = await sealedValues(database.db);
    const malformed = randomBytes(16).toString('base64');

    const result = await reseal(database, { ...rotating, SECRETS_KEY_PREVIOUS: malformed });
    expect(result.code).toBe(1);
    expect(result.error).toMatchObject({ type: 'invalid_param' });
    expect(result.error!.message).toMatch(/^Invalid SECRETS_KEY_PREVIOUS: must be 32 random bytes/);
    expect(result.stderr).not.toContain(malformed);
    expect(await sealedValues(database.db)).toEqual(before);
  });
});

describe('secrets reseal, batch by batch', () => {
  /**
   * Holds the row lock a Roll secret holds on the later endpoint, in a transaction of its own,
   * and runs `work` with the reseal (one row a batch) started behind it, once it waits.
   */
  async function withResealWaitingOn(
    db: Db,
    endpointId: string,
    work: (holder: { trx: Transaction; resealing: Promise<unknown> }) => Promise<void>,
  ) {
    const trx = await db.transaction();
    try {
      await trx('webhook_endpoints').where({ id: endpointId }).forNoKeyUpdate().first('id');
      const { rows } = await trx.raw<{ rows: Array<{ pid: number }> }>('SELECT pg_backend_pid() AS pid');
      const resealing = resealSecrets(db, keyring, 1);
      resealing.catch(() => undefined); // awaited by `work`
      await eventually(async () => {
        const waiting = await db.raw<{ rows: unknown[] }>(
          'SELECT pid FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))',
          [rows[0]!.pid],
        );
        return waiting.rows.length > 0 ? true : null;
      });
      await work({ trx, resealing });
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
  }

  it('never loses a Roll secret made while it runs: the batch waits for the row and keeps what was written', async () => {
    const database = await freshDatabase();
    const { db } = database;
    const stored = await storeSecrets(db);
    const later = stored.endpoints[1]!;

    await withResealWaitingOn(db, later, async ({ trx, resealing }) => {
      // What a process with the new key writes, as rollSigningSecret does, under the same lock.
      await trx('webhook_endpoints')
        .where({ id: later })
        .update({
          signing_secret_sealed: sealSecret(keyring, 'whsec_rolledDuringTheReseal000'),
          previous_signing_secret_sealed: null,
          previous_secret_expires_at: null,
        });
      await trx.commit();
      await resealing;
    });

    const row = await db('webhook_endpoints').where({ id: later }).first();
    expect(openSecret(newKey, row.signing_secret_sealed)).toBe('whsec_rolledDuringTheReseal000');
    // And every other value was re-sealed: the new key alone opens them all.
    await expect(openedWith(db, newKey)).resolves.toContain('whsec_rolledDuringTheReseal000');
  });

  it('stopped midway, leaves every row openable by one of the two keys; run again, it finishes', async () => {
    const database = await freshDatabase();
    const { db } = database;
    const stored = await storeSecrets(db);
    const [earlier, later] = stored.endpoints as [string, string];

    await withResealWaitingOn(db, later, async ({ resealing }) => {
      // The first batch (the earlier endpoint) is committed; the process dies waiting on the second.
      await db.raw(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      await expect(resealing).rejects.toThrow();
    });

    const opened = async (id: string, key: Buffer) => {
      const row = await db('webhook_endpoints').where({ id }).first();
      return [row.signing_secret_sealed, row.previous_signing_secret_sealed]
        .filter((sealed) => sealed !== null)
        .map((sealed) => openSecret(key, sealed));
    };
    await expect(opened(earlier, newKey)).resolves.not.toHaveLength(0);
    await expect(opened(later, oldKey)).resolves.not.toHaveLength(0);
    expect((await sealedValues(db)).map((sealed) => openSecret(keyring, sealed)).sort()).toEqual(stored.plaintexts);

    const rest = await resealSecrets(db, keyring);
    expect(rest.already_current).toBeGreaterThan(0);
    expect(await openedWith(db, newKey)).toEqual(stored.plaintexts);
  });
});
