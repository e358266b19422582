import { beforeAll, describe, expect, it } from '@jest/globals';
import { CAMPAIGN_STATUSES, CANCEL_OUTCOMES, hashApiToken, ServiceError } from '@retention/core';
import { seedDemo, type DemoSeedResult } from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';
import { demoDigest } from './demo-digest.js';
import { eventsOf } from './helpers.js';

const database = useTestDatabase();

const DAY = 86_400_000;
const NOW = new Date('2026-09-15T08:30:00.000Z');
const BASE_URL = 'https://retention.example.com';

describe('seedDemo determinism', () => {
  it('gives the same data for the same seed and different data for another seed', async () => {
    const { db } = database.current;
    const first = await seedDemo(db, { customers: 60, seed: 2024, baseUrl: BASE_URL, now: NOW });
    const second = await seedDemo(db, { customers: 60, seed: 2024, baseUrl: BASE_URL, now: NOW });
    const other = await seedDemo(db, { customers: 60, seed: 2025, baseUrl: BASE_URL, now: NOW });

    expect(second.workspace.id).not.toBe(first.workspace.id);
    expect(second.token).not.toBe(first.token);
    expect(second.counts).toEqual(first.counts);
    const digest = await demoDigest(db, first.workspace.id, first.as_of);
    expect(digest.customers).toMatch(/^60:/);
    expect(await demoDigest(db, second.workspace.id, second.as_of)).toEqual(digest);

    const otherDigest = await demoDigest(db, other.workspace.id, other.as_of);
    expect(otherDigest.customers).not.toBe(digest.customers);
    expect(otherDigest.campaigns).not.toBe(digest.campaigns);
  });

  it('is the same data, shifted, when seeded at another time', async () => {
    const { db } = database.current;
    const early = await seedDemo(db, { customers: 30, seed: 77, baseUrl: BASE_URL, now: NOW });
    const later = await seedDemo(db, {
      customers: 30,
      seed: 77,
      baseUrl: BASE_URL,
      now: new Date(NOW.getTime() + 3 * DAY + 1234),
    });
    expect(await demoDigest(db, later.workspace.id, later.as_of)).toEqual(
      await demoDigest(db, early.workspace.id, early.as_of),
    );
  });
});

describe('seedDemo realism (500 customers, the default)', () => {
  let seeded: DemoSeedResult;
  const rows = async <T>(sql: string, bindings: Record<string, unknown> = {}): Promise<T[]> =>
    (await database.current.db.raw<{ rows: T[] }>(sql, { workspaceId: seeded.workspace.id, ...bindings })).rows;

  beforeAll(async () => {
    seeded = await seedDemo(database.current.db, { baseUrl: BASE_URL, seed: 3, now: NOW });
  });

  it('reports what it created, with a working token and a ready-to-paste curl line', async () => {
    const { db } = database.current;
    expect(seeded).toMatchObject({
      object: 'demo_seed',
      seed: 3,
      as_of: NOW.toISOString(),
      workspace: { id: expect.any(String), name: expect.any(String) },
      owner: { id: expect.any(String), email: expect.stringMatching(/@/) },
      token: expect.stringMatching(/^sk_live_[0-9A-Za-z]{32}$/),
    });
    expect(seeded.counts.customers).toBe(500);
    expect(seeded.curl).toBe(
      `curl -s -H 'Authorization: Bearer ${seeded.token}' '${BASE_URL}/api/v1/campaigns?status=in_flight'`,
    );
    const token = await db('api_tokens')
      .where({ token_hash: hashApiToken(seeded.token) })
      .first();
    expect(token).toMatchObject({ id: seeded.token_id, workspace_id: seeded.workspace.id, revoked_at: null });
    const owner = await db('users').where({ id: seeded.owner.id }).first();
    expect(owner).toMatchObject({ workspace_id: seeded.workspace.id, role: 'owner', email: seeded.owner.email });
    const workspace = await db('workspaces').where({ id: seeded.workspace.id }).first();
    expect(workspace.processor_status).toBe('connected');
  });

  it('matches its counts, and emits no webhook events (an import, not a domain action)', async () => {
    const counted = async (table: string, column: string) =>
      Object.fromEntries(
        (
          await rows<{ key: string; count: number }>(
            `SELECT ${column} AS key, count(*) AS count FROM ${table} WHERE workspace_id = :workspaceId GROUP BY 1`,
          )
        ).map((row) => [row.key, row.count]),
      );
    expect(await counted('recovery_campaigns', 'status')).toEqual(
      Object.fromEntries(Object.entries(seeded.counts.campaigns).filter(([, count]) => count > 0)),
    );
    expect(await counted('cancel_sessions', 'outcome')).toEqual(
      Object.fromEntries(Object.entries(seeded.counts.cancel_sessions).filter(([, count]) => count > 0)),
    );
    expect(await counted('subscriptions', 'status')).toEqual(
      Object.fromEntries(Object.entries(seeded.counts.subscriptions).filter(([, count]) => count > 0)),
    );
    expect(await eventsOf(database.current.db, seeded.workspace.id)).toEqual([]);
  });

  it('has campaigns in every status and cancel sessions in every outcome', () => {
    for (const status of CAMPAIGN_STATUSES) expect(seeded.counts.campaigns[status]).toBeGreaterThan(0);
    for (const outcome of CANCEL_OUTCOMES) expect(seeded.counts.cancel_sessions[outcome]).toBeGreaterThan(0);
    // A business of 500 customers over six months: a steady trickle of failed renewals.
    const campaigns = Object.values(seeded.counts.campaigns).reduce((sum, count) => sum + count, 0);
    expect(campaigns).toBeGreaterThan(50);
    expect(seeded.counts.campaigns.recovered).toBeGreaterThan(seeded.counts.campaigns.lost);
  });

  it('has campaigns in every status in each of usd, eur, gbp and jpy', async () => {
    const pairs = await rows<{ currency: string; status: string }>(
      `SELECT DISTINCT currency, status FROM recovery_campaigns WHERE workspace_id = :workspaceId ORDER BY 1, 2`,
    );
    expect(pairs).toEqual(
      ['eur', 'gbp', 'jpy', 'usd'].flatMap((currency) =>
        [...CAMPAIGN_STATUSES].sort().map((status) => ({ currency, status })),
      ),
    );
  });

  it('bills in usd, eur, gbp and jpy, with plan prices that make sense in each (yen have no minor unit)', async () => {
    const prices = await rows<{ currency: string; amounts: number[] }>(
      `SELECT currency, array_agg(DISTINCT CAST(amount_cents AS integer) ORDER BY CAST(amount_cents AS integer)) AS amounts
         FROM subscriptions WHERE workspace_id = :workspaceId GROUP BY currency ORDER BY currency`,
    );
    expect(prices.map((price) => price.currency)).toEqual(['eur', 'gbp', 'jpy', 'usd']);
    const byCurrency = Object.fromEntries(prices.map((price) => [price.currency, price.amounts]));
    // Monthly plans, and yearly ones at ten months.
    const plans = {
      usd: [1900, 4900, 14900],
      eur: [1900, 4500, 13900],
      gbp: [1500, 3900, 11900],
      jpy: [2500, 6800, 19800],
    };
    for (const [currency, monthly] of Object.entries(plans)) {
      const allowed = [...monthly, ...monthly.map((amount) => amount * 10)];
      expect(byCurrency[currency]!.every((amount) => allowed.includes(amount))).toBe(true);
    }
    const campaignCurrencies = await rows<{ currency: string }>(
      `SELECT DISTINCT currency FROM recovery_campaigns WHERE workspace_id = :workspaceId ORDER BY 1`,
    );
    expect(campaignCurrencies.map((row) => row.currency)).toEqual(['eur', 'gbp', 'jpy', 'usd']);
    const mismatched = await rows(
      `SELECT 1 FROM recovery_campaigns k JOIN subscriptions s ON s.id = k.subscription_id
        WHERE k.workspace_id = :workspaceId AND k.currency <> s.currency`,
    );
    expect(mismatched).toEqual([]);
  });

  it('puts every past timestamp within the last 365 days', async () => {
    const [range] = await rows<{ earliest: Date; latest: Date }>(
      `SELECT min(t) AS earliest, max(t) AS latest FROM (
         SELECT created_at AS t FROM customers WHERE workspace_id = :workspaceId
         UNION ALL SELECT created_at FROM subscriptions WHERE workspace_id = :workspaceId
         UNION ALL SELECT canceled_at FROM subscriptions WHERE workspace_id = :workspaceId
         UNION ALL SELECT first_failed_at FROM recovery_campaigns WHERE workspace_id = :workspaceId
         UNION ALL SELECT recovered_at FROM recovery_campaigns WHERE workspace_id = :workspaceId
         UNION ALL SELECT closed_at FROM recovery_campaigns WHERE workspace_id = :workspaceId
         UNION ALL SELECT created_at FROM cancel_sessions WHERE workspace_id = :workspaceId
         UNION ALL SELECT ended_at FROM cancel_sessions WHERE workspace_id = :workspaceId
       ) times`,
    );
    expect(range!.earliest.getTime()).toBeGreaterThanOrEqual(NOW.getTime() - 365 * DAY);
    expect(range!.latest.getTime()).toBeLessThanOrEqual(NOW.getTime());
    // Spread over the window, not bunched at one end.
    expect(range!.earliest.getTime()).toBeLessThan(NOW.getTime() - 150 * DAY);
    expect(range!.latest.getTime()).toBeGreaterThan(NOW.getTime() - DAY);
  });

  it('tells a consistent story: open campaigns are young, stale ones abandoned, lost ones cancel the subscription', async () => {
    const [ages] = await rows<{
      oldest_open: number;
      youngest_abandoned: number;
      abandoned_off_schedule: number;
      recovered_badly: number;
      lost_not_canceled: number;
      open_not_past_due: number;
    }>(
      `SELECT
         max(CAST(extract(epoch FROM CAST(:now AS timestamptz) - first_failed_at) AS float8) / 86400) FILTER (WHERE k.status = 'in_flight') AS oldest_open,
         min(CAST(extract(epoch FROM CAST(:now AS timestamptz) - first_failed_at) AS float8) / 86400) FILTER (WHERE k.status = 'abandoned') AS youngest_abandoned,
         count(*) FILTER (WHERE k.status = 'abandoned' AND k.closed_at <> k.first_failed_at + interval '30 days') AS abandoned_off_schedule,
         count(*) FILTER (WHERE k.status = 'recovered' AND (k.recovered_at <> k.closed_at OR k.recovered_at < k.first_failed_at)) AS recovered_badly,
         count(*) FILTER (WHERE k.status = 'lost' AND s.status <> 'canceled') AS lost_not_canceled,
         count(*) FILTER (WHERE k.status = 'in_flight' AND s.status <> 'past_due') AS open_not_past_due
         FROM recovery_campaigns k JOIN subscriptions s ON s.id = k.subscription_id
        WHERE k.workspace_id = :workspaceId`,
      { now: NOW },
    );
    expect(ages).toEqual({
      oldest_open: expect.any(Number),
      youngest_abandoned: expect.any(Number),
      abandoned_off_schedule: 0,
      recovered_badly: 0,
      lost_not_canceled: 0,
      open_not_past_due: 0,
    });
    expect(ages!.oldest_open).toBeLessThan(30);
    expect(ages!.youngest_abandoned).toBeGreaterThanOrEqual(30);
  });

  it('draws decline codes at real-world frequencies: insufficient_funds and generic_decline dominate', async () => {
    const codes = await rows<{ decline_code: string; count: number }>(
      `SELECT decline_code, count(*) AS count FROM recovery_campaigns WHERE workspace_id = :workspaceId
        GROUP BY 1 ORDER BY 2 DESC, 1`,
    );
    const total = codes.reduce((sum, row) => sum + row.count, 0);
    expect(codes.slice(0, 2).map((row) => row.decline_code)).toEqual(['insufficient_funds', 'generic_decline']);
    expect((codes[0]!.count + codes[1]!.count) / total).toBeGreaterThan(0.5);
    expect(codes.length).toBeGreaterThanOrEqual(6);
  });

  it('gives cancel sessions reason codes, some with feedback, their MRR in the subscription currency', async () => {
    const [sessions] = await rows<{ reasons: number; with_feedback: number; total: number; off_currency: number }>(
      `SELECT count(DISTINCT x.reason_code) AS reasons, count(x.feedback) AS with_feedback, count(*) AS total,
              count(*) FILTER (WHERE x.currency <> s.currency) AS off_currency
         FROM cancel_sessions x JOIN subscriptions s ON s.id = x.subscription_id
        WHERE x.workspace_id = :workspaceId`,
    );
    expect(sessions!.reasons).toBeGreaterThanOrEqual(6);
    expect(sessions!.with_feedback).toBeGreaterThan(0);
    expect(sessions!.with_feedback).toBeLessThan(sessions!.total);
    expect(sessions!.off_currency).toBe(0);
  });

  it('uses only reserved example domains for e-mail addresses', async () => {
    const domains = await rows<{ domain: string }>(
      `SELECT DISTINCT split_part(email, '@', 2) AS domain FROM customers WHERE workspace_id = :workspaceId
       UNION SELECT DISTINCT split_part(email, '@', 2) FROM users WHERE workspace_id = :workspaceId`,
    );
    for (const { domain } of domains) expect(domain).toMatch(/(^|\.)example(\.(com|net|org))?$/);
  });
});

describe('seedDemo refusals', () => {
  it.each([
    [{ customers: 9 }, /customers/],
    [{ customers: 100_001 }, /customers/],
    [{ customers: 12.5 }, /customers/],
    [{ seed: -1 }, /seed/],
    [{ seed: 2 ** 32 }, /seed/],
    [{ baseUrl: 'ftp://example.com' }, /baseUrl/],
  ])('refuses %j with invalid_param and writes nothing', async (options, message) => {
    const { db } = database.current;
    const before = await db('workspaces').count<Array<{ count: number }>>('* as count');
    const failure = await seedDemo(db, { baseUrl: BASE_URL, ...options }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect(failure).toMatchObject({ type: 'invalid_param', message: expect.stringMatching(message) });
    expect(await db('workspaces').count<Array<{ count: number }>>('* as count')).toEqual(before);
  });
});
