import type { Knex } from 'knex';

/**
 * Day-bucketed counts and amounts of campaigns by the UTC day they closed, behind the Overview's
 * "Closed in the period" (docs/dashboard-api.md, "Overview"): money won back or lost in a period,
 * whatever day the invoice first failed, where every other overview figure is a cohort by the day
 * a campaign opened (0012, 0044). A finance reader's "how much did we recover in November?".
 *
 * The day is that of `closed_at`: every closed campaign has one, and a recovered one's
 * `recovered_at` equals it (0008's `recovery_campaigns_recovered_when_closed`), so recovered,
 * lost and abandoned campaigns share one bucket rule. A campaign in flight has none and is not
 * counted. A closed campaign is final (packages/domain/src/campaigns/close.ts), but the
 * triggers do not rely on it: an update nets its old row out and its new row in, as 0012's do.
 *
 * Kept exact by statement-level triggers exactly as 0012 keeps `campaign_day_rollups`:
 * transition tables netted per group, groups upserted in key order, the groups of a workspace
 * being deleted skipped.
 */

const LIVE_WORKSPACE = 'EXISTS (SELECT 1 FROM workspaces w WHERE w.id = delta.workspace_id)';

const DELTA_COLUMNS = (sign: 1 | -1) => `workspace_id, (closed_at AT TIME ZONE 'UTC')::date AS day, status,
  currency, amount_cents, ${sign} AS sign`;

const APPLY = `INSERT INTO campaign_close_day_rollups AS r
    SELECT workspace_id, day, status, currency, sum(sign), sum(sign * amount_cents)
      FROM delta GROUP BY 1, 2, 3, 4
    HAVING (sum(sign) <> 0 OR sum(sign * amount_cents) <> 0) AND ${LIVE_WORKSPACE}
     ORDER BY 1, 2, 3, 4
  ON CONFLICT (workspace_id, day, status, currency) DO UPDATE
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
  return `recovery_campaigns_close_rollup_${event.toLowerCase()}`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE campaign_close_day_rollups (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      day          date NOT NULL, -- UTC day of closed_at
      status       text NOT NULL, -- recovered, lost or abandoned
      currency     text NOT NULL,
      campaigns    bigint NOT NULL,
      amount_cents bigint NOT NULL,
      PRIMARY KEY (workspace_id, day, status, currency)
    );
  `);
  for (const operation of OPERATIONS) {
    // Open campaigns (no closed_at) are left out here, so an update that closes none writes nothing.
    const delta = operation.tables
      .map(([rows, sign]) => `SELECT ${DELTA_COLUMNS(sign)} FROM ${rows} WHERE closed_at IS NOT NULL`)
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
  // Campaigns closed before this migration are counted once, here.
  await knex.raw(`
    INSERT INTO campaign_close_day_rollups
      SELECT workspace_id, (closed_at AT TIME ZONE 'UTC')::date, status, currency, count(*), sum(amount_cents)
        FROM recovery_campaigns WHERE closed_at IS NOT NULL GROUP BY 1, 2, 3, 4;
  `);
}

export async function down(knex: Knex): Promise<void> {
  for (const operation of OPERATIONS) {
    const name = triggerName(operation.event);
    await knex.raw(`DROP TRIGGER ${name} ON recovery_campaigns; DROP FUNCTION ${name}();`);
  }
  await knex.raw('DROP TABLE campaign_close_day_rollups;');
}
