import { describe, expect, it } from '@jest/globals';
import { CAMPAIGN_STATUSES, closingFields, type CampaignStatus, type RecoveredVia } from '@retention/core';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();

/**
 * The campaign-state rule is written once, in core (`CAMPAIGN_STATES`, `closingFields`); the
 * database holds it as CHECKs written out in migrations 0003 and 0008. This test tries every
 * combination of status and closing fields against the migrated schema and requires the
 * database to accept exactly the rows the core rule allows: a row is valid when its closing
 * fields are what `closingFields` gives for its status, close time and route, and it closed no
 * earlier than it first failed.
 */
const FAILED = new Date('2026-03-01T10:00:00.000Z');
const CLOSED = new Date('2026-03-02T10:00:00.000Z');
const OTHER = new Date('2026-03-03T10:00:00.000Z');
const BEFORE = new Date('2026-02-27T10:00:00.000Z');

interface Candidate {
  status: CampaignStatus;
  recovered_via: RecoveredVia | null;
  recovered_at: Date | null;
  closed_at: Date | null;
}

function allowedByCore(row: Candidate): boolean {
  const expected = closingFields(row.status, row.closed_at ?? FAILED, row.recovered_via ?? 'retry');
  const same = (a: Date | null, b: Date | null) =>
    a === null ? b === null : b !== null && a.getTime() === b.getTime();
  return (
    expected.recovered_via === row.recovered_via &&
    same(expected.recovered_at, row.recovered_at) &&
    same(expected.closed_at, row.closed_at) &&
    (row.closed_at === null || row.closed_at >= FAILED)
  );
}

const candidates: Candidate[] = CAMPAIGN_STATUSES.flatMap((status) =>
  [null, 'retry' as const].flatMap((recovered_via) =>
    [null, CLOSED, OTHER].flatMap((recovered_at) =>
      [null, CLOSED, BEFORE].map((closed_at) => ({ status, recovered_via, recovered_at, closed_at })),
    ),
  ),
);

describe('campaign state: the database and core agree', () => {
  it(`accepts exactly the rows core allows (${candidates.length} combinations)`, async () => {
    const { db } = database.current;
    const [workspace] = await db('workspaces').insert({ name: 'Checks' }).returning('id');
    const [customer] = await db('customers')
      .insert({ workspace_id: workspace.id, psp_customer_id: 'cus_1', email: 'a@example.com' })
      .returning('id');
    const [subscription] = await db('subscriptions')
      .insert({
        workspace_id: workspace.id,
        customer_id: customer.id,
        psp_subscription_id: 'sub_1',
        status: 'past_due',
        plan_name: 'Pro',
        amount_cents: 1000,
        currency: 'usd',
        interval: 'month',
      })
      .returning('id');
    const disagreements: string[] = [];
    for (const [index, row] of candidates.entries()) {
      const accepted = await db
        .transaction(async (trx) => {
          await trx('recovery_campaigns').insert({
            workspace_id: workspace.id,
            customer_id: customer.id,
            subscription_id: subscription.id,
            psp_invoice_id: `in_${index}`,
            amount_cents: 1000,
            currency: 'usd',
            decline_code: 'insufficient_funds',
            decline_category: 'soft',
            first_failed_at: FAILED,
            ...row,
          });
          throw new Error('roll back');
        })
        .catch((error: { code?: string; message: string }) => {
          if (error.message === 'roll back') return true;
          if (error.code === '23514') return false; // check_violation
          throw error;
        });
      if (accepted !== allowedByCore(row))
        disagreements.push(`${JSON.stringify(row)}: database ${accepted ? 'accepts' : 'refuses'}`);
    }
    expect(disagreements).toEqual([]);
    // Both answers occur, so the comparison means something.
    expect(candidates.filter(allowedByCore).length).toBeGreaterThan(3);
  });
});
