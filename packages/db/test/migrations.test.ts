import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import pg from 'pg';
import { openSecret, sealSecret } from '@retention/core';
import {
  createDb,
  MIGRATIONS,
  migrateLatest,
  pendingMigrations,
  rollbackAll,
  type Db,
  type Migration,
} from '@retention/db';
import {
  createEmptyDatabase,
  databaseNamePrefix,
  databaseUrl,
  REPO_ROOT,
  runId,
  TEST_POSTGRES_URL,
  testSecretsKeyBytes,
} from '@retention/testkit';

const run = promisify(execFile);
const KEY = { secretsKey: testSecretsKeyBytes() };

async function tables(db: Awaited<ReturnType<typeof createEmptyDatabase>>['db']): Promise<string[]> {
  const { rows } = await db.raw<{ rows: Array<{ tablename: string }> }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%' ORDER BY 1",
  );
  return rows.map((row) => row.tablename);
}

const EXPECTED_TABLES = [
  'account_links',
  'api_tokens',
  'campaign_close_day_rollups',
  'campaign_day_rollups',
  'campaign_payment_attempts',
  'campaign_rollups',
  'cancel_session_day_rollups',
  'cancel_session_rollups',
  'cancel_sessions',
  'customers',
  'decline_code_day_rollups',
  'demo_receiver',
  'event_outbox',
  'events',
  'events_not_sent',
  'fx_rates',
  'processor_connections',
  'processor_events',
  'processor_object_states',
  'processor_refused_deliveries',
  'reactivations',
  'recovery_campaigns',
  'recovery_time_day_rollups',
  'recovery_time_rollups',
  'removed_member_sessions',
  'security_events',
  'subscriptions',
  'trial_reminders',
  'user_sessions',
  'users',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_endpoints',
  'winbacks',
  'workspaces',
];

/** Applies the migrations before `name` only, as a database deployed before it would have them. */
async function migrateUpTo(db: Db, name: string): Promise<void> {
  const earlier = MIGRATIONS.slice(
    0,
    MIGRATIONS.findIndex((migration) => migration.name === name),
  );
  const migrationSource: Knex.MigrationSource<Migration> = {
    getMigrations: () => Promise.resolve([...earlier]),
    getMigrationName: (migration) => migration.name,
    // With the key, as migrateLatest passes it: 0019 and later seal secrets with it.
    getMigration: (migration) =>
      Promise.resolve({ up: (knex: Knex) => migration.up(knex, KEY), down: (knex: Knex) => migration.down(knex, KEY) }),
  };
  await db.migrate.latest({ migrationSource, tableName: 'knex_migrations' });
}

describe('migrations', () => {
  it('build the whole schema on an empty database, roll every one back, and apply again', async () => {
    const database = await createEmptyDatabase();
    try {
      expect(await migrateLatest(database.db, KEY)).toEqual(MIGRATIONS.map((migration) => migration.name));
      expect(await tables(database.db)).toEqual(EXPECTED_TABLES);
      expect(await pendingMigrations(database.db)).toEqual([]);

      expect(await rollbackAll(database.db, KEY)).toEqual(MIGRATIONS.map((migration) => migration.name).reverse());
      expect(await tables(database.db)).toEqual([]);
      const { rows: functions } = await database.db.raw<{ rows: unknown[] }>(
        "SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace",
      );
      expect(functions).toEqual([]);

      expect(await migrateLatest(database.db, KEY)).toHaveLength(MIGRATIONS.length);
      expect(await tables(database.db)).toEqual(EXPECTED_TABLES);
      expect(await migrateLatest(database.db, KEY)).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it('run nothing without SECRETS_KEY, and say which variable is missing', async () => {
    const database = await createEmptyDatabase();
    try {
      for (const context of [undefined, {}, { secretsKey: Buffer.alloc(16) }]) {
        await expect(migrateLatest(database.db, context as never)).rejects.toThrow(/SECRETS_KEY/);
        await expect(rollbackAll(database.db, context as never)).rejects.toThrow(/SECRETS_KEY/);
      }
      // Refused before knex started: not even its own bookkeeping tables were made.
      const { rows } = await database.db.raw<{ rows: unknown[] }>(
        "SELECT 1 FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(rows).toEqual([]);
      expect(await pendingMigrations(database.db)).toHaveLength(MIGRATIONS.length);
    } finally {
      await database.drop();
    }
  });

  it('0008-integrity applies to a database in use, repairing the rows its checks would refuse', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0008-integrity');
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const workspaceId = workspace!.id;
      const [user] = await db('users')
        .insert({ workspace_id: workspaceId, email: 'o@w.test', role: 'owner' })
        .returning<Array<{ id: string }>>('id');
      const [customer] = await db('customers')
        .insert({
          workspace_id: workspaceId,
          psp_customer_id: 'cus_1',
          email: 'a@b.co',
          tags: [' vip', 'vip ', 'churn'],
        })
        .returning<Array<{ id: string }>>('id');
      const [subscription] = await db('subscriptions')
        .insert({
          workspace_id: workspaceId,
          customer_id: customer!.id,
          psp_subscription_id: 'sub_1',
          status: 'active',
          plan_name: 'Pro',
          amount_cents: 4900,
          currency: 'usd',
          interval: 'month',
        })
        .returning<Array<{ id: string }>>('id');
      const campaign = (invoice: string, fields: Record<string, unknown>) => ({
        workspace_id: workspaceId,
        customer_id: customer!.id,
        subscription_id: subscription!.id,
        psp_invoice_id: invoice,
        amount_cents: 4900,
        currency: 'usd',
        decline_code: 'generic_decline',
        decline_category: 'unknown',
        first_failed_at: new Date('2026-03-01T00:00:00Z'),
        ...fields,
      });
      // What the fixture loader accepted before it checked time order.
      const [backwards, early] = await db('recovery_campaigns')
        .insert([
          campaign('in_backwards', { status: 'lost', closed_at: new Date('2025-01-01T00:00:00Z') }),
          campaign('in_early', {
            status: 'recovered',
            recovered_via: 'retry',
            recovered_at: new Date('2026-03-02T00:00:00Z'),
            closed_at: new Date('2026-03-03T00:00:00Z'),
            closed_by_user_id: user!.id,
          }),
        ])
        .returning<Array<{ id: string }>>('id');
      const [endpoint] = await db('webhook_endpoints')
        .insert({ workspace_id: workspaceId, name: 'e', url: 'https://e.example.com', signing_secret: 'whsec_x' })
        .returning<Array<{ id: string }>>('id');
      const [delivery] = await db('webhook_deliveries')
        .insert({
          workspace_id: workspaceId,
          endpoint_id: endpoint!.id,
          event_type: 'ping',
          status: 'succeeded',
          attempt_count: 1,
        })
        .returning<Array<{ id: string }>>('id');
      await db('webhook_attempts').insert({
        delivery_id: delivery!.id,
        endpoint_id: endpoint!.id,
        event_type: 'ping',
        attempt: 1,
        outcome: 'succeeded',
        http_status: 200,
        duration_ms: 5,
      });

      expect(await migrateLatest(db, KEY)).toEqual(
        MIGRATIONS.slice(MIGRATIONS.findIndex((migration) => migration.name === '0008-integrity')).map((m) => m.name),
      );
      expect((await db('customers').where({ id: customer!.id }).first()).tags).toEqual(['vip', 'churn']);
      const repaired = await db('recovery_campaigns')
        .whereIn('id', [backwards!.id, early!.id])
        .orderBy('psp_invoice_id');
      expect(repaired.map((row) => [row.psp_invoice_id, row.first_failed_at, row.recovered_at, row.closed_at])).toEqual(
        [
          ['in_backwards', new Date('2025-01-01T00:00:00Z'), null, new Date('2025-01-01T00:00:00Z')],
          [
            'in_early',
            new Date('2026-03-01T00:00:00Z'),
            new Date('2026-03-03T00:00:00Z'),
            new Date('2026-03-03T00:00:00Z'),
          ],
        ],
      );
      expect(repaired[1]!.closed_by_user_id).toBe(user!.id);
      expect(await db('webhook_attempts').count<Array<{ count: number }>>('* as count')).toEqual([{ count: 1 }]);
    } finally {
      await database.drop();
    }
  });

  it('0018-event-outbox queues the events not yet dispatched, then every event inserted, and undoes it', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0018-event-outbox');
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const event = (n: number) => ({ workspace_id: workspace!.id, type: 'reactivation.sent', data: { n } });
      const before = await db('events')
        .insert([event(1), event(2), event(3)])
        .returning<Array<{ id: string; seq: number }>>(['id', 'seq']);
      before.sort((a, b) => a.seq - b.seq);
      await db('events').where({ id: before[1]!.id }).update({ dispatched_at: db.fn.now() });

      const migration = MIGRATIONS.find((m) => m.name === '0018-event-outbox')!;
      // In a transaction of its own, as knex runs each migration.
      await db.transaction((trx) => migration.up(trx));
      const queue = () => db('event_outbox').orderBy('seq').pluck('event_id');
      expect(await queue()).toEqual([before[0]!.id, before[2]!.id]);

      // Inserted the way the previous release inserts (a plain INSERT, as during a rolling
      // deploy): queued, and the dispatchers are woken at commit.
      const listener = new pg.Client({ connectionString: database.url });
      await listener.connect();
      const notified: string[] = [];
      listener.on('notification', (message) => notified.push(message.channel));
      await listener.query('LISTEN retention_outbox');
      const [later] = await db('events')
        .insert([event(4)])
        .returning<Array<{ id: string }>>('id');
      await listener.query('SELECT 1');
      await listener.end();
      expect(notified).toEqual(['retention_outbox']);
      expect(await queue()).toEqual([before[0]!.id, before[2]!.id, later!.id]);

      await db.transaction((trx) => migration.down(trx));
      const undispatched = await db('events').whereNull('dispatched_at').orderBy('seq').pluck('id');
      expect(undispatched).toEqual([before[0]!.id, before[2]!.id, later!.id]);
      // The others are dispatched, at a time no longer known.
      expect(await db('events').where({ id: before[1]!.id }).first('dispatched_at')).toEqual({
        dispatched_at: -Infinity,
      });
    } finally {
      await database.drop();
    }
  });

  describe('0019-sealed-signing-secrets', () => {
    const NAME = '0019-sealed-signing-secrets';
    const migration = MIGRATIONS.find((m) => m.name === NAME)!;
    /** What migrateLatest runs from a database just before 0019: it and the migrations after it. */
    const FROM_NAME = MIGRATIONS.slice(MIGRATIONS.indexOf(migration)).map((m) => m.name);

    /** The webhook_endpoints checks and columns, comparable across a round trip. */
    async function endpointSchema(db: Db) {
      const { rows: checks } = await db.raw<{ rows: Array<{ name: string; definition: string }> }>(
        `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
          WHERE conrelid = 'webhook_endpoints'::regclass ORDER BY conname`,
      );
      const { rows: columns } = await db.raw<{ rows: Array<{ name: string; type: string; nullable: string }> }>(
        `SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM information_schema.columns
          WHERE table_name = 'webhook_endpoints' ORDER BY column_name`,
      );
      return { checks, columns };
    }

    /** Endpoints as a database deployed before 0019 holds them: secrets in the clear. */
    async function plaintextEndpoints(db: Db) {
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const secret = (n: number) => `whsec_${String(n).padStart(43, 'x')}`;
      // More than one batch of the migration's rewrite (1,000 rows).
      const rows = Array.from({ length: 1_001 }, (_, n) => ({
        workspace_id: workspace!.id,
        name: `e${n}`,
        url: `https://e${n}.example.com`,
        signing_secret: secret(n),
      }));
      const inserted = await db('webhook_endpoints').insert(rows).returning<Array<{ id: string }>>('id');
      // One in a roll's overlap: a previous secret and its expiry.
      const expires = new Date(Date.now() + 3_600_000);
      await db('webhook_endpoints')
        .where({ id: inserted[0]!.id })
        .update({ previous_signing_secret: 'whsec_previous', previous_secret_expires_at: expires });
      return { ids: inserted.map((row) => row.id) };
    }

    it('seals every existing secret, current and previous, leaves no plaintext, and down() restores it', async () => {
      const database = await createEmptyDatabase();
      try {
        const { db } = database;
        await migrateUpTo(db, NAME);
        const before = await endpointSchema(db);
        const { ids } = await plaintextEndpoints(db);
        const plain = await db('webhook_endpoints').orderBy('id');

        // In a transaction of its own, as knex runs each migration.
        await db.transaction((trx) => migration.up(trx, KEY));
        const sealed = await db('webhook_endpoints').orderBy('id');
        expect(sealed).toHaveLength(ids.length);
        // What a dump or a read-only leak of the table shows: no secret, whole or in part.
        const dump = JSON.stringify(sealed);
        expect(dump).not.toContain('whsec_');
        expect(dump).not.toContain('x'.repeat(30));
        for (const row of sealed) {
          expect(row).not.toHaveProperty('signing_secret');
          expect(row).not.toHaveProperty('previous_signing_secret');
          const was = plain.find((p: { id: string }) => p.id === row.id);
          expect(openSecret(KEY.secretsKey, row.signing_secret_sealed)).toBe(was.signing_secret);
          expect(
            row.previous_signing_secret_sealed === null
              ? null
              : openSecret(KEY.secretsKey, row.previous_signing_secret_sealed),
          ).toBe(was.previous_signing_secret);
          expect(row.previous_secret_expires_at).toEqual(was.previous_secret_expires_at);
        }
        expect(
          sealed.filter((row: { previous_signing_secret_sealed: unknown }) => row.previous_signing_secret_sealed),
        ).toHaveLength(1);
        const { checks } = await endpointSchema(db);
        expect(checks.map((check) => check.name)).toEqual(
          expect.arrayContaining([
            'webhook_endpoints_signing_secret_sealed_check',
            'webhook_endpoints_previous_signing_secret_sealed_check',
            'webhook_endpoints_previous_secret_pair_check',
          ]),
        );

        await db.transaction((trx) => migration.down(trx, KEY));
        expect(await db('webhook_endpoints').orderBy('id')).toEqual(plain);
        expect(await endpointSchema(db)).toEqual(before);
      } finally {
        await database.drop();
      }
    });

    it('without SECRETS_KEY migrates nothing and says which variable is missing', async () => {
      const database = await createEmptyDatabase();
      try {
        const { db } = database;
        await migrateUpTo(db, NAME);
        await plaintextEndpoints(db);
        const pending = await pendingMigrations(db);
        expect(pending).toEqual(FROM_NAME);
        for (const context of [undefined, {}, { secretsKey: Buffer.alloc(16) }]) {
          await expect(migrateLatest(db, context as never)).rejects.toThrow(/SECRETS_KEY/);
          await expect(db.transaction((trx) => migration.up(trx, context as never))).rejects.toThrow(/SECRETS_KEY/);
        }
        expect(await pendingMigrations(db)).toEqual(pending);
        expect((await db('webhook_endpoints').first()).signing_secret).toMatch(/^whsec_/);
      } finally {
        await database.drop();
      }
    });

    it('down() with another key fails, naming SECRETS_KEY, and changes nothing', async () => {
      const database = await createEmptyDatabase();
      try {
        const { db } = database;
        await migrateUpTo(db, NAME);
        await plaintextEndpoints(db);
        expect(await migrateLatest(db, KEY)).toEqual(FROM_NAME);
        const sealed = await db('webhook_endpoints').orderBy('id');
        const other = { secretsKey: randomBytes(32) };
        await expect(db.transaction((trx) => migration.down(trx, other))).rejects.toThrow(/SECRETS_KEY/);
        await expect(rollbackAll(db, other)).rejects.toThrow(/SECRETS_KEY/);
        // Undone newest first, each in its own transaction: those after 0019 need no key and are
        // undone; 0019 stops the rollback and stays applied.
        expect(await pendingMigrations(db)).toEqual(FROM_NAME.slice(1));
        expect(await db('webhook_endpoints').orderBy('id')).toEqual(sealed);
      } finally {
        await database.drop();
      }
    });

    it('during a key rotation, up() seals with SECRETS_KEY and down() opens with SECRETS_KEY_PREVIOUS too', async () => {
      const database = await createEmptyDatabase();
      try {
        const { db } = database;
        await migrateUpTo(db, NAME);
        await plaintextEndpoints(db);
        const plain = await db('webhook_endpoints').orderBy('id');
        // Sealed with the old key, then the process restarted with a new one and the old as previous.
        expect(await migrateLatest(db, KEY)).toEqual(FROM_NAME);
        const rotating = { secretsKey: { current: randomBytes(32), previous: KEY.secretsKey } };
        await db.transaction((trx) => migration.down(trx, rotating));
        expect(await db('webhook_endpoints').orderBy('id')).toEqual(plain);
        await db.transaction((trx) => migration.up(trx, rotating));
        const row = await db('webhook_endpoints').first('signing_secret_sealed');
        expect(() => openSecret(rotating.secretsKey.current, row.signing_secret_sealed)).not.toThrow();
      } finally {
        await database.drop();
      }
    });
  });

  it('0020-outbox-recorded-at dates the waiting outbox rows by their events, new rows by now, and undoes it', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateLatest(db, KEY);
      const migration = MIGRATIONS.find((m) => m.name === '0020-outbox-recorded-at')!;
      await db.transaction((trx) => migration.down(trx));
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const happened = new Date('2026-01-02T03:04:05.678Z');
      const [waiting] = await db('events')
        .insert({ workspace_id: workspace!.id, type: 'reactivation.sent', data: { n: 1 }, created_at: happened })
        .returning<Array<{ id: string }>>('id');

      await db.transaction((trx) => migration.up(trx));
      const recordedAt = (id: string) => db('event_outbox').where({ event_id: id }).first('recorded_at');
      // Waiting since before the migration: recorded when it was created, as this release would say.
      expect(await recordedAt(waiting!.id)).toEqual({ recorded_at: happened });
      // Recorded after, though it happened long before: recorded now.
      const [late] = await db('events')
        .insert({ workspace_id: workspace!.id, type: 'reactivation.sent', data: { n: 2 }, created_at: happened })
        .returning<Array<{ id: string }>>('id');
      const lateRow = await recordedAt(late!.id);
      expect(Math.abs(lateRow.recorded_at.getTime() - Date.now())).toBeLessThan(60_000);

      await db.transaction((trx) => migration.down(trx));
      expect(await db('event_outbox').orderBy('seq').pluck('event_id')).toEqual([waiting!.id, late!.id]);
      expect(Object.keys(await db('event_outbox').first())).toEqual(['seq', 'event_id']);
    } finally {
      await database.drop();
    }
  });

  it("0028-processor-mode gives existing connections their key's mode, else their first own event's", async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateLatest(db, KEY);
      const migration = MIGRATIONS.find((m) => m.name === '0028-processor-mode')!;
      await db.transaction((trx) => migration.down(trx, KEY));
      const connection = async (name: string, apiKey: string | null) => {
        const [workspace] = await db('workspaces').insert({ name }).returning<Array<{ id: string }>>('id');
        const [row] = await db('processor_connections')
          .insert({
            workspace_id: workspace!.id,
            provider: 'stripe',
            status: 'connected',
            webhook_secret_sealed: sealSecret(KEY.secretsKey, 'whsec_0123456789abcdef'),
            webhook_secret_last4: 'cdef',
            api_key_sealed: apiKey === null ? null : sealSecret(KEY.secretsKey, apiKey),
            api_key_last4: apiKey === null ? null : apiKey.slice(-4),
          })
          .returning<Array<{ id: string; workspace_id: string }>>(['id', 'workspace_id']);
        return row!;
      };
      const keyed = await connection('Keyed', `rk_live_${'a'.repeat(24)}`);
      const evented = await connection('Evented', null);
      const silent = await connection('Silent', null);
      let created = 1_700_000_000;
      const event = (livemode: boolean, account?: string) =>
        db('processor_events').insert({
          connection_id: evented.id,
          workspace_id: evented.workspace_id,
          psp_event_id: `evt_${(created += 1)}`,
          type: 'customer.created',
          psp_created_at: new Date(created * 1000),
          payload: JSON.stringify({ object: 'event', livemode, ...(account && { account }) }),
        });
      // The oldest is a connected account's (not this account's mode), then the account's own live one.
      await event(false, 'acct_1OTHER');
      await event(true);
      await event(false);

      await expect(db.transaction((trx) => migration.up(trx))).rejects.toThrow(/SECRETS_KEY/);
      await db.transaction((trx) => migration.up(trx, KEY));
      const modes = await db('processor_connections')
        .whereIn('id', [keyed.id, evented.id, silent.id])
        .select('id', 'mode');
      expect(Object.fromEntries(modes.map((row) => [row.id, row.mode]))).toEqual({
        [keyed.id]: 'live',
        [evented.id]: 'live',
        [silent.id]: null,
      });
      expect(await db('processor_events').whereNotNull('ignored_reason')).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it('0031-processor-key-rejection-mail owes no email for a key refused before it, and undoes it', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateLatest(db, KEY);
      const migration = MIGRATIONS.find((m) => m.name === '0031-processor-key-rejection-mail')!;
      await db.transaction((trx) => migration.down(trx, KEY));
      const [workspace] = await db('workspaces').insert({ name: 'Refused' }).returning<Array<{ id: string }>>('id');
      const [refused] = await db('processor_connections')
        .insert({
          workspace_id: workspace!.id,
          provider: 'stripe',
          status: 'disconnected',
          disconnected_reason: 'key_rejected',
          webhook_secret_sealed: sealSecret(KEY.secretsKey, 'whsec_0123456789abcdef'),
          webhook_secret_last4: 'cdef',
        })
        .returning<Array<{ id: string }>>('id');

      await db.transaction((trx) => migration.up(trx, KEY));
      // Refused weeks ago, perhaps: an email at the deploy would read as news.
      expect((await db('processor_connections').where({ id: refused!.id }).first()).key_rejection_mail_due).toBe(false);
      await db.transaction((trx) => migration.down(trx, KEY));
      expect(await db('processor_connections').where({ id: refused!.id }).first()).not.toHaveProperty(
        'key_rejection_mail_due',
      );
    } finally {
      await database.drop();
    }
  });

  it('0033-attempt-url records no URL for the lines before it, takes a line that names none, and undoes it', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateLatest(db, KEY);
      const migration = MIGRATIONS.find((m) => m.name === '0033-attempt-url')!;
      await db.transaction((trx) => migration.down(trx, KEY));
      const [workspace] = await db('workspaces').insert({ name: 'Logged' }).returning<Array<{ id: string }>>('id');
      const [endpoint] = await db('webhook_endpoints')
        .insert({
          workspace_id: workspace!.id,
          name: 'e',
          url: 'https://e.example.com/hook',
          signing_secret_sealed: sealSecret(KEY.secretsKey, 'whsec_0123456789abcdef'),
        })
        .returning<Array<{ id: string }>>('id');
      const [delivery] = await db('webhook_deliveries')
        .insert({
          workspace_id: workspace!.id,
          endpoint_id: endpoint!.id,
          event_type: 'ping',
          status: 'failed',
          attempt_count: 3,
          completed_at: new Date(),
        })
        .returning<Array<{ id: string }>>('id');
      // A line logged the way every release before 0033 logs one.
      const line = (attempt: number) => ({
        delivery_id: delivery!.id,
        endpoint_id: endpoint!.id,
        event_type: 'ping',
        attempt,
        outcome: 'failed',
        error: 'HTTP 500',
        duration_ms: 5,
      });
      await db('webhook_attempts').insert(line(1));

      await db.transaction((trx) => migration.up(trx, KEY));
      // Where it went was never recorded, and the endpoint's URL now would be a guess.
      expect(await db('webhook_attempts').pluck('url')).toEqual([null]);
      // The previous release, still running during a rolling deploy, names no URL either.
      await db('webhook_attempts').insert(line(2));
      await db('webhook_attempts').insert({ ...line(3), url: 'https://e.example.com/hook' });
      expect(await db('webhook_attempts').orderBy('attempt').pluck('url')).toEqual([
        null,
        null,
        'https://e.example.com/hook',
      ]);
      await db.transaction((trx) => migration.down(trx, KEY));
      expect(await db('webhook_attempts').first()).not.toHaveProperty('url');
    } finally {
      await database.drop();
    }
  });

  it('0034-highest-former-role fills each account with the highest role the security log says it was moved from', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0034-highest-former-role');
      const migration = MIGRATIONS.find((m) => m.name === '0034-highest-former-role')!;
      const [workspace] = await db('workspaces').insert({ name: 'Roles' }).returning<Array<{ id: string }>>('id');
      const user = async (email: string, role: string) =>
        (
          await db('users').insert({ workspace_id: workspace!.id, email, role }).returning<Array<{ id: string }>>('id')
        )[0]!.id;
      const demoted = await user('demoted@example.com', 'member');
      const promoted = await user('promoted@example.com', 'owner');
      const unchanged = await user('unchanged@example.com', 'admin');
      const changed = (target: string, from: string, to: string) =>
        db('security_events').insert({
          workspace_id: workspace!.id,
          action: 'team.role_changed',
          actor_type: 'operator',
          target_type: 'user',
          target_id: target,
          details: { from, to },
        });
      // An owner moved to admin, then to member: the highest role they left is owner.
      await changed(demoted, 'admin', 'member');
      await changed(demoted, 'owner', 'admin');
      await changed(promoted, 'member', 'owner');

      await db.transaction((trx) => migration.up(trx, KEY));
      const held = Object.fromEntries(
        (await db('users').select('id', 'highest_former_role')).map(
          (row: { id: string; highest_former_role: string }) => [row.id, row.highest_former_role],
        ),
      );
      expect([held[demoted], held[promoted], held[unchanged]]).toEqual(['owner', 'member', null]);
      await db.transaction((trx) => migration.down(trx, KEY));
      expect(await db('users').first()).not.toHaveProperty('highest_former_role');
    } finally {
      await database.drop();
    }
  });

  it('0035-former-role-trigger keeps the highest role left on every role change, fills what an older release missed, and revokes the copied links the rule forbids', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0035-former-role-trigger');
      const migration = MIGRATIONS.find((m) => m.name === '0035-former-role-trigger')!;
      const [workspace] = await db('workspaces').insert({ name: 'Trigger' }).returning<Array<{ id: string }>>('id');
      const user = async (email: string, role: string, highest_former_role: string | null = null) =>
        (
          await db('users')
            .insert({ workspace_id: workspace!.id, email, role, highest_former_role })
            .returning<Array<{ id: string }>>('id')
        )[0]!.id;
      const owner = await user('owner@example.com', 'owner');
      const admin = await user('admin@example.com', 'admin');
      // Moved down from admin by a release older than 0034: logged, never kept in the column.
      const missed = await user('missed@example.com', 'member');
      // Kept as owner already: a lower role in the log does not lower it.
      const kept = await user('kept@example.com', 'member', 'owner');
      const newcomer = await user('newcomer@example.com', 'member');
      for (const [target, from] of [
        [missed, 'admin'],
        [kept, 'admin'],
      ] as const) {
        await db('security_events').insert({
          workspace_id: workspace!.id,
          action: 'team.role_changed',
          actor_type: 'user',
          target_type: 'user',
          target_id: target,
          details: { from, to: 'member' },
        });
      }
      const link = async (userId: string, createdBy: string | null, open = true) =>
        (
          await db('account_links')
            .insert({
              workspace_id: workspace!.id,
              kind: 'password_reset',
              email: `${userId}@links.test`,
              user_id: userId,
              created_by: createdBy,
              token_hash: randomBytes(32).toString('hex'),
              expires_at: new Date(Date.now() + (open ? 3_600_000 : -1_000)),
            })
            .returning<Array<{ id: string }>>('id')
        )[0]!.id;
      const byAdminForMissed = await link(missed, admin); // the admin does not outrank an admin
      const byOwnerForMissed = await link(missed, owner); // an owner does
      const byAdminForNewcomer = await link(newcomer, admin); // only ever a member
      const byAdminForKept = await link(kept, admin, false); // expired: left as it is
      const asked = await link(missed, null); // asked for by its holder, or the CLI's

      await db.transaction((trx) => migration.up(trx, KEY));
      const former = async (id: string) =>
        (await db('users').where({ id }).first<{ highest_former_role: string | null }>('highest_former_role'))
          .highest_former_role;
      expect([await former(missed), await former(kept), await former(newcomer)]).toEqual(['admin', 'owner', null]);
      const revoked = async (id: string) =>
        (await db('account_links').where({ id }).first<{ revoked_at: Date | null }>('revoked_at')).revoked_at !== null;
      expect(
        await Promise.all([byAdminForMissed, byOwnerForMissed, byAdminForNewcomer, byAdminForKept, asked].map(revoked)),
      ).toEqual([true, false, false, false, false]);
      expect(
        await db('security_events')
          .where({ action: 'account.reset_link_revoked' })
          .select('actor_type', 'actor_label', 'target_id', 'details'),
      ).toEqual([
        {
          actor_type: 'system',
          actor_label: 'migration 0035',
          target_id: missed,
          details: { reason: 'former_role_rule', created_by: 'admin@example.com' },
        },
      ]);

      // Any UPDATE of the role, by whichever release: the highest role left is kept, never lowered.
      await db('users').where({ id: admin }).update({ role: 'member' });
      await db('users').where({ id: admin }).update({ role: 'admin' });
      await db('users').where({ id: admin }).update({ role: 'member', name: 'Moved twice' });
      await db('users').where({ id: owner }).update({ name: 'No role change' });
      expect([await former(admin), await former(owner)]).toEqual(['admin', null]);
      await db('users').where({ id: kept }).update({ role: 'admin' });
      expect(await former(kept)).toEqual('owner');
      // Never lowered nor cleared, with the role or without it.
      await db('users').where({ id: kept }).update({ role: 'member', highest_former_role: null });
      await db('users').where({ id: admin }).update({ highest_former_role: 'member' });
      expect([await former(kept), await former(admin)]).toEqual(['owner', 'admin']);

      await db.transaction((trx) => migration.down(trx, KEY));
      await db('users').where({ id: newcomer }).update({ role: 'admin' });
      expect(await former(newcomer)).toBeNull();
    } finally {
      await database.drop();
    }
  });

  it('0036-reset-link-operator marks the open links the operator CLI made, by the security log, and refuses a mark elsewhere', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0036-reset-link-operator');
      const migration = MIGRATIONS.find((m) => m.name === '0036-reset-link-operator')!;
      const [workspace] = await db('workspaces').insert({ name: 'Links' }).returning<Array<{ id: string }>>('id');
      const user = async (email: string, role: string) =>
        (
          await db('users').insert({ workspace_id: workspace!.id, email, role }).returning<Array<{ id: string }>>('id')
        )[0]!.id;
      const owner = await user('owner@example.com', 'owner');
      const member = await user('member@example.com', 'member');
      // A reset link and, when someone made it, its security-log entry: in one transaction, as
      // createResetLink writes them (the same now()), by the operator or by a member on the Team
      // page.
      const link = (maker: 'operator' | 'owner' | null, open = true) =>
        db.transaction(async (trx) => {
          const [row] = await trx('account_links')
            .insert({
              workspace_id: workspace!.id,
              kind: 'password_reset',
              email: 'member@example.com',
              user_id: member,
              created_by: maker === 'owner' ? owner : null,
              token_hash: randomBytes(32).toString('hex'),
              expires_at: new Date(Date.now() + (open ? 3_600_000 : -1_000)),
            })
            .returning<Array<{ id: string }>>('id');
          if (maker) {
            await trx('security_events').insert({
              workspace_id: workspace!.id,
              action: 'account.reset_link_created',
              actor_type: maker === 'operator' ? 'operator' : 'user',
              actor_user_id: maker === 'owner' ? owner : null,
              actor_label: maker === 'operator' ? 'operator CLI' : 'owner@example.com',
              target_type: 'user',
              target_id: member,
            });
          }
          return row!.id;
        });
      const byOperator = await link('operator');
      const byOperatorExpired = await link('operator', false);
      const byOwner = await link('owner');
      const asked = await link(null);

      await db.transaction((trx) => migration.up(trx, KEY));
      const marks = async (...ids: string[]) =>
        Promise.all(
          ids.map(
            async (id) =>
              (await db('account_links').where({ id }).first<{ made_by_operator: boolean | null }>('made_by_operator'))
                .made_by_operator,
          ),
        );
      // Only the open link the operator made is known for sure; nothing else is guessed.
      expect(await marks(byOperator, byOperatorExpired, byOwner, asked)).toEqual([true, null, null, null]);
      // The previous release, still running during a rolling deploy, names no mark.
      const older = await link(null);
      expect(await marks(older)).toEqual([null]);
      // A mark is for a reset link with no member as its maker.
      await expect(db('account_links').where({ id: byOwner }).update({ made_by_operator: true })).rejects.toThrow(
        /account_links_made_by_operator_reset_only/,
      );
      await expect(
        db('account_links').insert({
          workspace_id: workspace!.id,
          kind: 'invitation',
          email: 'new@example.com',
          role: 'member',
          token_hash: randomBytes(32).toString('hex'),
          expires_at: new Date(Date.now() + 3_600_000),
          made_by_operator: false,
        }),
      ).rejects.toThrow(/account_links_made_by_operator_reset_only/);
      await db('account_links').where({ id: byOwner }).update({ made_by_operator: false });

      await db.transaction((trx) => migration.down(trx, KEY));
      expect(await db('account_links').first()).not.toHaveProperty('made_by_operator');
    } finally {
      await database.drop();
    }
  });

  it("0037-demo-receiver keeps one origin of npm start's demo receiver, on 127.0.0.1 only, and undoes it", async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0037-demo-receiver');
      const migration = MIGRATIONS.find((m) => m.name === '0037-demo-receiver')!;
      await db.transaction((trx) => migration.up(trx, KEY));
      await db('demo_receiver').insert({ origin: 'https://127.0.0.1:40123' });
      await expect(db('demo_receiver').insert({ origin: 'https://127.0.0.1:40124' })).rejects.toThrow(/duplicate key/);
      await expect(db('demo_receiver').insert({ only_row: false, origin: 'https://127.0.0.1:1' })).rejects.toThrow(
        /check/,
      );
      await expect(db('demo_receiver').update({ origin: 'https://hooks.example.com:443' })).rejects.toThrow(/check/);
      expect(await db('demo_receiver').pluck('origin')).toEqual(['https://127.0.0.1:40123']);
      await db.transaction((trx) => migration.down(trx, KEY));
      expect(await tables(db)).not.toContain('demo_receiver');
    } finally {
      await database.drop();
    }
  });

  it("0040-security-log-actor-email keeps the address of the person an operator CLI entry names, not of a dashboard one's, and undoes it", async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0040-security-log-actor-email');
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const [olga] = await db('users')
        .insert({ workspace_id: workspace!.id, email: 'olga@w.test', role: 'admin' })
        .returning<Array<{ id: string }>>('id');
      const entry = (action: string, actorType: string, userId: string | null, label: string) => ({
        workspace_id: workspace!.id,
        action,
        actor_type: actorType,
        actor_user_id: userId,
        actor_label: label,
      });
      await db('security_events').insert([
        entry('webhook.deleted', 'operator', olga!.id, 'operator CLI'),
        entry('token.created', 'operator', null, 'operator CLI'),
        entry('token.revoked', 'user', olga!.id, 'olga@w.test'),
      ]);
      const migration = MIGRATIONS.find((m) => m.name === '0040-security-log-actor-email')!;
      await db.transaction((trx) => migration.up(trx, KEY));
      const emails = async () =>
        Object.fromEntries(
          (await db('security_events').select('action', 'actor_email')).map((row) => [row.action, row.actor_email]),
        );
      expect(await emails()).toEqual({
        'webhook.deleted': 'olga@w.test',
        'token.created': null,
        // A dashboard entry's label is the address already.
        'token.revoked': null,
      });
      await db('users').where({ id: olga!.id }).delete();
      expect(await emails()).toMatchObject({ 'webhook.deleted': 'olga@w.test' });
      await db.transaction((trx) => migration.down(trx, KEY));
      expect(Object.keys(await db('security_events').first())).not.toContain('actor_email');
    } finally {
      await database.drop();
    }
  });

  it("0041-campaign-payment-attempts keeps a campaign's attempts once each, knows no next attempt for campaigns before it, and undoes it", async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateUpTo(db, '0041-campaign-payment-attempts');
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const [customer] = await db('customers')
        .insert({ workspace_id: workspace!.id, psp_customer_id: 'cus_1', email: 'a@w.test' })
        .returning<Array<{ id: string }>>('id');
      const [subscription] = await db('subscriptions')
        .insert({
          workspace_id: workspace!.id,
          customer_id: customer!.id,
          psp_subscription_id: 'sub_1',
          status: 'past_due',
          plan_name: 'Pro',
          amount_cents: 4900,
          currency: 'usd',
          interval: 'month',
        })
        .returning<Array<{ id: string }>>('id');
      const [campaign] = await db('recovery_campaigns')
        .insert({
          workspace_id: workspace!.id,
          customer_id: customer!.id,
          subscription_id: subscription!.id,
          psp_invoice_id: 'in_1',
          amount_cents: 4900,
          currency: 'usd',
          status: 'in_flight',
          decline_code: 'insufficient_funds',
          decline_category: 'soft',
          first_failed_at: new Date('2026-01-01T00:00:00Z'),
        })
        .returning<Array<{ id: string }>>('id');
      const migration = MIGRATIONS.find((m) => m.name === '0041-campaign-payment-attempts')!;
      await db.transaction((trx) => migration.up(trx, KEY));
      expect(await db('recovery_campaigns').where({ id: campaign!.id }).first()).toMatchObject({
        next_payment_attempt_at: null,
        next_payment_attempt_as_of: null,
      });
      const attempt = {
        campaign_id: campaign!.id,
        attempt_number: 2,
        workspace_id: workspace!.id,
        failed_at: new Date('2026-01-04T00:00:00Z'),
        decline_code: 'insufficient_funds',
        decline_category: 'soft',
      };
      await db('campaign_payment_attempts').insert(attempt);
      await expect(db('campaign_payment_attempts').insert(attempt)).rejects.toMatchObject({ code: '23505' });
      // A next attempt without the time of the fact that said it is refused: the time orders the facts.
      await expect(
        db('recovery_campaigns').where({ id: campaign!.id }).update({ next_payment_attempt_at: new Date() }),
      ).rejects.toMatchObject({ code: '23514' });
      await db.transaction((trx) => migration.down(trx, KEY));
      expect(await tables(db)).not.toContain('campaign_payment_attempts');
      expect(Object.keys(await db('recovery_campaigns').first())).not.toContain('next_payment_attempt_at');
    } finally {
      await database.drop();
    }
  });

  it('0021-reset-link-action renames the reset links made before it, not the resets done, and undoes it', async () => {
    const database = await createEmptyDatabase();
    try {
      const { db } = database;
      await migrateLatest(db, KEY);
      const migration = MIGRATIONS.find((m) => m.name === '0021-reset-link-action')!;
      await db.transaction((trx) => migration.down(trx));
      const [workspace] = await db('workspaces').insert({ name: 'W' }).returning<Array<{ id: string }>>('id');
      const record = (step: string) =>
        db('security_events')
          .insert({
            workspace_id: workspace!.id,
            action: 'account.password_reset',
            actor_type: 'user',
            details: { step },
          })
          .returning<Array<{ id: string }>>('id');
      const [made] = await record('link_created');
      const [done] = await record('password_set');
      // A link made by the release just before 0021, which already named it so (no step).
      const [named] = await db('security_events')
        .insert({ workspace_id: workspace!.id, action: 'account.reset_link_created', actor_type: 'user', details: {} })
        .returning<Array<{ id: string }>>('id');
      const actionOf = async (row: { id: string } | undefined) =>
        (await db('security_events').where({ id: row!.id }).first('action')).action;

      await db.transaction((trx) => migration.up(trx));
      expect([await actionOf(made), await actionOf(done), await actionOf(named)]).toEqual([
        'account.reset_link_created',
        'account.password_reset',
        'account.reset_link_created',
      ]);
      await db.transaction((trx) => migration.down(trx));
      expect([await actionOf(made), await actionOf(done), await actionOf(named)]).toEqual([
        'account.password_reset',
        'account.password_reset',
        'account.reset_link_created',
      ]);
    } finally {
      await database.drop();
    }
  });

  it("0024-customer-search is applied by the database's owner, no superuser, and undone without a trace", async () => {
    // pg_trgm and btree_gin are trusted extensions (PostgreSQL 13+): the owner of a database may
    // create them there (docs/upgrading.md). A role of this run's own, owning a database of its own.
    const role = `${databaseNamePrefix(runId())}owner_${randomBytes(3).toString('hex')}`;
    const name = `${role}_db`;
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    const url = new URL(databaseUrl(name));
    url.username = role;
    url.password = '';
    let owned: Db | null = null;
    try {
      await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} OWNER ${pg.escapeIdentifier(role)}`);
      owned = createDb(url.toString(), { poolMax: 1 });
      const { rows: who } = await owned.raw<{ rows: Array<{ rolsuper: boolean }> }>(
        'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
      );
      expect(who).toEqual([{ rolsuper: false }]);
      expect(await migrateLatest(owned, KEY)).toContain('0024-customer-search');
      const extensions = async () =>
        (
          await owned!.raw<{ rows: Array<{ extname: string }> }>(
            "SELECT extname FROM pg_extension WHERE extname IN ('pg_trgm', 'btree_gin') ORDER BY 1",
          )
        ).rows.map((row) => row.extname);
      const index = async () =>
        (await owned!.raw<{ rows: unknown[] }>("SELECT 1 FROM pg_indexes WHERE indexname = 'customers_search_idx'"))
          .rows.length;
      expect([await extensions(), await index()]).toEqual([['btree_gin', 'pg_trgm'], 1]);
      const migration = MIGRATIONS.find((m) => m.name === '0024-customer-search')!;
      await owned.transaction((trx) => migration.down(trx));
      expect([await extensions(), await index()]).toEqual([[], 0]);
      await owned.transaction((trx) => migration.up(trx));
      expect([await extensions(), await index()]).toEqual([['btree_gin', 'pg_trgm'], 1]);
    } finally {
      await owned?.destroy();
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
      await admin.end();
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

    it('refuses to run without SECRETS_KEY, naming it, before it touches the server', async () => {
      const missing = `${databaseNamePrefix(runId())}migrate_no_key`;
      const env = { ...process.env, DATABASE_URL: databaseUrl(missing), SECRETS_KEY: '' };
      const script = path.join(REPO_ROOT, 'packages/db/src/migrate-cli.ts');
      const failure = await run(process.execPath, ['--import', 'tsx', script], { env, cwd: REPO_ROOT }).catch(
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure).toMatchObject({ code: 1, stderr: expect.stringContaining('SECRETS_KEY') });
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [missing]);
      await admin.end();
      expect(rowCount).toBe(0);
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
