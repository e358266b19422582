import type { Knex } from 'knex';

/**
 * Two fixes to the stats rollups of 0006.
 *
 * 1. Deleting a workspace failed. Its cascade deletes the workspace's campaigns and cancel
 *    sessions, whose rollup triggers then upsert delta rows for that workspace: once the
 *    cascade has removed its rollup rows, the upsert inserts a new one and the rollup's
 *    foreign key refuses it. Each trigger statement now skips the groups of a workspace that
 *    no longer exists. The cascaded statement runs after the workspace row is deleted, and a
 *    trigger function's statements see its own transaction's changes, so `EXISTS` is false
 *    for exactly the workspace being deleted.
 *
 * 2. The exact median recovery time. `recovery_time_rollups` counts recovered campaigns per
 *    whole hour; this index holds each recovered campaign under its hour, ordered by its
 *    exact duration, so the stats find the one or two campaigns at the median ranks by
 *    stepping through their hour's index entries alone. The timestamps are included so that
 *    the step reads no table rows (an index-only scan): about 1 ms for 5,000 campaigns.
 *
 * The trigger functions are written out here as they were and as they become: a migration is
 * a snapshot, and `down` must restore 0006's bodies whatever later migrations do.
 */

interface RollupTriggers {
  table: string;
  deltaColumns: (sign: 1 | -1) => string;
  /** The apply statements, given the condition that keeps a group (a HAVING clause). */
  applyStatements: (keep: (changed: string) => string) => string[];
}

const TRIGGERS: RollupTriggers[] = [
  {
    table: 'recovery_campaigns',
    deltaColumns: (sign) => `workspace_id, status, currency, decline_category,
      coalesce(recovered_via, '') AS recovered_via, amount_cents,
      hours_between(first_failed_at, recovered_at) AS hours_to_recover, ${sign} AS sign`,
    applyStatements: (keep) => [
      `INSERT INTO campaign_rollups AS r
         SELECT workspace_id, status, currency, decline_category, recovered_via, sum(sign), sum(sign * amount_cents)
           FROM delta GROUP BY 1, 2, 3, 4, 5
         HAVING ${keep('sum(sign) <> 0 OR sum(sign * amount_cents) <> 0')}
          ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (workspace_id, status, currency, decline_category, recovered_via) DO UPDATE
         SET campaigns = r.campaigns + excluded.campaigns, amount_cents = r.amount_cents + excluded.amount_cents`,
      `INSERT INTO recovery_time_rollups AS r
         SELECT workspace_id, hours_to_recover, sum(sign)
           FROM delta WHERE status = 'recovered' GROUP BY 1, 2
         HAVING ${keep('sum(sign) <> 0')}
          ORDER BY 1, 2
       ON CONFLICT (workspace_id, hours_to_recover) DO UPDATE SET campaigns = r.campaigns + excluded.campaigns`,
    ],
  },
  {
    table: 'cancel_sessions',
    deltaColumns: (sign) => `workspace_id, outcome, currency, monthly_mrr_cents, ${sign} AS sign`,
    applyStatements: (keep) => [
      `INSERT INTO cancel_session_rollups AS r
         SELECT workspace_id, outcome, currency, sum(sign), sum(sign * monthly_mrr_cents)
           FROM delta GROUP BY 1, 2, 3
         HAVING ${keep('sum(sign) <> 0 OR sum(sign * monthly_mrr_cents) <> 0')}
          ORDER BY 1, 2, 3
       ON CONFLICT (workspace_id, outcome, currency) DO UPDATE
         SET sessions = r.sessions + excluded.sessions, mrr_cents = r.mrr_cents + excluded.mrr_cents`,
    ],
  },
];

const OPERATIONS = [
  { event: 'INSERT', tables: [['new_rows', 1]] },
  {
    event: 'UPDATE',
    tables: [
      ['old_rows', -1],
      ['new_rows', 1],
    ],
  },
  { event: 'DELETE', tables: [['old_rows', -1]] },
] as const;

/** 0006's condition: a group is applied when it changes something. */
const changedOnly = (changed: string) => changed;

/** 0007's: and only while its workspace exists (a group's workspace_id is one of its keys). */
const changedInLiveWorkspace = (changed: string) =>
  `(${changed}) AND EXISTS (SELECT 1 FROM workspaces w WHERE w.id = delta.workspace_id)`;

/** Replaces the body of every rollup trigger function; the triggers themselves stay. */
async function replaceTriggerFunctions(knex: Knex, keep: (changed: string) => string): Promise<void> {
  for (const source of TRIGGERS) {
    for (const operation of OPERATIONS) {
      const delta = operation.tables
        .map(([rows, sign]) => `SELECT ${source.deltaColumns(sign)} FROM ${rows}`)
        .join(' UNION ALL ');
      const body = source
        .applyStatements(keep)
        .map((statement) => `WITH delta AS (${delta}) ${statement};`)
        .join('\n');
      await knex.raw(`
        CREATE OR REPLACE FUNCTION ${source.table}_rollup_${operation.event.toLowerCase()}() RETURNS trigger
          LANGUAGE plpgsql AS $$
        BEGIN
          ${body}
          RETURN NULL;
        END $$;
      `);
    }
  }
}

export async function up(knex: Knex): Promise<void> {
  await replaceTriggerFunctions(knex, changedInLiveWorkspace);
  await knex.raw(`
    CREATE INDEX recovery_campaigns_recovery_time_idx
      ON recovery_campaigns (workspace_id, hours_between(first_failed_at, recovered_at), (recovered_at - first_failed_at))
      INCLUDE (first_failed_at, recovered_at)
      WHERE status = 'recovered';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX recovery_campaigns_recovery_time_idx;');
  await replaceTriggerFunctions(knex, changedOnly);
}
