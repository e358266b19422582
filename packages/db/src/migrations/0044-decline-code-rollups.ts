import type { Knex } from 'knex';

/**
 * Day-bucketed counts and amounts per decline code, behind the Overview's "Why payments fail"
 * (docs/dashboard-api.md, "Overview"): the top codes of a period (insufficient_funds,
 * expired_card, …) with their amounts, read from a rollup so that any period, all time
 * included, costs what the other overview reads cost rather than a scan of the workspace's
 * campaigns (1,000,000 in the bench). Kept exact by statement-level triggers exactly as 0012
 * keeps `campaign_day_rollups`: transition tables netted per group, groups upserted in key order,
 * the groups of a workspace being deleted skipped. Bucketed by the UTC day of `first_failed_at`,
 * as every overview figure is, so its periods are 0012's.
 */

const LIVE_WORKSPACE = 'EXISTS (SELECT 1 FROM workspaces w WHERE w.id = delta.workspace_id)';

const DELTA_COLUMNS = (sign: 1 | -1) => `workspace_id, (first_failed_at AT TIME ZONE 'UTC')::date AS day,
  decline_category, decline_code, status, currency, amount_cents, ${sign} AS sign`;

const APPLY = `INSERT INTO decline_code_day_rollups AS r
    SELECT workspace_id, day, decline_category, decline_code, status, currency, sum(sign), sum(sign * amount_cents)
      FROM delta GROUP BY 1, 2, 3, 4, 5, 6
    HAVING (sum(sign) <> 0 OR sum(sign * amount_cents) <> 0) AND ${LIVE_WORKSPACE}
     ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (workspace_id, day, decline_category, decline_code, status, currency) DO UPDATE
    SET campaigns = r.campaigns + excluded.campaigns, amount_cents = r.amount_cents + excluded.amount_cents`;

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

function triggerName(event: string): string {
  return `recovery_campaigns_decline_code_rollup_${event.toLowerCase()}`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE decline_code_day_rollups (
      workspace_id     uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      day              date NOT NULL, -- UTC day of first_failed_at
      decline_category text NOT NULL,
      decline_code     text NOT NULL,
      status           text NOT NULL,
      currency         text NOT NULL,
      campaigns        bigint NOT NULL,
      amount_cents     bigint NOT NULL,
      PRIMARY KEY (workspace_id, day, decline_category, decline_code, status, currency)
    );
  `);
  for (const operation of OPERATIONS) {
    const delta = operation.tables
      .map(([rows, sign]) => `SELECT ${DELTA_COLUMNS(sign)} FROM ${rows}`)
      .join(' UNION ALL ');
    const name = triggerName(operation.event);
    await knex.raw(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        WITH delta AS (${delta}) ${APPLY};
        RETURN NULL;
      END $$;
      CREATE TRIGGER ${name} AFTER ${operation.event} ON recovery_campaigns
        REFERENCING ${operation.referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${name}();
    `);
  }
  // Rows that existed before this migration are counted once, here.
  await knex.raw(`
    INSERT INTO decline_code_day_rollups
      SELECT workspace_id, (first_failed_at AT TIME ZONE 'UTC')::date, decline_category, decline_code, status, currency,
             count(*), sum(amount_cents)
        FROM recovery_campaigns GROUP BY 1, 2, 3, 4, 5, 6;
  `);
}

export async function down(knex: Knex): Promise<void> {
  for (const operation of OPERATIONS) {
    const name = triggerName(operation.event);
    await knex.raw(`DROP TRIGGER ${name} ON recovery_campaigns; DROP FUNCTION ${name}();`);
  }
  await knex.raw('DROP TABLE decline_code_day_rollups;');
}
