import type { Knex } from 'knex';

/**
 * Rollups behind GET /stats: counts and sums per workspace, kept exact by statement-level
 * triggers on the source tables. A trigger sees every row its statement changed (transition
 * tables), nets old rows (-1) against new rows (+1) per group, and upserts only the groups
 * that changed: a bulk insert costs one upsert per group rather than one per row. Groups are
 * upserted in key order so concurrent writers lock rollup rows in the same order.
 *
 * The counters carry no `>= 0` CHECK: Postgres checks the row an upsert proposes before it
 * finds the conflict, and a negative delta is a legitimate proposal.
 */

interface RollupSource {
  table: string;
  /** Columns of one delta row, given the transition table and the sign of its rows. */
  deltaColumns: (sign: 1 | -1) => string;
  /** Statements that apply the delta rows in `delta` (a CTE) to the rollup tables. */
  applyStatements: string[];
}

const SOURCES: RollupSource[] = [
  {
    table: 'recovery_campaigns',
    deltaColumns: (sign) => `workspace_id, status, currency, decline_category,
      coalesce(recovered_via, '') AS recovered_via, amount_cents,
      hours_between(first_failed_at, recovered_at) AS hours_to_recover, ${sign} AS sign`,
    applyStatements: [
      `INSERT INTO campaign_rollups AS r
         SELECT workspace_id, status, currency, decline_category, recovered_via, sum(sign), sum(sign * amount_cents)
           FROM delta GROUP BY 1, 2, 3, 4, 5
         HAVING sum(sign) <> 0 OR sum(sign * amount_cents) <> 0
          ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (workspace_id, status, currency, decline_category, recovered_via) DO UPDATE
         SET campaigns = r.campaigns + excluded.campaigns, amount_cents = r.amount_cents + excluded.amount_cents`,
      `INSERT INTO recovery_time_rollups AS r
         SELECT workspace_id, hours_to_recover, sum(sign)
           FROM delta WHERE status = 'recovered' GROUP BY 1, 2
         HAVING sum(sign) <> 0
          ORDER BY 1, 2
       ON CONFLICT (workspace_id, hours_to_recover) DO UPDATE SET campaigns = r.campaigns + excluded.campaigns`,
    ],
  },
  {
    table: 'cancel_sessions',
    deltaColumns: (sign) => `workspace_id, outcome, currency, monthly_mrr_cents, ${sign} AS sign`,
    applyStatements: [
      `INSERT INTO cancel_session_rollups AS r
         SELECT workspace_id, outcome, currency, sum(sign), sum(sign * monthly_mrr_cents)
           FROM delta GROUP BY 1, 2, 3
         HAVING sum(sign) <> 0 OR sum(sign * monthly_mrr_cents) <> 0
          ORDER BY 1, 2, 3
       ON CONFLICT (workspace_id, outcome, currency) DO UPDATE
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

function triggerName(source: RollupSource, event: string): string {
  return `${source.table}_rollup_${event.toLowerCase()}`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE campaign_rollups (
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      status           text NOT NULL,
      currency         text NOT NULL,
      decline_category text NOT NULL,
      recovered_via    text NOT NULL, -- '' while not recovered
      campaigns        bigint NOT NULL,
      amount_cents     bigint NOT NULL,
      PRIMARY KEY (workspace_id, status, currency, decline_category, recovered_via)
    );

    -- Recovered campaigns by whole hours from first failure to recovery: the exact median of
    -- that measure is a walk over at most a few thousand rows.
    CREATE TABLE recovery_time_rollups (
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      hours_to_recover integer NOT NULL,
      campaigns        bigint NOT NULL,
      PRIMARY KEY (workspace_id, hours_to_recover)
    );

    CREATE TABLE cancel_session_rollups (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      outcome      text NOT NULL,
      currency     text NOT NULL,
      sessions     bigint NOT NULL,
      mrr_cents    bigint NOT NULL,
      PRIMARY KEY (workspace_id, outcome, currency)
    );

    -- Whole hours from started to ended, never negative; null while ended is null.
    CREATE FUNCTION hours_between(started timestamptz, ended timestamptz) RETURNS integer
      LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN ended IS NULL THEN NULL
                    ELSE greatest(0, floor(extract(epoch FROM ended - started) / 3600))::integer END
      $$;
  `);

  for (const source of SOURCES) {
    for (const operation of OPERATIONS) {
      const delta = operation.tables
        .map(([rows, sign]) => `SELECT ${source.deltaColumns(sign)} FROM ${rows}`)
        .join(' UNION ALL ');
      const body = source.applyStatements.map((statement) => `WITH delta AS (${delta}) ${statement};`).join('\n');
      const name = triggerName(source, operation.event);
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
    INSERT INTO campaign_rollups
      SELECT workspace_id, status, currency, decline_category, coalesce(recovered_via, ''), count(*), sum(amount_cents)
        FROM recovery_campaigns GROUP BY 1, 2, 3, 4, 5;
    INSERT INTO recovery_time_rollups
      SELECT workspace_id, hours_between(first_failed_at, recovered_at), count(*)
        FROM recovery_campaigns WHERE status = 'recovered' GROUP BY 1, 2;
    INSERT INTO cancel_session_rollups
      SELECT workspace_id, outcome, currency, count(*), sum(monthly_mrr_cents)
        FROM cancel_sessions GROUP BY 1, 2, 3;
  `);
}

export async function down(knex: Knex): Promise<void> {
  for (const source of SOURCES) {
    for (const operation of OPERATIONS) {
      const name = triggerName(source, operation.event);
      await knex.raw(`DROP TRIGGER ${name} ON ${source.table}; DROP FUNCTION ${name}();`);
    }
  }
  await knex.raw(`
    DROP FUNCTION hours_between(timestamptz, timestamptz);
    DROP TABLE cancel_session_rollups;
    DROP TABLE recovery_time_rollups;
    DROP TABLE campaign_rollups;
  `);
}
