import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ServiceError } from '@retention/core';
import { createDb, type Db } from '@retention/db';
import { closeStaleCampaigns, loadFixtures, loseCampaign, openCampaign, recoverCampaign } from '@retention/domain';
import { eventually, runCli, useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';
import { actionGraph, eventsOf, type ActionGraph } from './helpers.js';

const database = useTestDatabase();

let g: ActionGraph;
/** Two pools of their own: the racing calls never share a connection. */
let poolA: Db;
let poolB: Db;
let invoice = 0;

beforeAll(async () => {
  g = await actionGraph(database.current.db);
  poolA = createDb(database.current.url, { poolMax: 2 });
  poolB = createDb(database.current.url, { poolMax: 2 });
});

afterAll(async () => {
  await Promise.all([poolA.destroy(), poolB.destroy()]);
});

async function openOne(): Promise<string> {
  invoice += 1;
  const campaign = await openCampaign(database.current.db, {
    workspace_id: g.a.id,
    customer_id: g.a.ann,
    subscription_id: g.a.active,
    psp_invoice_id: `in_race_${invoice}`,
    amount_cents: 4900,
    currency: 'usd',
    decline_code: 'generic_decline',
  });
  return campaign.id;
}

/** Sessions of this database waiting for a row lock, optionally only those of one program. */
async function lockWaiters(applicationName?: string): Promise<number> {
  const { rows } = await database.current.db.raw<{ rows: Array<{ count: number }> }>(
    `SELECT count(*) AS count FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND (CAST(? AS text) IS NULL OR application_name = ?)`,
    [applicationName ?? null, applicationName ?? null],
  );
  return rows[0]!.count;
}

/**
 * Holds the campaign's row lock while `start` launches the racing calls, waits until
 * `waiters` of them are blocked on that lock, then lets them all go at once: the race is
 * certain, not left to the scheduler.
 */
async function race<T>(campaignId: string, waiters: number, start: () => Promise<T>, applicationName?: string) {
  const blocker = await database.current.db.transaction();
  await blocker('recovery_campaigns').where({ id: campaignId }).forUpdate();
  const running = start();
  try {
    await eventually(async () => (await lockWaiters(applicationName)) >= waiters, 30_000);
  } finally {
    await blocker.commit();
  }
  return running;
}

describe('two simultaneous recover calls on one campaign', () => {
  it('in two connections: exactly one succeeds, the other is a conflict, one event is written', async () => {
    const id = await openOne();
    const results = await race(id, 2, () =>
      Promise.allSettled([
        recoverCampaign(poolA, { id, via: 'retry' }),
        recoverCampaign(poolB, { id, via: 'customer_update' }),
      ]),
    );
    const fulfilled = results.filter((result) => result.status === 'fulfilled');
    const rejected = results.filter((result) => result.status === 'rejected');
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    const reason = (rejected[0] as PromiseRejectedResult).reason as ServiceError;
    expect(reason).toBeInstanceOf(ServiceError);
    expect(reason.type).toBe('conflict');

    const winner = (fulfilled[0] as PromiseFulfilledResult<{ recovered_via: string }>).value;
    const events = (await eventsOf(database.current.db, g.a.id)).filter(
      (event) => event.type === 'recovery.recovered' && event.data.campaign_id === id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]!.data.recovered_via).toBe(winner.recovered_via);
    const row = await database.current.db('recovery_campaigns').where({ id }).first();
    expect(row).toMatchObject({ status: 'recovered', recovered_via: winner.recovered_via });
  });

  it('in two CLI processes: one exits 0, the other exits 1 with conflict, one event is written', async () => {
    const id = await openOne();
    const env = { DATABASE_URL: database.current.url };
    const [first, second] = await race(
      id,
      2,
      () =>
        Promise.all([
          runCli(['campaign', 'recover', '--id', id, '--via', 'retry'], env),
          runCli(['campaign', 'recover', '--id', id, '--via', 'spontaneous'], env),
        ]),
      'retention-cli',
    );
    expect([first.code, second.code].sort()).toEqual([0, 1]);
    const loser = first.code === 1 ? first : second;
    expect(loser.stdout).toBe('');
    expect(loser.error).toEqual({ type: 'conflict', message: expect.stringContaining('already recovered') });
    const events = (await eventsOf(database.current.db, g.a.id)).filter(
      (event) => event.type === 'recovery.recovered' && event.data.campaign_id === id,
    );
    expect(events).toHaveLength(1);
  });
});

describe('a recover and a lose call on one campaign at once', () => {
  it("exactly one succeeds, the other is a conflict, and the one event is the winner's", async () => {
    const id = await openOne();
    const [recovered, lost] = await race(id, 2, () =>
      Promise.allSettled([
        recoverCampaign(poolA, { id, via: 'retry' }),
        loseCampaign(poolB, { id, by: 'operator', actor_id: g.a.member }),
      ]),
    );
    expect([recovered.status, lost.status].sort()).toEqual(['fulfilled', 'rejected']);
    const refused = (recovered.status === 'rejected' ? recovered : lost) as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ type: 'conflict' });

    const row = await database.current.db('recovery_campaigns').where({ id }).first();
    const events = (await eventsOf(database.current.db, g.a.id)).filter((event) => event.data.campaign_id === id);
    expect(events.map((event) => event.type)).toEqual(['recovery.opened', expect.any(String)]);
    expect([row.status, events[1]!.type]).toEqual(
      recovered.status === 'fulfilled' ? ['recovered', 'recovery.recovered'] : ['lost', 'recovery.lost'],
    );
  });
});

describe('closeStaleCampaigns from several workers at once', () => {
  it('closes every stale campaign exactly once, with exactly one event each', async () => {
    const { db } = database.current;
    const stale = Array.from({ length: 1_200 }, (_, index) => ({
      key: `k${index}`,
      customer: 'c',
      psp_invoice_id: `in_stale_${index}`,
      // A few share a first-failure time, so the claim order has ties to break.
      first_failed_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(index / 3) * 60_000).toISOString(),
    }));
    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [{ key: 'W', customers: [{ key: 'c', subscriptions: [{}] }], campaigns: stale }],
    });
    const workspaceId = loaded.workspaces.W!.id;
    const expected = Object.values(loaded.workspaces.W!.campaigns).sort();

    const pools = [poolA, poolB, db];
    const runs = await Promise.all(
      pools.map((pool) => closeStaleCampaigns(pool, { olderThanDays: 30, workspaceId, batchSize: 50 })),
    );
    const closed = runs.flatMap((run) => run.closed);
    expect(closed).toHaveLength(expected.length);
    expect([...closed].sort()).toEqual(expected);

    const events = await eventsOf(db, workspaceId);
    expect(events).toHaveLength(expected.length);
    expect(new Set(events.map((event) => event.data.campaign_id)).size).toBe(expected.length);
    expect(events.every((event) => event.type === 'recovery.lost' && event.data.reason === 'auto_close_stale')).toBe(
      true,
    );
    const statuses = await db('recovery_campaigns')
      .where({ workspace_id: workspaceId })
      .select('status')
      .count<Array<{ status: string; count: number }>>('* as count')
      .groupBy('status');
    expect(statuses).toEqual([{ status: 'abandoned', count: expected.length }]);

    expect(await closeStaleCampaigns(db, { olderThanDays: 30, workspaceId })).toEqual({ closed: [] });
  });

  it('skips a campaign another transaction holds, and closes it on the next run', async () => {
    const { db } = database.current;
    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [
        {
          key: 'W',
          customers: [{ key: 'c', subscriptions: [{}] }],
          campaigns: [
            { key: 'held', customer: 'c', first_failed_at: '2026-01-01T00:00:00Z' },
            { key: 'free', customer: 'c', first_failed_at: '2026-01-02T00:00:00Z' },
          ],
        },
      ],
    });
    const { id: workspaceId, campaigns } = loaded.workspaces.W!;
    const blocker = await db.transaction();
    try {
      await blocker('recovery_campaigns').where({ id: campaigns.held }).forUpdate();
      expect(await closeStaleCampaigns(poolA, { olderThanDays: 30, workspaceId })).toEqual({
        closed: [campaigns.free],
      });
    } finally {
      await blocker.commit();
    }
    expect(await closeStaleCampaigns(poolA, { olderThanDays: 30, workspaceId })).toEqual({
      closed: [campaigns.held],
    });
  });

  /** A stale campaign (failed 2026-01-01) of a workspace of its own, so events are easy to count. */
  async function staleCampaign(): Promise<{ workspaceId: string; id: string }> {
    const loaded = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
      workspaces: [
        {
          key: 'W',
          customers: [{ key: 'c', subscriptions: [{}] }],
          campaigns: [{ key: 'k', customer: 'c', first_failed_at: '2026-01-01T00:00:00Z' }],
        },
      ],
    });
    return { workspaceId: loaded.workspaces.W!.id, id: loaded.workspaces.W!.campaigns.k! };
  }

  it('skips a campaign a recovery holds, without waiting: recovered once, one event', async () => {
    const { db } = database.current;
    const { workspaceId, id } = await staleCampaign();
    // The recovery has changed the row and holds its lock, but has not committed yet.
    const recovering = await poolA.transaction();
    try {
      await recoverCampaign(recovering, { id, via: 'retry' });
      expect(await closeStaleCampaigns(poolB, { olderThanDays: 30, workspaceId })).toEqual({ closed: [] });
      await recovering.commit();
    } finally {
      if (!recovering.isCompleted()) await recovering.rollback();
    }
    expect(await closeStaleCampaigns(poolB, { olderThanDays: 30, workspaceId })).toEqual({ closed: [] });
    const events = await eventsOf(db, workspaceId);
    expect(events.map((event) => event.type)).toEqual(['recovery.recovered']);
    expect(await db('recovery_campaigns').where({ id }).first()).toMatchObject({ status: 'recovered' });
  });

  it('makes a recovery and a loss that come while it holds a campaign wait, then refuses both: one event', async () => {
    const { db } = database.current;
    const { workspaceId, id } = await staleCampaign();
    // The job has abandoned the campaign and holds its lock, but has not committed yet.
    const sweeping = await poolB.transaction();
    let results: Array<PromiseSettledResult<unknown>>;
    try {
      expect(await closeStaleCampaigns(sweeping, { olderThanDays: 30, workspaceId })).toEqual({ closed: [id] });
      const racing = Promise.allSettled([
        recoverCampaign(poolA, { id, via: 'retry' }),
        loseCampaign(db, { id, by: 'processor' }),
      ]);
      await eventually(async () => (await lockWaiters()) >= 2, 30_000);
      await sweeping.commit();
      results = await racing;
    } finally {
      if (!sweeping.isCompleted()) await sweeping.rollback();
    }
    for (const result of results) {
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason as ServiceError;
      expect(reason).toMatchObject({ type: 'conflict', message: expect.stringContaining('already abandoned') });
    }
    const events = await eventsOf(db, workspaceId);
    expect(events.map((event) => [event.type, event.data.reason])).toEqual([['recovery.lost', 'auto_close_stale']]);
    expect(await db('recovery_campaigns').where({ id }).first()).toMatchObject({
      status: 'abandoned',
      closed_by_user_id: null,
    });
  });
});
