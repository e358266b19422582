import type { Knex } from 'knex';

/**
 * Making a password-reset link is logged as `account.reset_link_created`, apart from
 * `account.password_reset` (the password set with it). Until this release both were
 * `account.password_reset`, told apart by `details.step`: the records written then are renamed,
 * so the security log reads the same for old and new resets. `details` is kept as it was.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE security_events SET action = 'account.reset_link_created'
    WHERE action = 'account.password_reset' AND details->>'step' = 'link_created';
  `);
}

/**
 * Back to the old name for the records `up` renamed only (they have `details.step`): the release
 * before this one already wrote `account.reset_link_created` itself, without a step, and those
 * records keep their name.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE security_events SET action = 'account.password_reset'
    WHERE action = 'account.reset_link_created' AND details->>'step' = 'link_created';
  `);
}
