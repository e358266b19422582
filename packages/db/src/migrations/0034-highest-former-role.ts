import type { Knex } from 'knex';

/**
 * `users.highest_former_role`: the highest role an account held here before its present one, when
 * its role was ever changed (docs/dashboard-api.md, "A reset link to copy, and a role held
 * before"). A reset link shown to copy is the account itself, so it is made only by someone who
 * outranks every role the account has held: otherwise an admin could move a fellow admin down to
 * member, copy that member's link, set the password, and move them back up, signed in as them.
 *
 * Filled from the security log's `team.role_changed` entries (`details.from`), which every role
 * change has written since the log began (migration 0009): an entry's `from` is a role the
 * account held before its present one. Null for an account whose role never changed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE users ADD COLUMN highest_former_role text
      CHECK (highest_former_role IN ('owner', 'admin', 'member'));
    UPDATE users
       SET highest_former_role = held.role
      FROM (
        SELECT target_id,
               (array_agg(details->>'from' ORDER BY
                  CASE details->>'from' WHEN 'owner' THEN 2 WHEN 'admin' THEN 1 ELSE 0 END DESC))[1] AS role
          FROM security_events
         WHERE action = 'team.role_changed' AND target_type = 'user'
           AND details->>'from' IN ('owner', 'admin', 'member')
         GROUP BY target_id
      ) AS held
     WHERE users.id::text = held.target_id;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    ALTER TABLE users DROP COLUMN highest_former_role;
  `);
}
