import type { Knex } from 'knex';

/**
 * Rules the first migrations left to the application, now held by the database too: a
 * campaign closes after its first failure and is recovered when it closes; tags are stored
 * trimmed; the attempt log names a real event type; a delivery's endpoint and a campaign's
 * closing user belong to the row's own workspace. Plus the full keyset index of the token list.
 *
 * Rows written before these rules were enforced are repaired first, so the migration
 * succeeds on a database in use: the close time is the database's own clock, so a failure
 * time after it (a fixture, or a caller's clock a few seconds ahead) becomes the close time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE recovery_campaigns SET recovered_at = closed_at WHERE recovered_at <> closed_at;
    UPDATE recovery_campaigns SET first_failed_at = closed_at WHERE closed_at < first_failed_at;
    ALTER TABLE recovery_campaigns
      ADD CONSTRAINT recovery_campaigns_closed_after_failure CHECK (closed_at >= first_failed_at),
      ADD CONSTRAINT recovery_campaigns_recovered_when_closed CHECK (recovered_at = closed_at);

    -- Each tag as the application normalises it (lowercase, trimmed, not empty).
    CREATE FUNCTION tags_are_normalized(tags text[]) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT coalesce(bool_and(tag = btrim(lower(tag)) AND tag <> ''), true) FROM unnest(tags) AS tag $$;
    UPDATE customers
       SET tags = ARRAY(
             SELECT tag FROM (
               SELECT btrim(lower(raw)) AS tag, min(position) AS first
                 FROM unnest(tags) WITH ORDINALITY AS given (raw, position)
                GROUP BY 1
             ) AS distinct_tags
              WHERE tag <> ''
              ORDER BY first)
     WHERE NOT tags_are_normalized(tags);
    ALTER TABLE customers ADD CONSTRAINT customers_tags_normalized CHECK (tags_are_normalized(tags));

    ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_event_type_check
      CHECK (event_type IN ('recovery.opened', 'recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost', 'trial.reminder_sent', 'reactivation.sent', 'winback.recorded', 'ping'));

    ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_workspace_id_id_key UNIQUE (workspace_id, id);
    ALTER TABLE webhook_deliveries
      DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey,
      ADD CONSTRAINT webhook_deliveries_workspace_endpoint_fkey FOREIGN KEY (workspace_id, endpoint_id)
        REFERENCES webhook_endpoints (workspace_id, id) ON DELETE CASCADE;

    ALTER TABLE users ADD CONSTRAINT users_workspace_id_id_key UNIQUE (workspace_id, id);
    ALTER TABLE recovery_campaigns
      DROP CONSTRAINT recovery_campaigns_closed_by_user_id_fkey,
      -- Only the user column is cleared when the user goes; the campaign stays in its workspace.
      ADD CONSTRAINT recovery_campaigns_workspace_closed_by_fkey FOREIGN KEY (workspace_id, closed_by_user_id)
        REFERENCES users (workspace_id, id) ON DELETE SET NULL (closed_by_user_id);

    -- The token list orders by (created_at DESC, id DESC) within a workspace.
    CREATE INDEX api_tokens_list_idx ON api_tokens (workspace_id, created_at DESC, id DESC);
    DROP INDEX api_tokens_workspace_idx;
  `);
}

/** Drops the constraints and restores the previous keys and index; repaired rows stay repaired. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX api_tokens_workspace_idx ON api_tokens (workspace_id, created_at DESC);
    DROP INDEX api_tokens_list_idx;

    ALTER TABLE recovery_campaigns
      DROP CONSTRAINT recovery_campaigns_workspace_closed_by_fkey,
      ADD CONSTRAINT recovery_campaigns_closed_by_user_id_fkey FOREIGN KEY (closed_by_user_id)
        REFERENCES users (id) ON DELETE SET NULL;
    ALTER TABLE users DROP CONSTRAINT users_workspace_id_id_key;

    ALTER TABLE webhook_deliveries
      DROP CONSTRAINT webhook_deliveries_workspace_endpoint_fkey,
      ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id)
        REFERENCES webhook_endpoints (id) ON DELETE CASCADE;
    ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_workspace_id_id_key;

    ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_type_check;

    ALTER TABLE customers DROP CONSTRAINT customers_tags_normalized;
    DROP FUNCTION tags_are_normalized(text[]);

    ALTER TABLE recovery_campaigns
      DROP CONSTRAINT recovery_campaigns_recovered_when_closed,
      DROP CONSTRAINT recovery_campaigns_closed_after_failure;
  `);
}
