import type { Knex } from 'knex';
import type { Db } from '../../src/index.js';

/** The plan Postgres picks (EXPLAIN, JSON) for the first query `work` sends to `table`. */
export async function planOf(db: Db, table: string, work: () => Promise<unknown>): Promise<string> {
  const queries: Knex.Sql[] = [];
  const capture = (query: Knex.Sql) => {
    if (query.sql.includes(`"${table}"`)) queries.push(query);
  };
  db.on('query', capture);
  try {
    await work();
  } finally {
    db.off('query', capture);
  }
  const { rows } = await db.raw<{ rows: Array<{ 'QUERY PLAN': unknown }> }>(
    `EXPLAIN (FORMAT JSON) ${queries[0]!.sql.replace(/\$\d+/g, '?')}`,
    queries[0]!.bindings as Knex.RawBinding[],
  );
  return JSON.stringify(rows[0]!['QUERY PLAN']);
}
