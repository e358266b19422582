import type { Knex } from 'knex';

/**
 * Who made a password-reset link: an owner or admin on the Team page. A link is only as good as
 * its maker's standing, as an invitation is its inviter's: when they are removed or demoted, the
 * open links they made are revoked. Empty for the links people ask for themselves (Forgot
 * password), for the operator CLI's (`user reset-link`, made by no member) and for those made
 * before this release.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE account_links
      ADD COLUMN created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      ADD CONSTRAINT account_links_created_by_reset_only CHECK (kind = 'password_reset' OR created_by IS NULL);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE account_links DROP COLUMN created_by;`);
}
