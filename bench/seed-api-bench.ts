import { createToken, createWorkspace } from '@retention/domain';
import type { Knex } from 'knex';
import type { Db } from '@retention/db';

/**
 * The data set of `npm run bench:api`: one workspace with 200,000 customers (one subscription
 * each), 1,000,000 campaigns in every status and four currencies, 200,000 cancel sessions,
 * spread over a year. Generated inside Postgres, so seeding takes a minute, not an hour.
 */
const BENCH_WORKSPACE_NAME = 'bench: one million campaigns';

export interface BenchWorkspace {
  workspaceId: string;
  token: string;
}

export async function findOrSeedBenchWorkspace(db: Db, log: (line: string) => void): Promise<BenchWorkspace> {
  const existing = await db('workspaces').where({ name: BENCH_WORKSPACE_NAME }).first<{ id: string } | undefined>('id');
  const workspaceId = existing?.id ?? (await seed(db, log));
  // VACUUM as well: it builds the visibility map and sets hint bits, as autovacuum would soon do
  // in production, so the first timed reads do not pay for writing them.
  if (!existing) await db.raw('VACUUM (ANALYZE) customers, subscriptions, recovery_campaigns, cancel_sessions');
  // A fresh token each run: token values are never stored, so an old one cannot be recovered.
  const { token } = await createToken(db, {
    workspace_id: workspaceId,
    name: 'bench',
    rate_limit_per_minute: 1_000_000,
  });
  return { workspaceId, token };
}

/** All or nothing: an interrupted seed leaves no half-filled workspace for the next run to reuse. */
async function seed(db: Db, log: (line: string) => void): Promise<string> {
  return db.transaction(async (trx) => {
    const workspace = await createWorkspace(trx, { name: BENCH_WORKSPACE_NAME });
    await fill(trx, workspace.id, log);
    return workspace.id;
  });
}

async function fill(db: Knex.Transaction, id: string, log: (line: string) => void): Promise<void> {
  const step = async (label: string, sql: string, bindings: Record<string, unknown> = {}) => {
    const started = Date.now();
    await db.raw(sql, { id, ...bindings });
    log(`  ${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  };
  log('seeding the benchmark workspace (once; later runs reuse it)');
  await step(
    '200,000 customers',
    `INSERT INTO customers (workspace_id, psp_customer_id, email, name, tags, created_at)
     SELECT :id, 'cus_' || g, 'customer' || g || '@bench.test', 'Customer ' || g,
            CASE WHEN g % 10 = 0 THEN ARRAY['vip'] ELSE '{}'::text[] END,
            now() - make_interval(secs => g * 150)
       FROM generate_series(1, 200000) g`,
  );
  await step(
    '200,000 subscriptions',
    `INSERT INTO subscriptions (workspace_id, customer_id, psp_subscription_id, status, plan_name, amount_cents, currency, interval, created_at)
     SELECT workspace_id, id, 'sub_' || psp_customer_id, 'active', 'Pro', 4900, 'usd', 'month', created_at
       FROM customers WHERE workspace_id = :id`,
  );
  for (let first = 1; first <= 1_000_000; first += 100_000) {
    await step(
      `campaigns ${first.toLocaleString('en')}..${(first + 99_999).toLocaleString('en')}`,
      `WITH numbered AS (
       SELECT row_number() OVER (ORDER BY id) AS n, customer_id, id AS subscription_id
         FROM subscriptions WHERE workspace_id = :id
     )
     INSERT INTO recovery_campaigns (workspace_id, customer_id, subscription_id, psp_invoice_id, amount_cents, currency,
                                     status, decline_code, decline_category, recovered_via, first_failed_at, recovered_at, closed_at)
     SELECT :id, s.customer_id, s.subscription_id, 'in_' || g, 500 + (g * 37) % 20000,
            (ARRAY['usd', 'eur', 'gbp', 'jpy'])[1 + g % 4],
            c.status, c.code, c.category,
            CASE WHEN c.status = 'recovered' THEN (ARRAY['retry', 'customer_update', 'spontaneous', 'manual'])[1 + g % 4] END,
            f.failed_at,
            CASE WHEN c.status = 'recovered' THEN f.failed_at + make_interval(hours => g % 200) END,
            CASE WHEN c.status <> 'in_flight' THEN f.failed_at + make_interval(hours => g % 200) END
       FROM generate_series(:first::int, :first::int + 99999) g
       JOIN numbered s ON s.n = 1 + g % 200000
       CROSS JOIN LATERAL (SELECT now() - make_interval(secs => g * 30) AS failed_at) f
       CROSS JOIN LATERAL (SELECT
            (ARRAY['in_flight', 'in_flight', 'recovered', 'recovered', 'recovered', 'recovered', 'recovered', 'lost', 'lost', 'abandoned'])[1 + g % 10] AS status,
            (ARRAY['insufficient_funds', 'generic_decline', 'expired_card', 'do_not_honor', 'authentication_required'])[1 + g % 5] AS code,
            (ARRAY['soft', 'soft', 'card_update_required', 'soft', 'authentication_required'])[1 + g % 5] AS category) c`,
      { first },
    );
  }
  await step(
    '200,000 cancel sessions',
    `WITH numbered AS (
       SELECT row_number() OVER (ORDER BY id) AS n, id AS customer_id FROM customers WHERE workspace_id = :id
     )
     INSERT INTO cancel_sessions (workspace_id, customer_id, outcome, reason_code, monthly_mrr_cents, currency, created_at, ended_at)
     SELECT :id, s.customer_id,
            (ARRAY['saved_discount', 'saved_pause', 'saved_downgrade', 'saved_other', 'canceled', 'abandoned'])[1 + g % 6],
            (ARRAY['too_expensive', 'missing_features', 'switched_service', 'unused', 'other'])[1 + g % 5],
            1000 + g % 9000, (ARRAY['usd', 'eur', 'gbp', 'jpy'])[1 + g % 4],
            now() - make_interval(secs => g * 150), now() - make_interval(secs => g * 150)
       FROM generate_series(1, 200000) g JOIN numbered s ON s.n = g`,
  );
}
