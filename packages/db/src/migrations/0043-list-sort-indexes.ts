import type { Knex } from 'knex';

/**
 * The dashboard lists' amount orders (docs/dashboard-api.md, "Sorting"; measured in
 * docs/performance.md, "Sorted lists"): campaigns by amount and cancel sessions by monthly MRR,
 * each within currency, either way. Each index is (workspace_id, currency, amount, id), read
 * forward for smallest first and backward for largest first, so a first page is its first 51
 * entries and a page after any cursor one range read from it. Without them a first page sorted
 * the workspace's every campaign (a top-N heapsort over the whole workspace). The orders by time
 * read the list indexes (0003, 0004) backward; they need nothing new.
 */
export async function up(knex: Knex): Promise<void> {
  // Building an index holds writes to its table for its duration (about a second for a million
  // campaigns); the wait for the lock behind a long transaction is bounded too (0038).
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    CREATE INDEX recovery_campaigns_amount_idx ON recovery_campaigns (workspace_id, currency, amount_cents, id);
    CREATE INDEX cancel_sessions_mrr_idx ON cancel_sessions (workspace_id, currency, monthly_mrr_cents, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX recovery_campaigns_amount_idx;
    DROP INDEX cancel_sessions_mrr_idx;
  `);
}
