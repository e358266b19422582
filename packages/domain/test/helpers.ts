import { expect } from '@jest/globals';
import type { Db } from '@retention/db';
import { loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';

/**
 * Two workspaces to act on: A has an owner, a member, a customer with an active subscription
 * and trialing ones (with a future end, none, a past end) and one with a canceled subscription; B (processor disconnected)
 * has a customer, a subscription and a user, to prove that ids of another workspace are
 * refused. Each call makes new rows with distinct processor ids.
 */
export async function actionGraph(db: Db) {
  const tag = Math.random().toString(36).slice(2, 10);
  const result = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'A',
        name: 'Acme',
        users: [
          { key: 'owner', email: 'owner@acme.test', role: 'owner' },
          { key: 'member', email: 'member@acme.test', role: 'member' },
        ],
        customers: [
          {
            key: 'ann',
            email: `ann.${tag}@example.com`,
            subscriptions: [
              { key: 'active', amount_cents: 4900, currency: 'usd', status: 'active' },
              { key: 'trial', status: 'trialing', trial_end: '2030-01-15T12:30:00.250Z', amount_cents: 1900 },
              { key: 'trialNoEnd', status: 'trialing', trial_end: null },
              { key: 'trialEnded', status: 'trialing', trial_end: '2020-01-01T00:00:00Z' },
            ],
          },
          {
            key: 'bob',
            email: `bob.${tag}@example.com`,
            subscriptions: [{ key: 'canceled', status: 'canceled', canceled_at: '2026-01-01T00:00:00Z' }],
          },
        ],
      },
      {
        key: 'B',
        name: 'Globex',
        processor: 'disconnected',
        users: [{ key: 'owner', email: 'owner@globex.test', role: 'owner' }],
        customers: [
          {
            key: 'cat',
            email: `cat.${tag}@example.com`,
            subscriptions: [{ key: 'active', status: 'active', currency: 'eur', amount_cents: 3900 }],
          },
        ],
      },
    ],
  });
  const a = result.workspaces.A!;
  const b = result.workspaces.B!;
  return {
    a: {
      id: a.id,
      owner: a.users.owner!,
      member: a.users.member!,
      ann: a.customers.ann!,
      annEmail: `ann.${tag}@example.com`,
      bob: a.customers.bob!,
      bobEmail: `bob.${tag}@example.com`,
      active: a.subscriptions.active!,
      trial: a.subscriptions.trial!,
      trialNoEnd: a.subscriptions.trialNoEnd!,
      trialEnded: a.subscriptions.trialEnded!,
      canceled: a.subscriptions.canceled!,
    },
    b: {
      id: b.id,
      owner: b.users.owner!,
      cat: b.customers.cat!,
      catEmail: `cat.${tag}@example.com`,
      active: b.subscriptions.active!,
    },
  };
}

export type ActionGraph = Awaited<ReturnType<typeof actionGraph>>;

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
export const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every table a domain action may write. */
const WRITABLE_TABLES = [
  'recovery_campaigns',
  'cancel_sessions',
  'trial_reminders',
  'reactivations',
  'winbacks',
  'subscriptions',
  'events',
];

/**
 * A digest of the full content of every writable table: any insert, update or delete
 * changes it (a row count alone would not see an update).
 */
async function databaseDigest(db: Db): Promise<Record<string, string>> {
  const digest: Record<string, string> = {};
  for (const table of WRITABLE_TABLES) {
    const { rows } = await db.raw<{ rows: Array<{ count: number; hash: string | null }> }>(
      `SELECT count(*) AS count, md5(string_agg(t::text, '|' ORDER BY t.id)) AS hash FROM ${table} AS t`,
    );
    digest[table] = `${rows[0]!.count}:${rows[0]!.hash ?? ''}`;
  }
  return digest;
}

/** Runs a refused action and checks that it failed with `type` and wrote nothing at all. */
export async function expectRefusal(db: Db, type: string, action: () => Promise<unknown>, message?: RegExp) {
  const before = await databaseDigest(db);
  const failure = await action().then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toMatchObject({ name: 'ServiceError', type });
  if (message) expect((failure as Error).message).toMatch(message);
  expect(await databaseDigest(db)).toEqual(before);
}

export interface EventRow {
  id: string;
  workspace_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export async function eventsOf(db: Db, workspaceId: string): Promise<EventRow[]> {
  return db<EventRow>('events').where({ workspace_id: workspaceId }).orderBy('seq');
}

/** The JSON type of each value of an event's data, as a receiver's parser would see it. */
export function jsonTypes(data: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [
      key,
      Number.isInteger(value) ? 'integer' : value === null ? 'null' : typeof value,
    ]),
  );
}
