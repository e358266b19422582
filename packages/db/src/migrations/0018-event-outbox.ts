import type { Knex } from 'knex';

/**
 * The events still to dispatch get a narrow table of their own, `event_outbox`, instead of a
 * `dispatched_at` stamp on the event (docs/performance.md, "A narrow outbox"). Stamping an
 * event rewrote its whole row: the payload, and an entry in each of its indexes, since the
 * partial index of undispatched events names the column and so the update could never be HOT.
 * For 20,000 events that was 476-544 ms of Postgres against 83-103 ms to delete the same
 * events from a two-column table, and it left a dead version of every event in the history.
 *
 * - A statement trigger on `events` enqueues every event inserted, whoever inserts it (the
 *   domain's `recordEvents`, the demo's replay, or the previous release's code while a
 *   rolling deploy still runs it), and raises the NOTIFY that wakes the dispatchers (once per
 *   statement; the channel is the domain's OUTBOX_CHANNEL, written out here because a
 *   migration must not change when a constant does).
 * - The dispatcher deletes the rows it takes, in `seq` order, in the statement that makes
 *   their deliveries. A row whose event is gone (its workspace deleted) makes none.
 * - Events recorded before this migration and not yet dispatched are moved in; the others
 *   were dispatched, and their stamps go with the column.
 *
 * A worker of the previous release fails its dispatch query (no `dispatched_at`) and logs it
 * until it is replaced (its outbox-lag gauge too, and its `demo seed`, which rolls back); its
 * API and its domain actions keep recording events, which the trigger enqueues. Nothing is
 * dispatched twice: the workers of this release are the only ones that can dispatch.
 *
 * `events` is locked first, whole: the trigger and the dropped index each need a lock on it,
 * and taking the weaker one first could deadlock with a transaction that read events and then
 * records one. The lock waits for the transactions in flight, at most 10 s (writers queue
 * behind it meanwhile); past that the migration fails, changing nothing, and can be run again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    LOCK TABLE events IN ACCESS EXCLUSIVE MODE;

    CREATE TABLE event_outbox (
      seq      bigint PRIMARY KEY,
      event_id uuid NOT NULL
    );

    CREATE FUNCTION enqueue_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO event_outbox (seq, event_id) SELECT seq, id FROM inserted_events;
      PERFORM pg_notify('retention_outbox', '');
      RETURN NULL;
    END
    $$;
    CREATE TRIGGER events_enqueue AFTER INSERT ON events
      REFERENCING NEW TABLE AS inserted_events
      FOR EACH STATEMENT EXECUTE FUNCTION enqueue_events();

    INSERT INTO event_outbox (seq, event_id) SELECT seq, id FROM events WHERE dispatched_at IS NULL;
    DROP INDEX events_undispatched_idx;
    ALTER TABLE events DROP COLUMN dispatched_at;
  `);
}

/**
 * Back to the stamp, without rewriting the history: the column is added with a constant
 * default, which Postgres keeps in its catalog for the rows already there (dispatched, at a
 * time no longer known: '-infinity'); then only the events still in the outbox are set back
 * to NULL, undispatched.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    LOCK TABLE events IN ACCESS EXCLUSIVE MODE;
    ALTER TABLE events ADD COLUMN dispatched_at timestamptz(3) DEFAULT '-infinity';
    ALTER TABLE events ALTER COLUMN dispatched_at DROP DEFAULT;
    UPDATE events SET dispatched_at = NULL WHERE id IN (SELECT event_id FROM event_outbox);
    CREATE INDEX events_undispatched_idx ON events (seq) WHERE dispatched_at IS NULL;
    DROP TRIGGER events_enqueue ON events;
    DROP FUNCTION enqueue_events();
    DROP TABLE event_outbox;
  `);
}
