import { describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { roundedRatio } from '@retention/core';
import { computeStats, type Db } from '@retention/db';
import { loadFixtures } from '@retention/domain';
import { eventually, useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';

const database = useTestDatabase();

/** A workspace with one customer and subscription; its ids, for rows inserted directly. */
async function emptyWorkspace(db: Db) {
  const result = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [{ key: 'w', customers: [{ key: 'c', subscriptions: [{ key: 's' }] }] }],
  });
  const ids = result.workspaces.w!;
  return { workspace_id: ids.id, customer_id: ids.customers.c!, subscription_id: ids.subscriptions.s! };
}

type Owner = Awaited<ReturnType<typeof emptyWorkspace>>;

let invoice = 0;
function recoveredCampaign(owner: Owner, failedAt: Date, durationMs: number) {
  invoice += 1;
  const recoveredAt = new Date(failedAt.getTime() + durationMs);
  return {
    ...owner,
    psp_invoice_id: `in_${invoice}`,
    amount_cents: 100,
    currency: 'usd',
    status: 'recovered',
    decline_code: 'insufficient_funds',
    decline_category: 'soft',
    recovered_via: 'retry',
    first_failed_at: failedAt,
    recovered_at: recoveredAt,
    closed_at: recoveredAt,
  };
}

/** The median computed from the source rows alone, rounded half up by Postgres's numeric `round`. */
async function medianFromSourceRows(db: Db, workspaceId: string): Promise<number | null> {
  const { rows } = await db.raw<{ rows: Array<{ days: string | null }> }>(
    `SELECT round((percentile_cont(0.5) WITHIN GROUP (
              ORDER BY greatest(0, extract(epoch FROM recovered_at - first_failed_at) * 1000)))::numeric / 86400000, 2)::text AS days
       FROM recovery_campaigns WHERE workspace_id = ? AND status = 'recovered'`,
    [workspaceId],
  );
  return rows[0]!.days === null ? null : Number(rows[0]!.days);
}

describe('roundedRatio', () => {
  it.each([
    [57, 800, 4, 0.0713], // 0.07125: floating point gives 0.0712
    [1, 3, 4, 0.3333],
    [2, 3, 4, 0.6667],
    [1, 8, 2, 0.13],
    [0, 7, 4, 0],
    [7, 7, 4, 1],
    [86_832_000, 86_400_000, 2, 1.01], // 1.005: floating point gives 1
    [1, 20_000, 4, 0.0001], // 0.00005
    [1, 80_000, 4, 0], // 0.0000125
  ])('%d / %d to %d places is %d, rounded half up', (numerator, denominator, places, expected) => {
    expect(roundedRatio(numerator, denominator, places)).toBe(expected);
  });

  it('rounds every exact half up where floating point does not', () => {
    let floatWrong = 0;
    for (let denominator = 1; denominator <= 800; denominator += 1) {
      for (let numerator = 0; numerator <= denominator; numerator += 1) {
        const scaled = BigInt(numerator) * 20_000n; // twice the value in ten-thousandths
        const expected = Number((scaled + BigInt(denominator)) / (2n * BigInt(denominator))) / 10_000;
        if (scaled % BigInt(denominator) === 0n && (scaled / BigInt(denominator)) % 2n === 1n) {
          // An exact half: the one case the two methods can disagree on.
          expect(roundedRatio(numerator, denominator, 4)).toBe(expected);
          if (Math.round((numerator / denominator) * 10_000) / 10_000 !== expected) floatWrong += 1;
        }
      }
    }
    expect(floatWrong).toBeGreaterThan(0);
  });
});

describe('median_days_to_recover', () => {
  it('equals the exact median over the source rows, for odd and even counts, ties and shared hours', async () => {
    const { db } = database.current;
    const owner = await emptyWorkspace(db);
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const failedAt = new Date('2026-02-01T00:00:00Z');
    const durations = [
      ...Array.from({ length: 400 }, () => Math.floor(random() * 40 * 3_600_000)), // ~10 per hour
      ...Array.from({ length: 20 }, () => 17 * 3_600_000 + 1_234), // one shared exact duration
    ];
    await db.batchInsert(
      'recovery_campaigns',
      durations.map((duration, i) => recoveredCampaign(owner, new Date(failedAt.getTime() + i), duration)),
      200,
    );
    for (let round = 0; round < 6; round += 1) {
      const expected = await medianFromSourceRows(db, owner.workspace_id);
      expect(expected).not.toBeNull();
      expect((await computeStats(db, owner.workspace_id)).recovery.median_days_to_recover).toBe(expected);
      // Drop one campaign from the middle half: the count flips between odd and even.
      const [victim] = await db('recovery_campaigns')
        .where({ workspace_id: owner.workspace_id })
        .orderByRaw('recovered_at - first_failed_at')
        .offset(150 + round * 17)
        .limit(1)
        .pluck('id');
      await db('recovery_campaigns').where({ id: victim }).delete();
    }
  });

  it('reads only the hour that holds a median rank, through the recovery-time index', async () => {
    const { db } = database.current;
    const owner = await emptyWorkspace(db);
    const failedAt = new Date('2026-02-01T00:00:00Z');
    await db.batchInsert(
      'recovery_campaigns',
      Array.from({ length: 5_000 }, (_, i) =>
        recoveredCampaign(owner, new Date(failedAt.getTime() + i), ((i * 7_919) % 5_000) * 60_000),
      ),
      1_000,
    );
    await db.raw('ANALYZE recovery_campaigns');
    const queries: Knex.Sql[] = [];
    const capture = (query: Knex.Sql) => {
      if (query.sql.includes('"recovery_campaigns"')) queries.push(query);
    };
    db.on('query', capture);
    try {
      await computeStats(db, owner.workspace_id);
    } finally {
      db.off('query', capture);
    }
    expect(queries).toHaveLength(2); // the middle two of 5,000
    for (const query of queries) {
      const { rows } = await db.raw<{ rows: Array<{ 'QUERY PLAN': unknown }> }>(
        `EXPLAIN (FORMAT JSON) ${query.sql.replace(/\$\d+/g, '?')}`,
        query.bindings as Knex.RawBinding[],
      );
      const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
      expect(plan).toContain('recovery_campaigns_recovery_time_idx');
      expect(plan).not.toContain('Seq Scan');
    }
  });
});

describe('computeStats', () => {
  it('reads every figure from one snapshot, even while a write commits between its queries', async () => {
    const { db } = database.current;
    const owner = await emptyWorkspace(db);
    const failedAt = new Date('2026-02-01T00:00:00Z');
    await db('recovery_campaigns').insert(recoveredCampaign(owner, failedAt, 3_600_000));
    const session = { ...owner, outcome: 'canceled', reason_code: 'other', monthly_mrr_cents: 100, currency: 'usd' };
    await db('cancel_sessions').insert(session);

    // Hold the session rollups, so that the stats are made to wait in the middle of their reads.
    const writer = await db.transaction();
    try {
      await writer.raw('LOCK TABLE cancel_session_rollups IN ACCESS EXCLUSIVE MODE');
      const stats = computeStats(db, owner.workspace_id);
      await eventually(async () => {
        const { rows } = await db.raw<{ rows: unknown[] }>(
          "SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'cancel_session_rollups'::regclass",
        );
        return rows.length > 0;
      });
      await writer('recovery_campaigns').insert(recoveredCampaign(owner, failedAt, 7_200_000));
      await writer('cancel_sessions').insert(session);
      await writer.commit();

      const { recovery, cancel_flow } = await stats;
      // Both from before the write, or both from after it: never one of each.
      expect([
        [1, 1],
        [2, 2],
      ]).toContainEqual([recovery.recovered, cancel_flow.sessions]);
    } finally {
      if (!writer.isCompleted()) await writer.rollback();
    }
    const after = await computeStats(db, owner.workspace_id);
    expect([after.recovery.recovered, after.cancel_flow.sessions]).toEqual([2, 2]);
  });
});
