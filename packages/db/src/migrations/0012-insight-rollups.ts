import type { Knex } from 'knex';

/**
 * Day-bucketed rollups behind the dashboard overview's periods and monthly charts, kept exact
 * by statement-level triggers exactly as 0006/0007 keep the all-time rollups: transition
 * tables netted per group (old rows -1, new rows +1), groups upserted in key order so
 * concurrent writers lock rollup rows in the same order, and the groups of a workspace being
 * deleted skipped (0007's fix).
 *
 * A campaign is bucketed by the UTC day of `first_failed_at` (the day it opened), a cancel
 * session by the UTC day of `created_at`. A period ("last 30 days") is a whole number of UTC
 * days ending today, so a sum over day buckets is exact; a month is a sum of its days.
 *
 * `recovery_time_day_rollups` counts recovered campaigns per opening day and whole hour to
 * recover: summed over a period it names the hour holding the median rank, exactly as
 * `recovery_time_rollups` does for all time (0007's index then finds the exact duration).
 */

const LIVE_WORKSPACE = 'EXISTS (SELECT 1 FROM workspaces w WHERE w.id = delta.workspace_id)';

const TRIGGER_SOURCES = [
  {
    table: 'recovery_campaigns',
    deltaColumns: (sign: 1 | -1) => `workspace_id, (first_failed_at AT TIME ZONE 'UTC')::date AS day, status,
      currency, decline_category, coalesce(recovered_via, '') AS recovered_via, amount_cents,
      hours_between(first_failed_at, recovered_at) AS hours_to_recover, ${sign} AS sign`,
    applyStatements: [
      `INSERT INTO campaign_day_rollups AS r
         SELECT workspace_id, day, status, currency, decline_category, recovered_via, sum(sign), sum(sign * amount_cents)
           FROM delta GROUP BY 1, 2, 3, 4, 5, 6
         HAVING (sum(sign) <> 0 OR sum(sign * amount_cents) <> 0) AND ${LIVE_WORKSPACE}
          ORDER BY 1, 2, 3, 4, 5, 6
       ON CONFLICT (workspace_id, day, status, currency, decline_category, recovered_via) DO UPDATE
         SET campaigns = r.campaigns + excluded.campaigns, amount_cents = r.amount_cents + excluded.amount_cents`,
      `INSERT INTO recovery_time_day_rollups AS r
         SELECT workspace_id, day, hours_to_recover, sum(sign)
           FROM delta WHERE status = 'recovered' GROUP BY 1, 2, 3
         HAVING sum(sign) <> 0 AND ${LIVE_WORKSPACE}
          ORDER BY 1, 2, 3
       ON CONFLICT (workspace_id, day, hours_to_recover) DO UPDATE SET campaigns = r.campaigns + excluded.campaigns`,
    ],
  },
  {
    table: 'cancel_sessions',
    deltaColumns: (sign: 1 | -1) => `workspace_id, (created_at AT TIME ZONE 'UTC')::date AS day, outcome, currency,
      reason_code, monthly_mrr_cents, ${sign} AS sign`,
    applyStatements: [
      `INSERT INTO cancel_session_day_rollups AS r
         SELECT workspace_id, day, outcome, currency, reason_code, sum(sign), sum(sign * monthly_mrr_cents)
           FROM delta GROUP BY 1, 2, 3, 4, 5
         HAVING (sum(sign) <> 0 OR sum(sign * monthly_mrr_cents) <> 0) AND ${LIVE_WORKSPACE}
          ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (workspace_id, day, outcome, currency, reason_code) DO UPDATE
         SET sessions = r.sessions + excluded.sessions, mrr_cents = r.mrr_cents + excluded.mrr_cents`,
    ],
  },
];

const OPERATIONS = [
  { event: 'INSERT', referencing: 'NEW TABLE AS new_rows', tables: [['new_rows', 1]] },
  {
    event: 'UPDATE',
    referencing: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
    tables: [
      ['old_rows', -1],
      ['new_rows', 1],
    ],
  },
  { event: 'DELETE', referencing: 'OLD TABLE AS old_rows', tables: [['old_rows', -1]] },
] as const;

function triggerName(table: string, event: string): string {
  return `${table}_insight_rollup_${event.toLowerCase()}`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE campaign_day_rollups (
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      day              date NOT NULL, -- UTC day of first_failed_at
      status           text NOT NULL,
      currency         text NOT NULL,
      decline_category text NOT NULL,
      recovered_via    text NOT NULL, -- '' while not recovered
      campaigns        bigint NOT NULL,
      amount_cents     bigint NOT NULL,
      PRIMARY KEY (workspace_id, day, status, currency, decline_category, recovered_via)
    );

    CREATE TABLE recovery_time_day_rollups (
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      day              date NOT NULL, -- UTC day of first_failed_at
      hours_to_recover integer NOT NULL,
      campaigns        bigint NOT NULL,
      PRIMARY KEY (workspace_id, day, hours_to_recover)
    );

    CREATE TABLE cancel_session_day_rollups (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      day          date NOT NULL, -- UTC day of created_at
      outcome      text NOT NULL,
      currency     text NOT NULL,
      reason_code  text NOT NULL,
      sessions     bigint NOT NULL,
      mrr_cents    bigint NOT NULL,
      PRIMARY KEY (workspace_id, day, outcome, currency, reason_code)
    );

    -- A campaign's timeline: the events about it, in order, without reading the workspace's others.
    CREATE INDEX events_campaign_idx ON events (workspace_id, (data ->> 'campaign_id'), seq);
  `);

  for (const source of TRIGGER_SOURCES) {
    for (const operation of OPERATIONS) {
      const delta = operation.tables
        .map(([rows, sign]) => `SELECT ${source.deltaColumns(sign)} FROM ${rows}`)
        .join(' UNION ALL ');
      const body = source.applyStatements.map((statement) => `WITH delta AS (${delta}) ${statement};`).join('\n');
      const name = triggerName(source.table, operation.event);
      await knex.raw(`
        CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          ${body}
          RETURN NULL;
        END $$;
        CREATE TRIGGER ${name} AFTER ${operation.event} ON ${source.table}
          REFERENCING ${operation.referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${name}();
      `);
    }
  }

  // Rows that existed before this migration are counted once, here.
  await knex.raw(`
    INSERT INTO campaign_day_rollups
      SELECT workspace_id, (first_failed_at AT TIME ZONE 'UTC')::date, status, currency, decline_category,
             coalesce(recovered_via, ''), count(*), sum(amount_cents)
        FROM recovery_campaigns GROUP BY 1, 2, 3, 4, 5, 6;
    INSERT INTO recovery_time_day_rollups
      SELECT workspace_id, (first_failed_at AT TIME ZONE 'UTC')::date, hours_between(first_failed_at, recovered_at),
             count(*)
        FROM recovery_campaigns WHERE status = 'recovered' GROUP BY 1, 2, 3;
    INSERT INTO cancel_session_day_rollups
      SELECT workspace_id, (created_at AT TIME ZONE 'UTC')::date, outcome, currency, reason_code, count(*),
             sum(monthly_mrr_cents)
        FROM cancel_sessions GROUP BY 1, 2, 3, 4, 5;
  `);
}

export async function down(knex: Knex): Promise<void> {
  for (const source of TRIGGER_SOURCES) {
    for (const operation of OPERATIONS) {
      const name = triggerName(source.table, operation.event);
      await knex.raw(`DROP TRIGGER ${name} ON ${source.table}; DROP FUNCTION ${name}();`);
    }
  }
  await knex.raw(
    'DROP INDEX events_campaign_idx; DROP TABLE cancel_session_day_rollups, recovery_time_day_rollups, campaign_day_rollups;',
  );
}
