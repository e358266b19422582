import { describe, expect, it } from '@jest/globals';
import type { Db } from '@retention/db';
import { closeStaleCampaigns, loadFixtures } from '@retention/domain';
import { useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';
import { eventsOf, expectRefusal, jsonTypes, UNKNOWN_ID } from './helpers.js';

const database = useTestDatabase();

const NOW = new Date('2026-06-30T12:00:00.000Z');
const daysBefore = (days: number, extraMs = 0) => new Date(NOW.getTime() - days * 86_400_000 + extraMs).toISOString();

/** A workspace with campaigns of every age and status around a 30-day cutoff. */
async function workspaceWithAges(db: Db, email: string) {
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'W',
        customers: [{ key: 'c', email, subscriptions: [{ amount_cents: 600_000, currency: 'jpy' }] }],
        campaigns: [
          { key: 'old', customer: 'c', first_failed_at: daysBefore(45) },
          { key: 'justOver', customer: 'c', first_failed_at: daysBefore(30, -1) },
          { key: 'exactly', customer: 'c', first_failed_at: daysBefore(30) },
          { key: 'recent', customer: 'c', first_failed_at: daysBefore(29) },
          {
            key: 'oldRecovered',
            customer: 'c',
            status: 'recovered',
            first_failed_at: daysBefore(60),
            recovered_at: daysBefore(58),
          },
          { key: 'oldLost', customer: 'c', status: 'lost', first_failed_at: daysBefore(90), closed_at: daysBefore(70) },
        ],
      },
    ],
  });
  return loaded.workspaces.W!;
}

describe('closeStaleCampaigns', () => {
  it('abandons only open campaigns older than the cutoff, each with recovery.lost reason auto_close_stale', async () => {
    const { db } = database.current;
    const w = await workspaceWithAges(db, 'stale@example.com');
    const result = await closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: w.id, now: NOW });
    expect(result).toEqual({ closed: [w.campaigns.old, w.campaigns.justOver] });

    const rows = await db('recovery_campaigns').where({ workspace_id: w.id });
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(w.campaigns.old)).toMatchObject({ status: 'abandoned', closed_at: NOW, recovered_at: null });
    expect(byId.get(w.campaigns.justOver)).toMatchObject({ status: 'abandoned', closed_at: NOW });
    expect(byId.get(w.campaigns.exactly).status).toBe('in_flight');
    expect(byId.get(w.campaigns.recent).status).toBe('in_flight');
    expect(byId.get(w.campaigns.oldRecovered).status).toBe('recovered');
    expect(byId.get(w.campaigns.oldLost).status).toBe('lost');

    const events = await eventsOf(db, w.id);
    expect(events.map((event) => event.data)).toEqual([
      {
        campaign_id: w.campaigns.old,
        customer_email: 'stale@example.com',
        amount_cents: 600_000,
        currency: 'jpy',
        reason: 'auto_close_stale',
      },
      {
        campaign_id: w.campaigns.justOver,
        customer_email: 'stale@example.com',
        amount_cents: 600_000,
        currency: 'jpy',
        reason: 'auto_close_stale',
      },
    ]);
    expect(events.every((event) => event.type === 'recovery.lost')).toBe(true);
    expect(jsonTypes(events[0]!.data)).toEqual({
      campaign_id: 'string',
      customer_email: 'string',
      amount_cents: 'integer',
      currency: 'string',
      reason: 'string',
    });

    expect(await closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: w.id, now: NOW })).toEqual({ closed: [] });
  });

  it('without a workspace, closes stale campaigns of every workspace; with one, only that one', async () => {
    const { db } = database.current;
    const first = await workspaceWithAges(db, 'first@example.com');
    const second = await workspaceWithAges(db, 'second@example.com');
    expect(await closeStaleCampaigns(db, { olderThanDays: 40, workspaceId: first.id, now: NOW })).toEqual({
      closed: [first.campaigns.old],
    });
    const everywhere = await closeStaleCampaigns(db, { olderThanDays: 40, now: NOW });
    expect(everywhere.closed).toContain(second.campaigns.old);
    expect(everywhere.closed).not.toContain(first.campaigns.old);
  });

  it('replayed (the demo seed replays the job): its events at `now` too; refuses a replay without a past `now`', async () => {
    const { db } = database.current;
    const w = await workspaceWithAges(db, 'replayed@example.com');
    const result = await closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: w.id, now: NOW, replay: true });
    expect(result.closed).toHaveLength(2);
    const events = await eventsOf(db, w.id);
    expect(events.map((event) => [event.type, event.created_at])).toEqual([
      ['recovery.lost', NOW],
      ['recovery.lost', NOW],
    ]);
    await expectRefusal(
      db,
      'invalid_param',
      () => closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: w.id, replay: true }),
      /now: is required/,
    );
    await expectRefusal(
      db,
      'invalid_param',
      () =>
        closeStaleCampaigns(db, {
          olderThanDays: 30,
          workspaceId: w.id,
          now: new Date(Date.now() + 86_400_000),
          replay: true,
        }),
      /now: must not be in the future/,
    );
  });

  it('works through more stale campaigns than one batch holds', async () => {
    const { db } = database.current;
    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [
        {
          key: 'W',
          customers: [{ key: 'c', subscriptions: [{}] }],
          campaigns: Array.from({ length: 23 }, (_, index) => ({
            customer: 'c',
            first_failed_at: daysBefore(100 - index),
          })),
        },
      ],
    });
    const w = loaded.workspaces.W!;
    const result = await closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: w.id, now: NOW, batchSize: 5 });
    // Oldest first: the fixture lists them oldest first.
    expect(result.closed).toEqual(Object.values(w.campaigns));
    expect(await eventsOf(db, w.id)).toHaveLength(23);
  });

  it('measures age from the database clock when no time is given', async () => {
    const { db } = database.current;
    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [
        {
          key: 'W',
          customers: [{ key: 'c', subscriptions: [{}] }],
          campaigns: [
            { key: 'old', customer: 'c', first_failed_at: new Date(Date.now() - 31 * 86_400_000).toISOString() },
            { key: 'young', customer: 'c', first_failed_at: new Date(Date.now() - 29 * 86_400_000).toISOString() },
          ],
        },
      ],
    });
    const w = loaded.workspaces.W!;
    expect(await closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: w.id })).toEqual({
      closed: [w.campaigns.old],
    });
    const row = await db('recovery_campaigns').where({ id: w.campaigns.old }).first();
    expect(Math.abs((row.closed_at as Date).getTime() - Date.now())).toBeLessThan(60_000);
  });

  describe('refusals write nothing', () => {
    it.each([[0], [-1], [1.5], [3651], [Number.NaN]])('invalid_param for %p days', async (days) => {
      const { db } = database.current;
      await expectRefusal(
        db,
        'invalid_param',
        () => closeStaleCampaigns(db, { olderThanDays: days }),
        /older_than_days/,
      );
    });

    it('invalid_param for a non-UUID workspace and a bad batch size; not_found for an unknown workspace', async () => {
      const { db } = database.current;
      await expectRefusal(db, 'invalid_param', () =>
        closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: 'acme' }),
      );
      await expectRefusal(db, 'invalid_param', () => closeStaleCampaigns(db, { olderThanDays: 30, batchSize: 0 }));
      await expectRefusal(db, 'invalid_param', () =>
        closeStaleCampaigns(db, { olderThanDays: 30, now: new Date(Number.NaN) }),
      );
      await expectRefusal(db, 'not_found', () =>
        closeStaleCampaigns(db, { olderThanDays: 30, workspaceId: UNKNOWN_ID }),
      );
    });
  });
});
