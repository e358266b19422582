import type { Knex } from 'knex';

/**
 * Makes `users.highest_former_role` (migration 0034) the database's to keep, and applies the
 * rule it serves to the links made before it (docs/dashboard-api.md, "A reset link to copy, and
 * a role held before"; docs/upgrading.md, "Migration 0035").
 *
 * - A trigger raises it on every change of `users.role`, whoever makes the change: a release
 *   older than 0034, still serving during a rolling deploy, changes roles without knowing the
 *   column, and the account it moves down must not become one a peer may copy a reset link for.
 *   Nor does any UPDATE lower or clear it: it only ever rises.
 * - It is filled again from the security log, for the role changes such a release made between
 *   0034 and this migration (never lowered: only a higher role logged replaces what is kept).
 * - The open reset links someone made for another account, when the maker does not outrank
 *   every role that account has held, are revoked, each with an `account.reset_link_revoked`
 *   entry (`reason: former_role_rule`): such a link may be one copied for a peer moved down for
 *   the purpose, before the rule existed. Whether a link was emailed is not kept, so an emailed
 *   one goes too; its holder can ask for another (Forgot password).
 */

/**
 * The rank of a role, for comparing two in SQL (permissions.ts's RANK). In parentheses: PL/pgSQL
 * reads an IF's condition up to the first THEN, the CASE's own included.
 */
const RANK_OF = (role: string) => `(CASE ${role} WHEN 'owner' THEN 2 WHEN 'admin' THEN 1 WHEN 'member' THEN 0 END)`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';

    CREATE FUNCTION users_keep_highest_former_role() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      kept text := OLD.highest_former_role;
    BEGIN
      IF NEW.role IS DISTINCT FROM OLD.role AND (kept IS NULL OR ${RANK_OF('OLD.role')} > ${RANK_OF('kept')}) THEN
        kept := OLD.role;
      END IF;
      IF NEW.highest_former_role IS NOT NULL
         AND (kept IS NULL OR ${RANK_OF('NEW.highest_former_role')} > ${RANK_OF('kept')}) THEN
        kept := NEW.highest_former_role;
      END IF;
      NEW.highest_former_role := kept;
      RETURN NEW;
    END;
    $$;
    -- On the column too: no UPDATE lowers or clears what is kept, by mistake or on purpose.
    CREATE TRIGGER users_keep_highest_former_role
      BEFORE UPDATE OF role, highest_former_role ON users
      FOR EACH ROW EXECUTE FUNCTION users_keep_highest_former_role();

    UPDATE users
       SET highest_former_role = held.role
      FROM (
        SELECT target_id,
               (array_agg(details->>'from' ORDER BY ${RANK_OF("details->>'from'")} DESC))[1] AS role
          FROM security_events
         WHERE action = 'team.role_changed' AND target_type = 'user'
           AND details->>'from' IN ('owner', 'admin', 'member')
         GROUP BY target_id
      ) AS held
     WHERE users.id::text = held.target_id
       AND (users.highest_former_role IS NULL
            OR ${RANK_OF('held.role')} > ${RANK_OF('users.highest_former_role')});

    WITH revoked AS (
      UPDATE account_links AS link
         SET revoked_at = now()
        FROM users AS holder, users AS maker
       WHERE link.kind = 'password_reset'
         AND link.used_at IS NULL AND link.revoked_at IS NULL AND link.expires_at > now()
         AND link.created_by IS NOT NULL AND link.created_by <> link.user_id
         AND holder.id = link.user_id AND maker.id = link.created_by
         AND ${RANK_OF('maker.role')} <= GREATEST(${RANK_OF('holder.role')},
                                                 COALESCE(${RANK_OF('holder.highest_former_role')}, 0))
      RETURNING link.workspace_id, link.user_id, holder.email, maker.email AS maker_email
    )
    INSERT INTO security_events (workspace_id, action, actor_type, actor_label, target_type, target_id,
                                 target_label, details)
    SELECT workspace_id, 'account.reset_link_revoked', 'system', 'migration 0035', 'user', user_id::text,
           email, jsonb_build_object('reason', 'former_role_rule', 'created_by', maker_email)
      FROM revoked;
  `);
}

/** The trigger goes; the links revoked stay revoked (each was a link the rule forbids). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    SET LOCAL lock_timeout = '10s';
    DROP TRIGGER users_keep_highest_former_role ON users;
    DROP FUNCTION users_keep_highest_former_role();
  `);
}
