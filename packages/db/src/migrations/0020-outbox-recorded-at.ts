import type { Knex } from 'knex';

/**
 * Each outbox row carries `recorded_at`, when its event was recorded, apart from the event's
 * `created_at`, when it happened. The two were one until events applied from the payment
 * processor took the processor's time (docs/processor.md, "Times"): an event Stripe dated two
 * days ago is recorded now. The dispatcher sends an event to the endpoints that existed when it
 * was recorded (an endpoint added later does not get the backlog still in the outbox), and the
 * outbox-lag gauge measures how long events have waited: both read `recorded_at`, so a
 * back-dated event neither skips the endpoints added since it happened nor reads as days of lag.
 *
 * The rows waiting now get their event's `created_at`, which was their recording time until
 * this release; the trigger (0018) names only `seq` and `event_id`, so the default fills the
 * column for every new row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE event_outbox ADD COLUMN recorded_at timestamptz(3);
    UPDATE event_outbox o SET recorded_at = ev.created_at FROM events ev WHERE ev.id = o.event_id;
    UPDATE event_outbox SET recorded_at = now() WHERE recorded_at IS NULL;
    ALTER TABLE event_outbox ALTER COLUMN recorded_at SET DEFAULT now(), ALTER COLUMN recorded_at SET NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE event_outbox DROP COLUMN recorded_at;');
}
