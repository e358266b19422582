import { toIsoMillis } from '@retention/core';
import type { Queryable } from '@retention/db';

/**
 * Deliveries refused for a bad or stale signature, per connection (docs/processor.md, "Refused
 * deliveries"): the sign of a mistyped or outdated signing secret, which otherwise showed only
 * as `last_event_at` standing still while the page said "Connected and syncing". A count and two
 * times: a refused delivery stores nothing else, never its body nor its signature.
 */
export interface RefusedDeliveries {
  count: number;
  /** The first refusal since the signing secret was last set. */
  since: string;
  last_at: string;
  /** No event was accepted since the first refusal: Stripe's deliveries are all being refused. */
  none_accepted_since: boolean;
  /** In words, for `processor status` (the dashboard says it with local times). */
  message: string;
}

/**
 * Adds refused deliveries to their connections' counts, `counts` holding how many per connection
 * id, in one statement (the receiver gathers the refusals that arrive together: each connection
 * has one row, which every refusal would otherwise lock in turn). Rows are written in id order,
 * so two API processes counting the same connections never wait on each other in a cycle. A
 * connection deleted meanwhile is left out rather than failing the others' counts.
 */
export async function recordRefusedDeliveries(db: Queryable, counts: ReadonlyMap<string, number>): Promise<void> {
  const ids = [...counts.keys()].sort();
  if (ids.length === 0) return;
  await db.raw(
    `INSERT INTO processor_refused_deliveries (connection_id, refused, first_at, last_at)
     SELECT c.id, t.refused, now(), now()
       FROM unnest(?::uuid[], ?::integer[]) WITH ORDINALITY AS t(connection_id, refused, n)
       JOIN processor_connections c ON c.id = t.connection_id
      ORDER BY t.n
     ON CONFLICT (connection_id) DO UPDATE
       SET refused = processor_refused_deliveries.refused + excluded.refused, last_at = now()`,
    [ids, ids.map((id) => counts.get(id)!)],
  );
}

/** Forgets the count: the signing secret was set again, so refusals are counted against the new one. */
export async function clearRefusedDeliveries(db: Queryable, connectionId: string): Promise<void> {
  await db('processor_refused_deliveries').where({ connection_id: connectionId }).delete();
}

/** The count since the secret was set, or null when none was refused; `lastEventAt`: the last event accepted. */
export async function refusedDeliveriesOf(
  db: Queryable,
  connectionId: string,
  lastEventAt: Date | null,
): Promise<RefusedDeliveries | null> {
  const row = (await db('processor_refused_deliveries').where({ connection_id: connectionId }).first()) as
    { refused: number; first_at: Date; last_at: Date } | undefined;
  if (!row) return null;
  const since = toIsoMillis(row.first_at);
  const lastAt = toIsoMillis(row.last_at);
  return {
    count: row.refused,
    since,
    last_at: lastAt,
    none_accepted_since: lastEventAt === null || lastEventAt < row.first_at,
    message:
      `${row.refused} ${row.refused === 1 ? 'delivery' : 'deliveries'} refused for a bad signature since ${since}, ` +
      `the last at ${lastAt}: check the signing secret`,
  };
}
