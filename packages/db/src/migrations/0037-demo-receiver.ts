import type { Knex } from 'knex';

/**
 * Where `npm start`'s demo webhook receiver listened at its last start (docs/decisions.md, "The
 * demo receiver keeps its port"): the next start listens on the same port when it is free, so
 * the endpoints on it (the demo's, and any a developer added at the receiver's URL) keep
 * working with nothing repointed; when it is taken, the start knows which endpoints to move.
 * One row at most, for the database (one receiver per `npm start`), written by `npm start`
 * alone; a database no `npm start` ran on (production) leaves it empty. A new table: nothing
 * else is touched or locked.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE demo_receiver (
      only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      origin     text NOT NULL CHECK (origin ~ '^https://127\\.0\\.0\\.1:[0-9]{1,5}$'),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE demo_receiver;');
}
