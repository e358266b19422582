import type { Knex } from 'knex';

/**
 * Indexes the dashboard's own lists and details need (docs/dashboard-api.md, "Data pages";
 * measured in docs/performance.md, "Dashboard API", on 1,000,000 campaigns and 200,000 cancel
 * sessions). Without them a filter value with few or no rows scans the workspace's whole list
 * index, and a customer's cancel sessions scan every session of the workspace:
 * - campaigns by decline_category: 4.3 s median (no rows of the category) at 50 connections;
 * - cancel sessions by reason_code: 0.5 s (no rows of the reason);
 * - a customer's detail (its newest cancel sessions): 0.55 s.
 * Each is the list's (workspace_id, filter, time DESC, id DESC), so a keyset page after any
 * cursor is one range read.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX recovery_campaigns_category_idx
      ON recovery_campaigns (workspace_id, decline_category, first_failed_at DESC, id DESC);
    CREATE INDEX cancel_sessions_reason_idx ON cancel_sessions (workspace_id, reason_code, created_at DESC, id DESC);
    CREATE INDEX cancel_sessions_customer_idx ON cancel_sessions (workspace_id, customer_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'DROP INDEX recovery_campaigns_category_idx; DROP INDEX cancel_sessions_reason_idx; DROP INDEX cancel_sessions_customer_idx;',
  );
}
