import type { Knex } from 'knex';

/**
 * One pending invitation per address and workspace, whatever the case it was typed in
 * (docs/dashboard-api.md, "Team"). Addresses keep the spelling they were typed in, users and
 * invitations alike, and are compared lower-cased (0001's users_workspace_email_key, 0010's
 * users_email_with_password_key): a new invitation revokes the address's open ones. Two sent at
 * once ("Ann@Example.COM" and "ann@example.com" from two tabs) each found none to revoke and
 * both stayed open; inviteMember now takes a lock on the address first, and this index says so
 * in the schema.
 *
 * Open means not used and not revoked, expired or not: a new invitation revokes expired ones
 * too, so the index holds for every invitation made since. Where two or more are open for one
 * address already, the newest stays and the older are revoked first, as a new invitation would
 * have revoked them (the Team page listed them all; their links stop working).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE account_links older SET revoked_at = now()
      WHERE older.kind = 'invitation' AND older.used_at IS NULL AND older.revoked_at IS NULL
        AND EXISTS (
          SELECT 1 FROM account_links newer
            WHERE newer.kind = 'invitation' AND newer.used_at IS NULL AND newer.revoked_at IS NULL
              AND newer.workspace_id = older.workspace_id
              AND lower(newer.email) = lower(older.email)
              AND (newer.created_at, newer.id) > (older.created_at, older.id)
        );
    CREATE UNIQUE INDEX account_links_one_open_invitation_key ON account_links (workspace_id, lower(email))
      WHERE kind = 'invitation' AND used_at IS NULL AND revoked_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX account_links_one_open_invitation_key');
}
