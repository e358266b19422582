import type { Knex } from 'knex';

/**
 * The email of the person a security log entry names (`actor_user_id`), as it was when the entry
 * was written, kept after that person is removed (docs/dashboard-api.md, "Security log"). An entry
 * made in the dashboard keeps it in its label already; one the operator CLI made in someone's name
 * (`--actor`) is labelled "operator CLI", and once that person was removed (their id set to null)
 * it no longer said for whom. Filled in here for the entries whose person is still on the team;
 * entries whose person was removed before this migration stay without it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE security_events ADD COLUMN actor_email text CHECK (char_length(actor_email) <= 320);
    UPDATE security_events e SET actor_email = u.email
      FROM users u
     WHERE e.actor_user_id = u.id AND e.actor_type = 'operator';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE security_events DROP COLUMN actor_email');
}
