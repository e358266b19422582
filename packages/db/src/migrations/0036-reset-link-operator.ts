import type { Knex } from 'knex';

/**
 * `account_links.made_by_operator`: a password-reset link made with the operator CLI (`user
 * reset-link`), so that a password set with it is logged with `link_made_by: "operator CLI"`
 * (docs/dashboard-api.md, "Security log"). Such a link has no `created_by` (the operator is no
 * member), like one its holder asked for (Forgot password): the two could not be told apart.
 *
 * `true` for the CLI's links, `false` for every other reset link this release makes, null for an
 * invitation and for a reset link nobody recorded: one made before this migration, or by the
 * previous release during a rolling deploy (docs/upgrading.md, "Migration 0036").
 *
 * The open links the CLI made before it (a reset link lives an hour) are marked from the security
 * log: `user reset-link` writes `account.reset_link_created` as the operator in the link's own
 * transaction, so the entry and the link carry the same `now()`. Only open links: the others can
 * no longer set a password, and their resets are logged already. A nullable column without a
 * default changes only the catalog; the check reads the links table, which is small, and the lock
 * wait is bounded.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE account_links
      ADD COLUMN made_by_operator boolean,
      ADD CONSTRAINT account_links_made_by_operator_reset_only CHECK (
        made_by_operator IS NULL
        OR (kind = 'password_reset' AND (made_by_operator = false OR created_by IS NULL))
      );
    UPDATE account_links AS link
       SET made_by_operator = true
     WHERE link.kind = 'password_reset' AND link.created_by IS NULL
       AND link.used_at IS NULL AND link.revoked_at IS NULL AND link.expires_at > now()
       AND EXISTS (
         SELECT 1
           FROM security_events AS made
          WHERE made.workspace_id = link.workspace_id
            AND made.created_at = link.created_at
            AND made.action = 'account.reset_link_created'
            AND made.actor_type = 'operator'
            AND made.target_type = 'user'
            AND made.target_id = link.user_id::text
       );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE account_links DROP COLUMN made_by_operator;
  `);
}
