import type { Knex } from 'knex';

/**
 * The dashboard's search by part of a customer's e-mail or name (docs/dashboard-api.md,
 * "Text filters"): `q` on the customers list is a substring of
 * lower(email || ' ' || coalesce(name, '')), and the campaigns list's `q` finds the campaigns of
 * the customers it matches. A substring (LIKE '%…%') cannot use a btree; pg_trgm's GIN operator
 * class indexes the text's trigrams, so a search of 3 characters or more reads only the rows
 * holding its trigrams. btree_gin lets the same GIN index lead with workspace_id (a uuid), so a
 * search never reads another workspace's customers. Both extensions ship with PostgreSQL
 * (contrib) and are trusted since PostgreSQL 13: the database's owner creates them, no superuser
 * needed (docs/upgrading.md).
 *
 * The expression is customerSearchText in queries/customer-list.ts, written out here as it was
 * at this migration: a query must repeat it exactly for the planner to use the index.
 *
 * The expression's statistics target is 1,000 (ANALYZE keeps a histogram of 1,000 of its values):
 * the planner estimates how many customers `LIKE '%jane doe%'` matches by trying the pattern on
 * that sample. At the default 100, a name matching 111 of 200,000 customers was estimated at
 * 2,020 (the sample's floor, 1%), and the list walked customers_list_idx newest first through
 * 123,000 rows (265 ms) instead of reading the 111 through this index (18 ms), on the API bench.
 * The expression has no statistics until the table is next analyzed, so the migration analyzes
 * it (2 s for 200,000 customers) rather than leave the first searches to the 1% guess.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    CREATE EXTENSION IF NOT EXISTS btree_gin;
    CREATE INDEX customers_search_idx ON customers
      USING gin (workspace_id, (lower(email || ' ' || coalesce(name, ''))) gin_trgm_ops);
    ALTER INDEX customers_search_idx ALTER COLUMN 2 SET STATISTICS 1000;
    ANALYZE customers;
  `);
}

/**
 * Drops the index and the extensions (a rollback leaves no function of theirs in the schema).
 * Without CASCADE: where something else of the database uses an extension, Postgres refuses and
 * the rollback stops there rather than drop it.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX customers_search_idx;
    DROP EXTENSION IF EXISTS btree_gin;
    DROP EXTENSION IF EXISTS pg_trgm;
  `);
}
