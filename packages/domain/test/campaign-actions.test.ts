import { beforeAll, describe, expect, it } from '@jest/globals';
import { loseCampaign, openCampaign, recoverCampaign, type OpenCampaignInput } from '@retention/domain';
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
let invoiceCounter = 0;

beforeAll(async () => {
  g = await actionGraph(database.current.db);
});

function openInput(overrides: Partial<OpenCampaignInput> = {}): OpenCampaignInput {
  invoiceCounter += 1;
  return {
    workspace_id: g.a.id,
    customer_id: g.a.ann,
    subscription_id: g.a.active,
    psp_invoice_id: `in_test_${invoiceCounter}`,
    amount_cents: 4900,
    currency: 'usd',
    decline_code: 'insufficient_funds',
    ...overrides,
  };
}

const open = (overrides: Partial<OpenCampaignInput> = {}) => openCampaign(database.current.db, openInput(overrides));

describe('openCampaign', () => {
  it('opens an in_flight campaign with its derived category and writes recovery.opened', async () => {
    const { db } = database.current;
    const before = await eventsOf(db, g.a.id);
    const campaign = await open({
      psp_invoice_id: 'in_open_1',
      decline_code: 'expired_card',
      amount_cents: 12900,
      failed_at: new Date('2026-03-01T10:00:00.123Z'),
    });
    expect(campaign).toEqual({
      id: expect.any(String),
      object: 'recovery_campaign',
      psp_invoice_id: 'in_open_1',
      amount_cents: 12900,
      currency: 'usd',
      status: 'in_flight',
      decline_code: 'expired_card',
      decline_category: 'card_update_required',
      recovered_via: null,
      first_failed_at: '2026-03-01T10:00:00.123Z',
      recovered_at: null,
      closed_at: null,
      customer_id: g.a.ann,
      subscription_id: g.a.active,
      created: true,
    });

    const events = await eventsOf(db, g.a.id);
    expect(events).toHaveLength(before.length + 1);
    const event = events.at(-1)!;
    expect(event).toMatchObject({ workspace_id: g.a.id, type: 'recovery.opened' });
    // Waiting for the dispatcher.
    expect(await db('event_outbox').where({ event_id: event.id })).toHaveLength(1);
    expect(event.created_at).toBeInstanceOf(Date);
    expect(event.data).toEqual({
      campaign_id: campaign.id,
      customer_email: g.a.annEmail,
      amount_cents: 12900,
      currency: 'usd',
      decline_code: 'expired_card',
      decline_category: 'card_update_required',
      psp_invoice_id: 'in_open_1',
    });
    expect(jsonTypes(event.data)).toEqual({
      campaign_id: 'string',
      customer_email: 'string',
      amount_cents: 'integer',
      currency: 'string',
      decline_code: 'string',
      decline_category: 'string',
      psp_invoice_id: 'string',
    });
  });

  it('defaults the first failure to now and files unknown decline codes as unknown', async () => {
    const started = Date.now();
    const campaign = await open({ decline_code: 'brand_new_code' });
    expect(campaign.decline_category).toBe('unknown');
    expect(campaign.first_failed_at).toMatch(ISO_MILLIS);
    expect(Date.parse(campaign.first_failed_at)).toBeGreaterThanOrEqual(started - 1000);
  });

  it('accepts the largest amount, 10^12 minor units', async () => {
    expect((await open({ amount_cents: 1_000_000_000_000 })).amount_cents).toBe(1_000_000_000_000);
  });

  it('takes a first failure up to a minute ahead (clock skew) as now, so it closes no earlier than it failed', async () => {
    const { db } = database.current;
    const campaign = await open({ failed_at: new Date(Date.now() + 30_000) });
    const { rows } = await db.raw<{ rows: Array<{ now: Date }> }>('SELECT now() AS now');
    expect(Date.parse(campaign.first_failed_at)).toBeLessThanOrEqual(rows[0]!.now.getTime());
    const recovered = await recoverCampaign(db, { id: campaign.id, via: 'retry' });
    expect(Date.parse(recovered.closed_at!)).toBeGreaterThanOrEqual(Date.parse(recovered.first_failed_at));
  });

  it('records the event for a workspace whose processor is disconnected too', async () => {
    const { db } = database.current;
    const campaign = await openCampaign(db, {
      ...openInput(),
      workspace_id: g.b.id,
      customer_id: g.b.cat,
      subscription_id: g.b.active,
      currency: 'eur',
    });
    const events = await eventsOf(db, g.b.id);
    expect(events.map((event) => [event.type, event.data.campaign_id])).toContainEqual([
      'recovery.opened',
      campaign.id,
    ]);
  });

  it('reports the existing campaign for a second failure of the same invoice, writing nothing', async () => {
    const { db } = database.current;
    const first = await open({ psp_invoice_id: 'in_twice' });
    const eventsBefore = await eventsOf(db, g.a.id);
    const second = await open({ psp_invoice_id: 'in_twice', decline_code: 'do_not_honor', amount_cents: 1 });
    expect(second).toEqual({ ...first, created: false });
    expect(await eventsOf(db, g.a.id)).toEqual(eventsBefore);
    expect(await db('recovery_campaigns').where({ psp_invoice_id: 'in_twice' })).toHaveLength(1);
  });

  it('opens exactly one campaign and one event when the same invoice fails twice at once', async () => {
    const { db } = database.current;
    const results = await Promise.all(Array.from({ length: 5 }, () => open({ psp_invoice_id: 'in_race' })));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    const events = (await eventsOf(db, g.a.id)).filter((event) => event.data.psp_invoice_id === 'in_race');
    expect(events).toHaveLength(1);
  });

  it('lets two workspaces use the same processor invoice id', async () => {
    const inA = await open({ psp_invoice_id: 'in_shared' });
    const inB = await openCampaign(database.current.db, {
      ...openInput({ psp_invoice_id: 'in_shared' }),
      workspace_id: g.b.id,
      customer_id: g.b.cat,
      subscription_id: g.b.active,
    });
    expect(inB.created).toBe(true);
    expect(inB.id).not.toBe(inA.id);
  });

  describe('refusals write nothing', () => {
    it.each<[string, Partial<OpenCampaignInput>, RegExp]>([
      ['a negative amount', { amount_cents: -5 }, /amount_cents/],
      ['a zero amount', { amount_cents: 0 }, /amount_cents/],
      ['a fractional amount', { amount_cents: 49.5 }, /amount_cents/],
      ['an amount over the cap', { amount_cents: 1_000_000_000_001 }, /amount_cents: .* from 1 to 1000000000000/],
      ['a currency of two letters', { currency: 'us' }, /currency/],
      ['a currency in capitals', { currency: 'USD' }, /currency/],
      ['a currency of four letters', { currency: 'usdx' }, /currency/],
      ['an empty invoice id', { psp_invoice_id: '' }, /psp_invoice_id/],
      ['an invoice id with a NUL', { psp_invoice_id: 'in_\u0000' }, /psp_invoice_id/],
      ['an overlong decline code', { decline_code: 'x'.repeat(101) }, /decline_code/],
      ['a non-UUID customer', { customer_id: "1' OR '1'='1" }, /customer_id: must be a UUID/],
      ['a failure in the future', { failed_at: new Date(Date.now() + 3_600_000) }, /failed_at/],
      ['an invalid date', { failed_at: new Date(Number.NaN) }, /failed_at/],
    ])('invalid_param for %s', async (_name, overrides, message) => {
      await expectRefusal(database.current.db, 'invalid_param', () => open(overrides), message);
    });

    it('invalid_param for a subscription of another customer', async () => {
      await expectRefusal(
        database.current.db,
        'invalid_param',
        () => open({ customer_id: g.a.bob, subscription_id: g.a.active }),
        /belongs to another customer/,
      );
    });

    it.each<[string, () => Partial<OpenCampaignInput>]>([
      ['an unknown workspace', () => ({ workspace_id: UNKNOWN_ID })],
      ['an unknown customer', () => ({ customer_id: UNKNOWN_ID })],
      ['an unknown subscription', () => ({ subscription_id: UNKNOWN_ID })],
      ['a customer of another workspace', () => ({ customer_id: g.b.cat })],
      ['a subscription of another workspace', () => ({ subscription_id: g.b.active })],
    ])('not_found for %s', async (_name, overrides) => {
      await expectRefusal(database.current.db, 'not_found', () => open(overrides()));
    });

    it('conflict for an invoice that already has a campaign of another customer', async () => {
      await open({ psp_invoice_id: 'in_taken' });
      await expectRefusal(
        database.current.db,
        'conflict',
        () => open({ psp_invoice_id: 'in_taken', customer_id: g.a.bob, subscription_id: g.a.canceled }),
        /already has campaign/,
      );
    });
  });
});

describe('recoverCampaign', () => {
  it.each(['retry', 'customer_update', 'spontaneous', 'manual'] as const)(
    'closes the campaign recovered via %s and writes recovery.recovered',
    async (via) => {
      const { db } = database.current;
      const opened = await open({ amount_cents: 2500 });
      const recovered = await recoverCampaign(db, { id: opened.id, via });
      expect(recovered).toEqual({
        ...opened,
        created: undefined,
        status: 'recovered',
        recovered_via: via,
        recovered_at: expect.stringMatching(ISO_MILLIS),
        closed_at: recovered.recovered_at,
      });
      expect(recovered).not.toHaveProperty('created');
      const event = (await eventsOf(db, g.a.id)).at(-1)!;
      expect(event.type).toBe('recovery.recovered');
      expect(event.data).toEqual({
        campaign_id: opened.id,
        customer_email: g.a.annEmail,
        amount_cents: 2500,
        currency: 'usd',
        recovered_via: via,
      });
      expect(jsonTypes(event.data)).toMatchObject({ amount_cents: 'integer', campaign_id: 'string' });
    },
  );

  it('records the operator who marked it recovered by hand', async () => {
    const { db } = database.current;
    const opened = await open();
    await recoverCampaign(db, { id: opened.id, via: 'manual', actor_id: g.a.member });
    const row = await db('recovery_campaigns').where({ id: opened.id }).first();
    expect(row.closed_by_user_id).toBe(g.a.member);
  });

  it('finds the campaign within the workspace a dashboard passes', async () => {
    const opened = await open();
    const recovered = await recoverCampaign(database.current.db, { id: opened.id, via: 'retry', workspace_id: g.a.id });
    expect(recovered.status).toBe('recovered');
  });

  describe('refusals write nothing', () => {
    it('invalid_param for an unknown way of recovery and a non-UUID id', async () => {
      const { db } = database.current;
      const opened = await open();
      await expectRefusal(
        db,
        'invalid_param',
        () => recoverCampaign(db, { id: opened.id, via: 'bogus' as never }),
        /via: must be one of "retry", "customer_update", "spontaneous", "manual"/,
      );
      await expectRefusal(db, 'invalid_param', () => recoverCampaign(db, { id: 'K-1', via: 'retry' }), /id/);
    });

    it('not_found for an unknown campaign, a campaign of another workspace, or an actor of another workspace', async () => {
      const { db } = database.current;
      const opened = await open();
      await expectRefusal(db, 'not_found', () => recoverCampaign(db, { id: UNKNOWN_ID, via: 'retry' }));
      await expectRefusal(db, 'not_found', () =>
        recoverCampaign(db, { id: opened.id, via: 'retry', workspace_id: g.b.id }),
      );
      await expectRefusal(
        db,
        'not_found',
        () => recoverCampaign(db, { id: opened.id, via: 'manual', actor_id: g.b.owner }),
        /No user/,
      );
      await expectRefusal(db, 'not_found', () =>
        recoverCampaign(db, { id: opened.id, via: 'manual', actor_id: UNKNOWN_ID }),
      );
    });

    it.each(['recovered', 'lost', 'abandoned'] as const)('conflict from %s', async (status) => {
      const { db } = database.current;
      const opened = await open();
      if (status === 'recovered') await recoverCampaign(db, { id: opened.id, via: 'retry' });
      if (status === 'lost') await loseCampaign(db, { id: opened.id, by: 'processor' });
      if (status === 'abandoned') {
        await db('recovery_campaigns').where({ id: opened.id }).update({ status, closed_at: new Date() });
      }
      await expectRefusal(
        db,
        'conflict',
        () => recoverCampaign(db, { id: opened.id, via: 'spontaneous' }),
        new RegExp(`already ${status}`),
      );
      await expectRefusal(db, 'conflict', () =>
        loseCampaign(db, { id: opened.id, by: 'operator', actor_id: g.a.owner }),
      );
    });
  });
});

describe('loseCampaign', () => {
  it('by an operator: lost, closed by that user, recovery.lost with source "dashboard"', async () => {
    const { db } = database.current;
    const opened = await open({ amount_cents: 7700 });
    const lost = await loseCampaign(db, { id: opened.id, by: 'operator', actor_id: g.a.owner });
    expect(lost).toMatchObject({
      id: opened.id,
      status: 'lost',
      recovered_via: null,
      recovered_at: null,
      closed_at: expect.stringMatching(ISO_MILLIS),
    });
    const row = await db('recovery_campaigns').where({ id: opened.id }).first();
    expect(row.closed_by_user_id).toBe(g.a.owner);
    const event = (await eventsOf(db, g.a.id)).at(-1)!;
    expect(event.type).toBe('recovery.lost');
    expect(event.data).toEqual({
      campaign_id: opened.id,
      customer_email: g.a.annEmail,
      amount_cents: 7700,
      currency: 'usd',
      source: 'dashboard',
    });
  });

  it('by the processor: lost, with neither reason nor source in the event', async () => {
    const { db } = database.current;
    const opened = await open({ amount_cents: 1200 });
    const lost = await loseCampaign(db, { id: opened.id, by: 'processor' });
    expect(lost.status).toBe('lost');
    const row = await db('recovery_campaigns').where({ id: opened.id }).first();
    expect(row.closed_by_user_id).toBeNull();
    const event = (await eventsOf(db, g.a.id)).at(-1)!;
    expect(event.type).toBe('recovery.lost');
    expect(event.data).toEqual({
      campaign_id: opened.id,
      customer_email: g.a.annEmail,
      amount_cents: 1200,
      currency: 'usd',
    });
  });

  it('refuses an operator loss without an actor and a processor loss with one, writing nothing', async () => {
    const { db } = database.current;
    const opened = await open();
    await expectRefusal(
      db,
      'invalid_param',
      () => loseCampaign(db, { id: opened.id, by: 'operator' } as never),
      /actor_id: is required/,
    );
    await expectRefusal(
      db,
      'invalid_param',
      () => loseCampaign(db, { id: opened.id, by: 'processor', actor_id: g.a.owner } as never),
      /processor/,
    );
    await expectRefusal(db, 'not_found', () => loseCampaign(db, { id: UNKNOWN_ID, by: 'processor' }));
    await expectRefusal(db, 'not_found', () =>
      loseCampaign(db, { id: opened.id, by: 'operator', actor_id: g.b.owner }),
    );
  });
});

describe('a replay of history (the demo seed): `at`', () => {
  it('records the open, the close and their events at the times given, and refuses a time to come', async () => {
    const { db } = database.current;
    const failedAt = new Date('2026-02-01T09:00:00.000Z');
    const recoveredAt = new Date('2026-02-04T10:30:00.250Z');
    const lostAt = new Date('2026-02-20T00:00:00.000Z');
    const first = await open({ failed_at: failedAt, at: failedAt });
    const second = await open({ failed_at: failedAt, at: failedAt });
    await recoverCampaign(db, { id: first.id, via: 'retry', at: recoveredAt });
    await loseCampaign(db, { id: second.id, by: 'processor', at: lostAt });

    const rows = await db('recovery_campaigns').whereIn('id', [first.id, second.id]).orderBy('status', 'desc');
    expect(rows.map((row) => [row.status, row.created_at, row.recovered_at, row.closed_at, row.updated_at])).toEqual([
      ['recovered', failedAt, recoveredAt, recoveredAt, recoveredAt],
      ['lost', failedAt, null, lostAt, lostAt],
    ]);
    const events = (await eventsOf(db, g.a.id)).filter((event) =>
      [first.id, second.id].includes((event.data as { campaign_id: string }).campaign_id),
    );
    expect(events.map((event) => [event.type, event.created_at])).toEqual([
      ['recovery.opened', failedAt],
      ['recovery.opened', failedAt],
      ['recovery.recovered', recoveredAt],
      ['recovery.lost', lostAt],
    ]);

    const later = new Date(Date.now() + 3_600_000);
    await expectRefusal(db, 'invalid_param', () => open({ at: later }), /at: must not be in the future/);
    const third = await open();
    await expectRefusal(
      db,
      'invalid_param',
      () => recoverCampaign(db, { id: third.id, via: 'retry', at: later }),
      /at: must not be in the future/,
    );
    await expectRefusal(
      db,
      'invalid_param',
      () => loseCampaign(db, { id: third.id, by: 'processor', at: later }),
      /at: must not be in the future/,
    );
  });
});
