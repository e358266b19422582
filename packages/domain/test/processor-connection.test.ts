import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  claimBackfill,
  connectProcessor,
  createWorkspace,
  disconnectProcessor,
  finishBackfill,
  OPERATOR,
  requestBackfill,
  saveBackfillProgress,
  upsertCustomer,
  upsertSubscription,
} from '@retention/domain';
import { inTransaction } from '@retention/db';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();
const key = randomBytes(32);
const secret = () => `whsec_${randomBytes(20).toString('hex')}`;
const apiKey = () => `rk_test_${randomBytes(20).toString('hex')}`;

async function connected() {
  const db = database.current.db;
  const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
  const input = {
    workspace_id: workspace.id,
    provider: 'stripe' as const,
    webhook_secret: secret(),
    api_key: apiKey(),
  };
  await connectProcessor(db, key, input, 'accepted', OPERATOR);
  return { workspace, input };
}

describe('backfill runs', () => {
  it('are one per workspace: a claimed run is not claimed again while its lease lives, and sync is a conflict', async () => {
    const db = database.current.db;
    const { workspace } = await connected();
    const run = await claimBackfill(db, 60_000);
    expect(run).toMatchObject({
      workspace_id: workspace.id,
      backfill_status: 'running',
      backfill_run_id: expect.any(String),
    });
    // Other workspaces' queued runs may be claimed; this one may not.
    const again = await claimBackfill(db, 60_000);
    expect(again?.workspace_id).not.toBe(workspace.id);
    await expect(requestBackfill(db, workspace.id)).rejects.toMatchObject({ type: 'conflict' });
    await finishBackfill(db, run!, null);
    expect((await requestBackfill(db, workspace.id)).backfill_status).toBe('queued');
  });

  it('a run superseded by a reconnection, a disconnection or a takeover can no longer write its progress', async () => {
    const db = database.current.db;
    const { workspace, input } = await connected();
    await db('processor_connections').whereNot({ workspace_id: workspace.id }).update({ backfill_status: 'idle' });
    const first = (await claimBackfill(db, 60_000))!;
    const progress = (run: typeof first) =>
      inTransaction(db, (trx) => saveBackfillProgress(trx, run, { phase: 'customers', cursor: 'cus_1' }, 60_000));
    expect(await progress(first)).toBe(true);

    await connectProcessor(db, key, input, 'accepted', OPERATOR); // the owner reconnects: a new run is queued
    expect(await progress(first)).toBe(false);
    const second = (await claimBackfill(db, 0))!; // a lease of 0 lapses at once: taken over next
    expect(second.backfill_run_id).not.toBe(first.backfill_run_id);
    const third = (await claimBackfill(db, 60_000))!;
    expect(third.id).toBe(second.id);
    expect(await progress(second)).toBe(false);
    expect(await progress(third)).toBe(true);

    await disconnectProcessor(db, workspace.id, OPERATOR);
    expect(await progress(third)).toBe(false);
    const row = await db('processor_connections').where({ workspace_id: workspace.id }).first();
    expect(row).toMatchObject({ backfill_status: 'failed', backfill_error: 'disconnected' });
  });
});

describe('mirror upserts', () => {
  it('validate their input and keep a subscription with its first customer', async () => {
    const db = database.current.db;
    const workspace = await createWorkspace(db, { name: 'Acme' });
    await expect(
      upsertCustomer(db, {
        workspace_id: workspace.id,
        psp_customer_id: 'cus_1',
        email: 'not-an-email',
        name: null,
        tags: [],
      }),
    ).rejects.toMatchObject({ type: 'invalid_param', message: expect.stringContaining('email') });
    const customer = await upsertCustomer(db, {
      workspace_id: workspace.id,
      psp_customer_id: 'cus_1',
      email: 'ann@example.com',
      name: 'Ann',
      tags: [' VIP ', 'vip'],
    });
    expect(customer).toMatchObject({ created: true, tags: ['vip'] });
    const base = {
      workspace_id: workspace.id,
      customer_id: customer.id,
      psp_subscription_id: 'sub_1',
      status: 'active' as const,
      plan_name: 'Pro',
      amount_cents: 4900,
      currency: 'usd',
      interval: 'month' as const,
      trial_end: null,
      current_period_end: null,
      canceled_at: null,
    };
    expect(await upsertSubscription(db, base)).toMatchObject({ created: true });
    expect(await upsertSubscription(db, { ...base, status: 'past_due' })).toMatchObject({
      created: false,
      status: 'past_due',
    });
    await expect(upsertSubscription(db, { ...base, currency: 'USD' })).rejects.toMatchObject({ type: 'invalid_param' });
    await expect(upsertSubscription(db, { ...base, trial_end: new Date('nope') })).rejects.toMatchObject({
      type: 'invalid_param',
      message: expect.stringContaining('trial_end'),
    });
  });
});
