import { beforeAll, describe, expect, it } from '@jest/globals';
import { CANCEL_OUTCOMES, type CancelOutcome } from '@retention/core';
import {
  recordCancelSession,
  recordWinback,
  sendReactivation,
  sendTrialReminder,
  type RecordCancelSessionInput,
  type RecordWinbackInput,
} from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';
import {
  actionGraph,
  eventsOf,
  expectRefusal,
  ISO_MILLIS,
  jsonTypes,
  UNKNOWN_ID,
  type ActionGraph,
} from './helpers.js';

const database = useTestDatabase();

let g: ActionGraph;
beforeAll(async () => {
  g = await actionGraph(database.current.db);
});

const lastEvent = async (workspaceId: string) => (await eventsOf(database.current.db, workspaceId)).at(-1);

describe('recordCancelSession', () => {
  const input = (overrides: Partial<RecordCancelSessionInput> = {}): RecordCancelSessionInput => ({
    workspace_id: g.a.id,
    customer_id: g.a.ann,
    subscription_id: g.a.active,
    outcome: 'canceled',
    reason_code: 'too_expensive',
    monthly_mrr_cents: 4900,
    currency: 'usd',
    ...overrides,
  });

  const EXPECTED_EVENT: Record<CancelOutcome, string | null> = {
    saved_discount: 'cancel.saved',
    saved_pause: 'cancel.saved',
    saved_downgrade: 'cancel.saved',
    saved_other: 'cancel.saved',
    canceled: 'cancel.lost',
    abandoned: null,
  };

  it.each(CANCEL_OUTCOMES.map((outcome) => [outcome, EXPECTED_EVENT[outcome] ?? 'no event'] as const))(
    'records a %s session and writes %s',
    async (outcome) => {
      const eventType = EXPECTED_EVENT[outcome];
      const { db } = database.current;
      const eventsBefore = await eventsOf(db, g.a.id);
      const session = await recordCancelSession(db, input({ outcome, reason_code: 'unused', monthly_mrr_cents: 1234 }));
      expect(session).toEqual({
        id: expect.any(String),
        object: 'cancel_session',
        customer_id: g.a.ann,
        subscription_id: g.a.active,
        outcome,
        reason_code: 'unused',
        feedback: null,
        monthly_mrr_cents: 1234,
        currency: 'usd',
        created_at: expect.stringMatching(ISO_MILLIS),
        ended_at: session.created_at,
      });
      expect(await db('cancel_sessions').where({ id: session.id }).first()).toMatchObject({ outcome });

      const events = await eventsOf(db, g.a.id);
      if (eventType === null) {
        expect(events).toEqual(eventsBefore);
        return;
      }
      expect(events).toHaveLength(eventsBefore.length + 1);
      const event = events.at(-1)!;
      expect(event.type).toBe(eventType);
      expect(event.data).toEqual({
        session_id: session.id,
        outcome,
        reason_code: 'unused',
        customer_email: g.a.annEmail,
        monthly_mrr_cents: 1234,
        currency: 'usd',
      });
      expect(jsonTypes(event.data)).toEqual({
        session_id: 'string',
        outcome: 'string',
        reason_code: 'string',
        customer_email: 'string',
        monthly_mrr_cents: 'integer',
        currency: 'string',
      });
    },
  );

  it('keeps multi-line feedback and works without a subscription', async () => {
    const session = await recordCancelSession(
      database.current.db,
      input({ subscription_id: undefined, feedback: 'Too pricey.\nWill be back\tin spring.', monthly_mrr_cents: 0 }),
    );
    expect(session).toMatchObject({
      subscription_id: null,
      feedback: 'Too pricey.\nWill be back\tin spring.',
      monthly_mrr_cents: 0,
    });
  });

  it('takes when the flow began (started_at) apart from when it ended (at), the event at the end', async () => {
    const startedAt = new Date('2026-03-02T10:00:00.000Z');
    const at = new Date('2026-03-02T10:04:30.000Z');
    const session = await recordCancelSession(
      database.current.db,
      input({ outcome: 'saved_discount', started_at: startedAt, at }),
    );
    expect(session).toMatchObject({ created_at: startedAt.toISOString(), ended_at: at.toISOString() });
    expect(await lastEvent(g.a.id)).toMatchObject({
      type: 'cancel.saved',
      created_at: at,
      data: { session_id: session.id },
    });
  });

  it('records the event of a disconnected workspace too', async () => {
    const session = await recordCancelSession(
      database.current.db,
      input({
        workspace_id: g.b.id,
        customer_id: g.b.cat,
        subscription_id: g.b.active,
        outcome: 'saved_pause',
        currency: 'eur',
      }),
    );
    expect(await lastEvent(g.b.id)).toMatchObject({
      type: 'cancel.saved',
      data: { session_id: session.id, customer_email: g.b.catEmail, currency: 'eur' },
    });
  });

  describe('refusals write nothing', () => {
    it.each<[string, Partial<RecordCancelSessionInput>, RegExp]>([
      ['an unknown outcome', { outcome: 'saved_forever' as CancelOutcome }, /outcome: must be one of/],
      ['an unknown reason code', { reason_code: 'bored' as never }, /reason_code: must be one of/],
      ['a negative MRR', { monthly_mrr_cents: -1 }, /monthly_mrr_cents/],
      ['a fractional MRR', { monthly_mrr_cents: 1.25 }, /monthly_mrr_cents/],
      ['an MRR over the cap', { monthly_mrr_cents: Number.MAX_SAFE_INTEGER }, /monthly_mrr_cents: .* 1000000000000/],
      ['a currency that is not three letters', { currency: 'euro' }, /currency/],
      ['feedback with a NUL', { feedback: 'bad\u0000byte' }, /feedback/],
      ['feedback of 5001 characters', { feedback: 'x'.repeat(5001) }, /feedback/],
      ['a non-UUID subscription', { subscription_id: 'sub_123' }, /subscription_id: must be a UUID/],
      [
        'a start after the end',
        { started_at: new Date('2026-03-02T10:05:00.000Z'), at: new Date('2026-03-02T10:00:00.000Z') },
        /started_at: must not be after the end/,
      ],
      [
        'a start in the future',
        { started_at: new Date(Date.now() + 86_400_000) },
        /started_at: must not be in the future/,
      ],
    ])('invalid_param for %s', async (_name, overrides, message) => {
      const { db } = database.current;
      await expectRefusal(db, 'invalid_param', () => recordCancelSession(db, input(overrides)), message);
    });

    it('invalid_param for a subscription of another customer', async () => {
      const { db } = database.current;
      await expectRefusal(db, 'invalid_param', () =>
        recordCancelSession(db, input({ customer_id: g.a.bob, subscription_id: g.a.active })),
      );
    });

    it.each<[string, () => Partial<RecordCancelSessionInput>]>([
      ['an unknown workspace', () => ({ workspace_id: UNKNOWN_ID })],
      ['an unknown customer', () => ({ customer_id: UNKNOWN_ID })],
      ['a customer of another workspace', () => ({ customer_id: g.b.cat, subscription_id: undefined })],
      ['a subscription of another workspace', () => ({ subscription_id: g.b.active })],
    ])('not_found for %s', async (_name, overrides) => {
      const { db } = database.current;
      await expectRefusal(db, 'not_found', () => recordCancelSession(db, input(overrides())));
    });
  });
});

describe('sendTrialReminder', () => {
  it('records the reminder for a trialing subscription and writes trial.reminder_sent with an ISO trial_end', async () => {
    const { db } = database.current;
    const reminder = await sendTrialReminder(db, { subscription_id: g.a.trial });
    expect(reminder).toEqual({
      id: expect.any(String),
      object: 'trial_reminder',
      workspace_id: g.a.id,
      customer_id: g.a.ann,
      subscription_id: g.a.trial,
      trial_end: '2030-01-15T12:30:00.250Z',
      sent_at: expect.stringMatching(ISO_MILLIS),
    });
    expect(await db('trial_reminders').where({ id: reminder.id }).first()).toMatchObject({
      subscription_id: g.a.trial,
    });
    const event = await lastEvent(g.a.id);
    expect(event).toMatchObject({ type: 'trial.reminder_sent', workspace_id: g.a.id });
    expect(event!.data).toEqual({
      reminder_id: reminder.id,
      customer_email: g.a.annEmail,
      subscription_id: g.a.trial,
      trial_end: '2030-01-15T12:30:00.250Z',
    });
  });

  it('refuses, writing nothing: a subscription not trialing, a trial without an end or already ended, unknown or foreign ids', async () => {
    const { db } = database.current;
    await expectRefusal(
      db,
      'conflict',
      () => sendTrialReminder(db, { subscription_id: g.a.active }),
      /active, not trialing/,
    );
    await expectRefusal(db, 'conflict', () => sendTrialReminder(db, { subscription_id: g.a.canceled }));
    await expectRefusal(
      db,
      'conflict',
      () => sendTrialReminder(db, { subscription_id: g.a.trialNoEnd }),
      /no trial end/,
    );
    await expectRefusal(
      db,
      'conflict',
      () => sendTrialReminder(db, { subscription_id: g.a.trialEnded }),
      /ended at 2020-01-01T00:00:00.000Z/,
    );
    await expectRefusal(db, 'not_found', () => sendTrialReminder(db, { subscription_id: UNKNOWN_ID }));
    await expectRefusal(db, 'not_found', () =>
      sendTrialReminder(db, { subscription_id: g.a.trial, workspace_id: g.b.id }),
    );
    await expectRefusal(db, 'invalid_param', () => sendTrialReminder(db, { subscription_id: 'trial' }));
  });
});

describe('sendReactivation', () => {
  it('records the email for a canceled subscription and writes reactivation.sent', async () => {
    const { db } = database.current;
    const reactivation = await sendReactivation(db, { subscription_id: g.a.canceled });
    expect(reactivation).toEqual({
      id: expect.any(String),
      object: 'reactivation',
      workspace_id: g.a.id,
      customer_id: g.a.bob,
      subscription_id: g.a.canceled,
      sent_at: expect.stringMatching(ISO_MILLIS),
    });
    const event = await lastEvent(g.a.id);
    expect(event!.type).toBe('reactivation.sent');
    expect(event!.data).toEqual({
      reactivation_id: reactivation.id,
      customer_email: g.a.bobEmail,
      subscription_id: g.a.canceled,
    });
  });

  it('refuses, writing nothing: a subscription that is not canceled, unknown or foreign ids', async () => {
    const { db } = database.current;
    await expectRefusal(
      db,
      'conflict',
      () => sendReactivation(db, { subscription_id: g.a.active }),
      /active, not canceled/,
    );
    await expectRefusal(db, 'conflict', () => sendReactivation(db, { subscription_id: g.a.trial }));
    await expectRefusal(db, 'not_found', () => sendReactivation(db, { subscription_id: UNKNOWN_ID }));
    await expectRefusal(db, 'not_found', () =>
      sendReactivation(db, { subscription_id: g.a.canceled, workspace_id: g.b.id }),
    );
  });
});

describe('recordWinback', () => {
  const input = (overrides: Partial<RecordWinbackInput> = {}): RecordWinbackInput => ({
    customer_id: g.a.bob,
    psp_subscription_id: 'sub_back_1',
    days_away: 42,
    amount_cents: 5800,
    currency: 'gbp',
    ...overrides,
  });

  it('records the win-back and writes winback.recorded', async () => {
    const { db } = database.current;
    const winback = await recordWinback(db, input());
    expect(winback).toEqual({
      id: expect.any(String),
      object: 'winback',
      workspace_id: g.a.id,
      customer_id: g.a.bob,
      psp_subscription_id: 'sub_back_1',
      days_away: 42,
      amount_cents: 5800,
      currency: 'gbp',
      recorded_at: expect.stringMatching(ISO_MILLIS),
      created: true,
    });
    const event = await lastEvent(g.a.id);
    expect(event!.type).toBe('winback.recorded');
    expect(event!.data).toEqual({
      winback_id: winback.id,
      customer_email: g.a.bobEmail,
      psp_subscription_id: 'sub_back_1',
      days_away: 42,
      amount_cents: 5800,
      currency: 'gbp',
    });
    expect(jsonTypes(event!.data)).toEqual({
      winback_id: 'string',
      customer_email: 'string',
      psp_subscription_id: 'string',
      days_away: 'integer',
      amount_cents: 'integer',
      currency: 'string',
    });
  });

  it('returns the first record of a replayed win-back, writing nothing', async () => {
    const { db } = database.current;
    const first = await recordWinback(db, input({ psp_subscription_id: 'sub_replayed' }));
    const eventsBefore = await eventsOf(db, g.a.id);
    const again = await recordWinback(db, input({ psp_subscription_id: 'sub_replayed', currency: 'gbp' }));
    expect(again).toEqual({ ...first, created: false });
    expect(await eventsOf(db, g.a.id)).toEqual(eventsBefore);
  });

  it.each<[string, Partial<RecordWinbackInput>]>([
    ['days away', { days_away: 1 }],
    ['amount', { amount_cents: 1 }],
    ['currency', { currency: 'eur' }],
  ])('refuses a win-back recorded again with another %s as a conflict, writing nothing', async (_name, changed) => {
    const { db } = database.current;
    const psp = `sub_changed_${Object.keys(changed)[0]!}`;
    const first = await recordWinback(db, input({ psp_subscription_id: psp }));
    await expectRefusal(
      db,
      'conflict',
      () => recordWinback(db, input({ psp_subscription_id: psp, ...changed })),
      /already recorded as a win-back with other values \(days_away 42, amount_cents 5800, currency gbp\)/,
    );
    expect(await db('winbacks').where({ id: first.id }).first()).toMatchObject({ days_away: 42, amount_cents: 5800 });
  });

  describe('refusals write nothing', () => {
    it.each<[string, Partial<RecordWinbackInput>, RegExp]>([
      ['negative days away', { days_away: -3 }, /days_away/],
      ['fractional days away', { days_away: 2.5 }, /days_away/],
      ['a negative amount', { amount_cents: -100 }, /amount_cents/],
      ['an amount over the cap', { amount_cents: 1_000_000_000_001 }, /amount_cents: .* from 0 to 1000000000000/],
      ['a currency of digits', { currency: '840' }, /currency/],
      ['an empty processor id', { psp_subscription_id: '' }, /psp_subscription_id/],
    ])('invalid_param for %s', async (_name, overrides, message) => {
      const { db } = database.current;
      await expectRefusal(db, 'invalid_param', () => recordWinback(db, input(overrides)), message);
    });

    it('not_found for an unknown customer or one of another workspace; conflict for a processor id of another customer', async () => {
      const { db } = database.current;
      await expectRefusal(db, 'not_found', () => recordWinback(db, input({ customer_id: UNKNOWN_ID })));
      await expectRefusal(db, 'not_found', () =>
        recordWinback(db, input({ customer_id: g.b.cat, workspace_id: g.a.id })),
      );
      await recordWinback(db, input({ psp_subscription_id: 'sub_owned' }));
      await expectRefusal(
        db,
        'conflict',
        () => recordWinback(db, input({ psp_subscription_id: 'sub_owned', customer_id: g.a.ann })),
        /another customer/,
      );
    });
  });
});
