import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  applyBackoffMs,
  applyProcessorEvents,
  claimBackfill,
  connectProcessor,
  createWorkspace,
  disconnectProcessor,
  finishBackfill,
  MAX_APPLY_ATTEMPTS,
  OPERATOR,
  processorStatus,
  requestBackfill,
  saveBackfillProgress,
  storeProcessorEvent,
  upsertCustomer,
  upsertSubscription,
} from '@retention/domain';
import { inTransaction, type Transaction } from '@retention/db';
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
    const again = await upsertCustomer(db, {
      workspace_id: workspace.id,
      psp_customer_id: 'cus_1',
      email: 'ann@example.org',
      name: null,
      tags: ['gold'],
    });
    expect(again).toMatchObject({
      id: customer.id,
      created: false,
      email: 'ann@example.org',
      name: null,
      tags: ['gold'],
    });
    expect(again.created_at).toEqual(customer.created_at);
    await expect(
      upsertCustomer(db, {
        workspace_id: '00000000-0000-4000-8000-000000000000',
        psp_customer_id: 'cus_1',
        email: 'ann@example.com',
        name: null,
        tags: [],
      }),
    ).rejects.toMatchObject({ type: 'not_found' });
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

describe('the inbox', () => {
  it('retries a failing event with growing back-off, parks it after the sixth failure, and applies the others meanwhile', async () => {
    const db = database.current.db;
    const { workspace } = await connected();
    const connection = await db('processor_connections').where({ workspace_id: workspace.id }).first();
    await db('processor_connections').update({ backfill_status: 'idle' });
    const store = (id: string, createdSecondsAgo: number) =>
      storeProcessorEvent(db, connection, {
        psp_event_id: id,
        type: 'customer.created',
        created: new Date(Date.now() - createdSecondsAgo * 1000),
        payload: { id },
      });
    await store('evt_poison', 60);
    const apply = (_trx: unknown, event: { psp_event_id: string }) =>
      event.psp_event_id === 'evt_poison' ? Promise.reject(new Error('boom')) : Promise.resolve('applied' as const);
    const delays: number[] = [];
    for (let failure = 1; failure <= MAX_APPLY_ATTEMPTS; failure += 1) {
      await store(`evt_healthy_${failure}`, 30);
      const results = await applyProcessorEvents(db, apply);
      // The poison event is first in line (oldest), fails alone; the healthy one behind it applies.
      expect(results.map((result) => [result.event.psp_event_id, result.outcome])).toEqual([
        ['evt_poison', failure === MAX_APPLY_ATTEMPTS ? 'parked' : 'failed'],
        [`evt_healthy_${failure}`, 'applied'],
      ]);
      const row = await db('processor_events')
        .where({ connection_id: connection.id, psp_event_id: 'evt_poison' })
        .first();
      expect(row).toMatchObject({ attempts: failure, last_error: 'boom' });
      if (failure < MAX_APPLY_ATTEMPTS) {
        delays.push(row.next_attempt_at.getTime() - Date.now());
        expect(await applyProcessorEvents(db, apply)).toEqual([]); // not due yet
        await db('processor_events').where({ id: row.id }).update({ next_attempt_at: db.fn.now() });
      } else {
        expect(row.state).toBe('parked');
      }
    }
    delays.forEach((delay, index) => {
      expect(delay).toBeGreaterThan(applyBackoffMs(index + 1) - 1_000);
      expect(delay).toBeLessThanOrEqual(applyBackoffMs(index + 1));
    });
    expect(await applyProcessorEvents(db, apply)).toEqual([]);
    const status = await processorStatus(db, 'https://x.test', workspace.id);
    expect(status).toMatchObject({ events_received: 7, events_pending: 0, events_parked: 1 });
    expect(status.parked_events).toEqual([
      expect.objectContaining({ psp_event_id: 'evt_poison', last_error: 'boom', attempts: 6 }),
    ]);
  });

  it('applies a batch around an event that fails mid-way: its own writes undone, the others applied once, in order', async () => {
    const db = database.current.db;
    const { workspace } = await connected();
    const connection = await db('processor_connections').where({ workspace_id: workspace.id }).first();
    await db.raw('CREATE TABLE apply_marks (psp_event_id text NOT NULL)');
    const ids = ['evt_a', 'evt_b', 'evt_js_error', 'evt_c', 'evt_sql_error', 'evt_d'];
    for (const [index, id] of ids.entries())
      await storeProcessorEvent(db, connection, {
        psp_event_id: id,
        type: 'customer.created',
        created: new Date(Date.now() - (100 - index) * 1000),
        payload: { id },
      });
    const calls: string[] = [];
    const apply = async (trx: Transaction, event: { psp_event_id: string }) => {
      calls.push(event.psp_event_id);
      await trx('apply_marks').insert({ psp_event_id: event.psp_event_id });
      if (event.psp_event_id === 'evt_js_error') throw new Error('boom');
      // A failing statement aborts the transaction: only a rollback to a savepoint saves the batch.
      if (event.psp_event_id === 'evt_sql_error') await trx.raw('SELECT 1 / 0');
      return 'applied' as const;
    };
    const results = await applyProcessorEvents(db, apply);
    expect(results.map((result) => [result.event.psp_event_id, result.outcome])).toEqual([
      ['evt_a', 'applied'],
      ['evt_b', 'applied'],
      ['evt_js_error', 'failed'],
      ['evt_c', 'applied'],
      ['evt_sql_error', 'failed'],
      ['evt_d', 'applied'],
    ]);
    // Each failing event was run once; the healthy ones are committed once each.
    expect(calls.filter((id) => id === 'evt_js_error')).toHaveLength(1);
    expect(calls.filter((id) => id === 'evt_sql_error')).toHaveLength(1);
    const marks = (await db('apply_marks').select('psp_event_id')).map((row) => row.psp_event_id as string);
    expect(marks.sort()).toEqual(['evt_a', 'evt_b', 'evt_c', 'evt_d']);
    const rows = await db('processor_events')
      .where({ connection_id: connection.id })
      .select('psp_event_id', 'state', 'attempts', 'last_error');
    const byId = Object.fromEntries(rows.map((row) => [row.psp_event_id, row]));
    for (const id of ['evt_a', 'evt_b', 'evt_c', 'evt_d'])
      expect(byId[id]).toMatchObject({ state: 'applied', attempts: 1, last_error: null });
    expect(byId.evt_js_error).toMatchObject({ state: 'pending', attempts: 1, last_error: 'boom' });
    expect(byId.evt_sql_error).toMatchObject({ state: 'pending', attempts: 1 });
    // The database's own words and SQLSTATE, as the owner reads them: never our query text.
    expect(byId.evt_sql_error.last_error).toBe(
      'The database refused a value in this event: division by zero (SQLSTATE 22012)',
    );
  });
});
