import type { Knex } from 'knex';

/**
 * A campaigns search (`q`) by the start of an invoice id (docs/dashboard-api.md, "Text filters";
 * measured in docs/performance.md, "Cancel session filters and invoice prefixes"):
 * `psp_invoice_id LIKE 'in\_1Mt%'`. The unique key's index (workspace_id, psp_invoice_id) orders
 * by the database's collation, and a LIKE prefix can use a btree only in the C collation (a
 * `C.UTF-8` database is not that either): without this index the search read every campaign
 * of every workspace (a parallel scan, 91 ms on a million). `text_pattern_ops` compares bytes, so
 * the prefix is a range of this index whatever the collation.
 */
export async function up(knex: Knex): Promise<void> {
  // Building it holds writes to campaigns for its duration (1.3 s for a million: docs/upgrading.md);
  // the wait for the lock behind a long transaction is bounded too.
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    CREATE INDEX recovery_campaigns_invoice_prefix_idx
      ON recovery_campaigns (workspace_id, psp_invoice_id text_pattern_ops);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX recovery_campaigns_invoice_prefix_idx;');
}
