import { beforeAll, describe, expect, it } from '@jest/globals';
import { sealSecret } from '@retention/core';
import { setFxRate, updateWorkspace } from '@retention/domain';
import { createLogger } from '@retention/runtime';
import { CUSTOMER_EXPORT_COLUMNS, CUSTOMER_EXPORT_TAG_SEPARATOR } from '@retention/db';
import { testSecretsKeyBytes } from '@retention/testkit';
import { OutboxDispatcher } from '../../../worker/src/dispatch/outbox-dispatcher.js';
import { useApi, workspaceWithToken } from '../harness.js';
import { dashboardClient, makeUser, signIn, team } from './support.js';

/** The insight routes over HTTP: the overview beside /api/v1/stats, and the campaign actions. */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

beforeAll(async () => {
  for (const [currency, perUsd] of [
    ['eur', '0.8'],
    ['jpy', '100'],
  ]) {
    await setFxRate(api.current.db, { currency: currency!, per_usd: perUsd! });
  }
});

const customers = [{ key: 'c', subscriptions: [{ key: 's' }] }];

/** The day it is in `zone` (`YYYY-MM-DD`): an export without a range is named after it. */
const today = (zone = 'UTC') =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(),
  );

/**
 * A workspace with an API token, a signed-in owner and member, and campaigns in four currencies
 * (xyz has no rate).
 */
async function world() {
  const { workspaceId, token } = await workspaceWithToken(api.current, {
    customers,
    campaigns: [
      {
        key: 'open',
        customer: 'c',
        currency: 'usd',
        amount_cents: 1000,
        decline_code: 'insufficient_funds',
        status: 'in_flight',
      },
      {
        customer: 'c',
        currency: 'eur',
        amount_cents: 800,
        decline_code: 'generic_decline',
        status: 'recovered',
        recovered_via: 'manual',
        first_failed_at: '2026-01-01T00:00:00Z',
        recovered_at: '2026-01-03T00:00:00Z',
      },
      { customer: 'c', currency: 'jpy', amount_cents: 5000, decline_code: 'stolen_card', status: 'in_flight' },
      { customer: 'c', currency: 'xyz', amount_cents: 999, decline_code: 'stop_payment_order', status: 'lost' },
    ],
    cancel_sessions: [
      { customer: 'c', outcome: 'saved_pause', monthly_mrr_cents: 800, currency: 'eur' },
      { customer: 'c', outcome: 'canceled', monthly_mrr_cents: 5000, currency: 'usd' },
    ],
  });
  const owner = await makeUser(api.current.db, workspaceId, 'owner');
  const member = await makeUser(api.current.db, workspaceId, 'member');
  const campaignIds = await api.current
    .db('recovery_campaigns')
    .where({ workspace_id: workspaceId, status: 'in_flight' })
    .orderBy('currency', 'desc')
    .pluck('id');
  return {
    workspaceId,
    token,
    campaignIds: campaignIds as string[],
    owner: await signIn(call, owner.email),
    member: await signIn(call, member.email),
  };
}

describe('GET /dashboard/api/overview', () => {
  it('all time is GET /api/v1/stats number for number, naming the unconvertible currency', async () => {
    const w = await world();
    const overview = await call('GET', '/overview?period=all_time', { cookie: w.owner });
    const stats = await api.current.get('/api/v1/stats', w.token);
    expect(overview.status).toBe(200);
    expect(stats.status).toBe(200);
    const { generated_at: _a, ...fromOverview } = overview.body.stats;
    const { generated_at: _b, ...fromApi } = stats.body;
    expect(fromOverview).toEqual(fromApi);
    expect(overview.body.unconverted_currencies).toEqual(['xyz']);
    expect(overview.body.stats.recovery).toMatchObject({
      opened: 4,
      recovered_amount_cents: 1000, // 800 eur cents at 0.8 per usd
      at_risk_amount_cents: 6000, // 1000 usd cents + 5000 yen (no minor unit) at 100 per usd = 50 usd
      lost_amount_cents: 0, // xyz left out
    });
    expect(overview.body.campaigns_by_month).toHaveLength(12);
  });

  it("a period's has_multiple_currencies says whether that period's totals mixed currencies", async () => {
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        { customer: 'c', currency: 'usd', amount_cents: 1000, decline_code: 'insufficient_funds', status: 'in_flight' },
        {
          customer: 'c',
          currency: 'eur',
          amount_cents: 800,
          decline_code: 'generic_decline',
          status: 'lost',
          first_failed_at: '2025-01-01T00:00:00Z',
          closed_at: '2025-01-03T00:00:00Z',
        },
      ],
    });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const recent = await call('GET', '/overview?period=last_30_days', { cookie: owner });
    const allTime = await call('GET', '/overview?period=all_time', { cookie: owner });
    expect(recent.body.stats).toMatchObject({ has_multiple_currencies: false, recovery: { opened: 1 } });
    expect(allTime.body.stats).toMatchObject({ has_multiple_currencies: true, recovery: { opened: 2 } });
  });

  it('names the exchange rates its money was converted with: when the operator set each, or null for a shipped default', async () => {
    const w = await world();
    const overview = await call('GET', '/overview?period=all_time', { cookie: w.owner });
    const set = await api.current.db('fx_rates').whereIn('currency', ['eur', 'jpy']).orderBy('currency');
    // USD display: the rates of the currencies converted (xyz has none), the dollar's own not listed.
    expect(overview.body.exchange_rates).toEqual(
      set.map((row: { currency: string; updated_at: Date }) => ({
        currency: row.currency,
        per_usd: row.currency === 'eur' ? '0.8' : '100',
        set_at: row.updated_at.toISOString(),
      })),
    );
    // A display currency converted to: its own rate too, here the shipped default (no date).
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        { customer: 'c', currency: 'usd', amount_cents: 1000, decline_code: 'insufficient_funds', status: 'in_flight' },
      ],
    });
    await updateWorkspace(api.current.db, workspaceId, { display_currency: 'gbp' });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const inGbp = await call('GET', '/overview', { cookie: owner });
    expect(inGbp.body.exchange_rates).toEqual([{ currency: 'gbp', per_usd: '0.79', set_at: null }]);
    // Nothing converted: no rate to name.
    await updateWorkspace(api.current.db, workspaceId, { display_currency: 'usd' });
    const inUsd = await call('GET', '/overview', { cookie: owner });
    expect(inUsd.body.exchange_rates).toEqual([]);
  });

  it('this_month and last_month are UTC calendar months: a campaign at 00:00 UTC on the 1st opens this month, one a millisecond before (or at 00:30 on the 1st in Tokyo) last month', async () => {
    const now = new Date();
    const thisMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
    const at = (ms: number) => new Date(ms).toISOString();
    const opened = (first_failed_at: string, amount_cents: number) => ({
      customer: 'c',
      currency: 'usd',
      amount_cents,
      decline_code: 'insufficient_funds',
      status: 'in_flight' as const,
      first_failed_at,
    });
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        opened(at(thisMonth), 100), // the first instant of this UTC month
        opened(at(thisMonth - 1), 200), // the last of last month
        opened(at(thisMonth - 9 * 3_600_000 + 30 * 60_000), 400), // 00:30 on the 1st in Tokyo (UTC+9): still last month in UTC
        opened(at(lastMonth), 800), // the first instant of last month
        opened(at(lastMonth - 1), 1600), // the month before: in neither
      ],
    });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const current = await call('GET', '/overview?period=this_month', { cookie: owner });
    const previous = await call('GET', '/overview?period=last_month', { cookie: owner });
    const day = (ms: number) => at(ms).slice(0, 10);
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({ period: 'this_month', since: day(thisMonth), until: null });
    expect(current.body.stats.recovery).toMatchObject({ opened: 1, at_risk_amount_cents: 100 });
    expect(previous.body).toMatchObject({ period: 'last_month', since: day(lastMonth), until: day(thisMonth) });
    expect(previous.body.stats.recovery).toMatchObject({ opened: 3, at_risk_amount_cents: 200 + 400 + 800 });
    // Number for number the monthly chart's bars of those months (UTC months, as the rollups count them).
    const bars = current.body.campaigns_by_month as Array<{
      month: string;
      opened: number;
      failed_amount_cents: number;
    }>;
    expect(bars.at(-1)).toMatchObject({ month: day(thisMonth).slice(0, 7), opened: 1, failed_amount_cents: 100 });
    expect(bars.at(-2)).toMatchObject({ month: day(lastMonth).slice(0, 7), opened: 3, failed_amount_cents: 1400 });
    // The cancel reasons and decline codes of last month end where it does too.
    expect(previous.body.decline_codes).toEqual([
      expect.objectContaining({ decline_code: 'insufficient_funds', opened: 3, failed_amount_cents: 1400 }),
    ]);
  });

  it('custom is the UTC days from `from` to `to`, both included; it needs both, in order, and no other period takes them', async () => {
    const opened = (first_failed_at: string, amount_cents: number) => ({
      customer: 'c',
      currency: 'usd',
      amount_cents,
      decline_code: 'insufficient_funds',
      status: 'in_flight' as const,
      first_failed_at,
    });
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        opened('2026-03-31T23:59:59.999Z', 1), // the day before
        opened('2026-04-01T00:00:00Z', 10), // the first day's first instant
        opened('2026-04-15T23:59:59.999Z', 100), // the last day's last instant
        opened('2026-04-16T00:00:00Z', 1000), // the day after
      ],
    });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const range = await call('GET', '/overview?period=custom&from=2026-04-01&to=2026-04-15', { cookie: owner });
    expect(range.status).toBe(200);
    expect(range.body).toMatchObject({ period: 'custom', since: '2026-04-01', until: '2026-04-16' });
    expect(range.body.stats.recovery).toMatchObject({ opened: 2, at_risk_amount_cents: 110 });
    const oneDay = await call('GET', '/overview?period=custom&from=2026-04-16&to=2026-04-16', { cookie: owner });
    expect(oneDay.body.stats.recovery).toMatchObject({ opened: 1, at_risk_amount_cents: 1000 });
    for (const [address, message] of [
      ['/overview?period=custom&from=2026-04-01', /needs from and to/],
      ['/overview?period=custom&from=2026-04-01&to=2026-02-30', /needs from and to/],
      ['/overview?period=custom&from=2026-04-15&to=2026-04-01', /from must be on or before to/],
      ['/overview?period=last_30_days&from=2026-04-01&to=2026-04-15', /for period=custom only/],
    ] as const) {
      const refused = await call('GET', address, { cookie: owner });
      expect({ address, status: refused.status }).toEqual({ address, status: 400 });
      expect(refused.body.error.message).toMatch(message);
    }
  });

  it('gives each decline category and the top decline codes with their money in the display currency, converted as the KPIs are', async () => {
    const campaign = (decline_code: string, currency: string, amount_cents: number, status = 'in_flight') => ({
      customer: 'c',
      currency,
      amount_cents,
      decline_code,
      status: status as 'in_flight',
      ...(status === 'recovered' && { recovered_via: 'retry' as const, recovered_at: new Date().toISOString() }),
    });
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        campaign('insufficient_funds', 'usd', 1000),
        campaign('insufficient_funds', 'eur', 800, 'recovered'), // 1000 usd cents at 0.8 per usd
        campaign('insufficient_funds', 'jpy', 500), // 5 usd
        campaign('expired_card', 'usd', 2500),
        campaign('expired_card', 'usd', 2500),
        campaign('do_not_honor', 'usd', 300),
        campaign('stolen_card', 'xyz', 999), // no rate: counted, its money left out
        // Eight more codes, one campaign each: the two smallest are summed as others.
        ...['incorrect_cvc', 'lost_card', 'try_again_later', 'processing_error', 'invalid_number', 'fraudulent'].map(
          (code) => campaign(code, 'usd', 50),
        ),
        campaign('generic_decline', 'usd', 10),
        campaign('some_new_code', 'usd', 20),
      ],
    });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const reply = await call('GET', '/overview?period=last_30_days', { cookie: owner });
    expect(reply.status).toBe(200);
    const { decline_categories: categories, decline_codes: codes, other_decline_codes: others } = reply.body;
    const soft = 1000 + 1000 + 500 + 300 + 50 + 50 + 10;
    expect(categories).toEqual([
      { decline_category: 'soft', opened: 7, recovered: 1, failed_amount_cents: soft, recovered_amount_cents: 1000 },
      {
        decline_category: 'card_update_required',
        opened: 4,
        recovered: 0,
        failed_amount_cents: 5100,
        recovered_amount_cents: 0,
      },
      {
        decline_category: 'authentication_required',
        opened: 0,
        recovered: 0,
        failed_amount_cents: 0,
        recovered_amount_cents: 0,
      },
      { decline_category: 'revoked', opened: 0, recovered: 0, failed_amount_cents: 0, recovered_amount_cents: 0 },
      { decline_category: 'fraud', opened: 3, recovered: 0, failed_amount_cents: 100, recovered_amount_cents: 0 },
      { decline_category: 'unknown', opened: 1, recovered: 0, failed_amount_cents: 20, recovered_amount_cents: 0 },
    ]);
    // The categories' counts are the stats' own.
    expect(reply.body.stats.recovery.by_decline_category.soft).toEqual({ opened: 7, recovered: 1 });
    // Most campaigns first, then most money, then by name; eight named.
    expect(codes.map((code: { decline_code: string }) => code.decline_code)).toEqual([
      'insufficient_funds',
      'expired_card',
      'do_not_honor',
      'fraudulent',
      'incorrect_cvc',
      'invalid_number',
      'lost_card',
      'processing_error',
    ]);
    expect(codes[0]).toEqual({
      decline_code: 'insufficient_funds',
      decline_category: 'soft',
      opened: 3,
      recovered: 1,
      failed_amount_cents: 2500,
      recovered_amount_cents: 1000,
    });
    expect(codes[1]).toMatchObject({ decline_category: 'card_update_required', opened: 2, failed_amount_cents: 5000 });
    // try_again_later (50), some_new_code (20), generic_decline (10) and stolen_card (xyz: no money) beyond the eight.
    expect(others).toEqual({ codes: 4, opened: 4, failed_amount_cents: 80 });
    expect(reply.body.unconverted_currencies).toEqual(['xyz']);
  });

  it("closed_in_period counts the campaigns closed on the period's days, whenever they opened, in the display currency; the cohort KPIs do not", async () => {
    const day = 86_400_000;
    const ago = (days: number) => new Date(Date.now() - days * day).toISOString();
    const campaign = (
      currency: string,
      amount_cents: number,
      status: 'in_flight' | 'recovered' | 'lost' | 'abandoned',
      openedDaysAgo: number,
      closedDaysAgo?: number,
    ) => ({
      customer: 'c',
      currency,
      amount_cents,
      decline_code: 'insufficient_funds',
      status,
      first_failed_at: ago(openedDaysAgo),
      ...(status === 'recovered' && { recovered_via: 'retry' as const, recovered_at: ago(closedDaysAgo!) }),
      ...((status === 'lost' || status === 'abandoned') && { closed_at: ago(closedDaysAgo!) }),
    });
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        campaign('usd', 1000, 'recovered', 60, 5), // opened before the 30 days, recovered in them
        campaign('xyz', 999, 'recovered', 45, 1), // no rate: counted, its money left out
        campaign('eur', 800, 'lost', 10, 2), // 1000 usd cents at 0.8 per usd
        campaign('jpy', 5000, 'abandoned', 50, 1), // 50 usd: abandoned counts as lost
        campaign('usd', 7000, 'in_flight', 3), // opened in the period, still open
        campaign('usd', 300, 'recovered', 90, 40), // recovered before the period
      ],
    });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const recent = await call('GET', '/overview?period=last_30_days', { cookie: owner });
    expect(recent.status).toBe(200);
    expect(recent.body.closed_in_period).toEqual({
      recovered: 2,
      recovered_amount_cents: 1000,
      lost: 2,
      lost_amount_cents: 1000 + 5000,
    });
    // The cohort: only the campaigns that opened in the period (the open one and the lost one).
    expect(recent.body.stats.recovery).toMatchObject({
      opened: 2,
      recovered: 0,
      recovered_amount_cents: 0,
      lost: 1,
      lost_amount_cents: 1000,
      at_risk_amount_cents: 7000,
    });
    expect(recent.body.unconverted_currencies).toEqual(['xyz']);
    // Its conversions are named with the others'.
    expect(recent.body.exchange_rates.map((rate: { currency: string }) => rate.currency)).toEqual(['eur', 'jpy']);
    // Of all time, closed and opened are the same campaigns: the closed figures are the KPIs'.
    const allTime = await call('GET', '/overview?period=all_time', { cookie: owner });
    const { recovery } = allTime.body.stats;
    expect(allTime.body.closed_in_period).toEqual({
      recovered: recovery.recovered,
      recovered_amount_cents: recovery.recovered_amount_cents,
      lost: recovery.lost + recovery.abandoned,
      lost_amount_cents: recovery.lost_amount_cents,
    });
    expect(allTime.body.closed_in_period).toMatchObject({ recovered: 3, recovered_amount_cents: 1300 });
  });

  it("closed_in_period of last_month ends where the month does: a close at its last instant counts in it, one at this month's first in this month", async () => {
    const now = new Date();
    const thisMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
    const at = (ms: number) => new Date(ms).toISOString();
    const openedLongAgo = at(lastMonth - 60 * 86_400_000);
    const recovered = (recovered_at: string, amount_cents: number) => ({
      customer: 'c',
      currency: 'usd',
      amount_cents,
      decline_code: 'insufficient_funds',
      status: 'recovered' as const,
      recovered_via: 'retry' as const,
      first_failed_at: openedLongAgo,
      recovered_at,
    });
    const { workspaceId } = await workspaceWithToken(api.current, {
      customers,
      campaigns: [
        recovered(at(thisMonth), 100), // the first instant of this UTC month
        recovered(at(thisMonth - 1), 200), // the last of last month
        recovered(at(lastMonth), 400), // the first of last month
        recovered(at(lastMonth - 1), 800), // the month before: in neither
        {
          customer: 'c',
          currency: 'usd',
          amount_cents: 1600,
          decline_code: 'insufficient_funds',
          status: 'lost' as const,
          first_failed_at: openedLongAgo,
          closed_at: at(thisMonth - 1),
        },
      ],
    });
    const owner = await signIn(call, (await makeUser(api.current.db, workspaceId, 'owner')).email);
    const previous = await call('GET', '/overview?period=last_month', { cookie: owner });
    const current = await call('GET', '/overview?period=this_month', { cookie: owner });
    expect(previous.body.closed_in_period).toEqual({
      recovered: 2,
      recovered_amount_cents: 600,
      lost: 1,
      lost_amount_cents: 1600,
    });
    expect(current.body.closed_in_period).toEqual({
      recovered: 1,
      recovered_amount_cents: 100,
      lost: 0,
      lost_amount_cents: 0,
    });
    // None of them opened in either month: the cohort KPIs count none.
    expect(previous.body.stats.recovery.opened).toBe(0);
    expect(current.body.stats.recovery.opened).toBe(0);
  });

  it('refuses an unknown period with the JSON error, and a request without a session', async () => {
    const w = await world();
    const bad = await call('GET', '/overview?period=forever', { cookie: w.member });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/period must be one of last_30_days/);
    expect((await call('GET', '/overview')).status).toBe(401);
  });
});

describe('POST /dashboard/api/campaigns/:id/mark-lost and mark-recovered', () => {
  it('mark lost by the owner: recovery.lost with source "dashboard" and campaign.marked_lost', async () => {
    const w = await world();
    const id = w.campaignIds[0]!;
    const reply = await call('POST', `/campaigns/${id}/mark-lost`, { cookie: w.owner });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ id, status: 'lost' });
    const event = await api.current.db('events').where({ workspace_id: w.workspaceId, type: 'recovery.lost' }).first();
    expect(event.data).toMatchObject({ campaign_id: id, source: 'dashboard' });
    const logged = await api.current.db('security_events').where({ workspace_id: w.workspaceId, target_id: id });
    expect(logged.map((row: { action: string }) => row.action)).toEqual(['campaign.marked_lost']);

    // The detail's timeline: the event with its delivery's outcome, and who marked it lost.
    const [endpoint] = await api.current
      .db('webhook_endpoints')
      .insert({
        workspace_id: w.workspaceId,
        name: 'Receiver',
        url: 'https://e.invalid/',
        signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_x'),
      })
      .returning('id');
    await api.current.db('webhook_deliveries').insert({
      workspace_id: w.workspaceId,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_type: 'recovery.lost',
      status: 'succeeded',
      attempt_count: 1,
      completed_at: new Date(),
    });
    const detail = await call('GET', `/campaigns/${id}`, { cookie: w.member });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id, status: 'lost', customer: { object: 'customer' } });
    expect(
      detail.body.timeline.map((entry: { kind: string; type?: string; action?: string }) => entry.type ?? entry.action),
    ).toEqual(['campaign.marked_lost', 'recovery.lost']); // recorded at one time: the cause, then its event
    expect(detail.body.timeline[1]).toMatchObject({
      source: 'dashboard',
      deliveries: [{ endpoint_name: 'Receiver', status: 'succeeded', attempt_count: 1 }],
    });
    expect(detail.body.timeline[0].actor).toEqual({
      type: 'user',
      user_id: expect.any(String),
      label: expect.any(String),
      email: expect.any(String),
    });
    expect(detail.body.timeline[0].at).toBe(detail.body.timeline[1].at);
    const elsewhere = await team(api.current.db, call, 'Elsewhere');
    expect((await call('GET', `/campaigns/${id}`, { cookie: elsewhere.member.cookie })).status).toBe(404);

    const again = await call('POST', `/campaigns/${id}/mark-recovered`, { cookie: w.owner });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/is already lost; a closed campaign cannot change/);
  });

  it('mark recovered records manual', async () => {
    const w = await world();
    const reply = await call('POST', `/campaigns/${w.campaignIds[1]!}/mark-recovered`, { cookie: w.owner });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: 'recovered', recovered_via: 'manual' });
  });

  it("the timeline says an event was not sent while the workspace's processor was not connected, queued or dispatched", async () => {
    const w = await world();
    const id = w.campaignIds[1]!;
    await api.current.db('webhook_endpoints').insert({
      workspace_id: w.workspaceId,
      name: 'Receiver',
      url: 'https://e.invalid/',
      signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_x'),
    });
    const eventOf = async () => {
      const detail = await call('GET', `/campaigns/${id}`, { cookie: w.member });
      expect(detail.status).toBe(200);
      return detail.body.timeline.find((entry: { type?: string }) => entry.type === 'recovery.recovered');
    };

    const dispatch = () =>
      new OutboxDispatcher({
        db: api.current.db,
        logger: createLogger('test', 'silent'),
        delivered: () => undefined,
        batchSize: 500,
      }).dispatchBatch();

    // Connected: queued, on its way, no reason; once dispatched, its delivery, no reason.
    await updateWorkspace(api.current.db, w.workspaceId, { processor: 'connected' });
    const lostId = w.campaignIds[0]!;
    expect((await call('POST', `/campaigns/${lostId}/mark-lost`, { cookie: w.owner })).status).toBe(200);
    const sent = await call('GET', `/campaigns/${lostId}`, { cookie: w.member });
    // The event, after the action that recorded it ("Marked lost by …") at the same time.
    const lostEvent = (timeline: { type?: string }[]) => timeline.find((entry) => entry.type === 'recovery.lost');
    expect(lostEvent(sent.body.timeline)).toMatchObject({ queued: true, not_sent_reason: null });
    await dispatch();
    const dispatched = await call('GET', `/campaigns/${lostId}`, { cookie: w.member });
    expect(lostEvent(dispatched.body.timeline)).toMatchObject({
      queued: false,
      not_sent_reason: null,
      deliveries: [{ endpoint_name: 'Receiver', status: 'pending' }],
    });

    // Not connected: still queued, and the dispatcher will not send it; once it has run, the
    // reason is on record, whatever the workspace's processor is since.
    await updateWorkspace(api.current.db, w.workspaceId, { processor: 'disconnected' });
    expect((await call('POST', `/campaigns/${id}/mark-recovered`, { cookie: w.owner })).status).toBe(200);
    expect(await eventOf()).toMatchObject({ queued: true, not_sent_reason: 'processor_not_connected', deliveries: [] });
    await dispatch();
    await updateWorkspace(api.current.db, w.workspaceId, { processor: 'connected' });
    expect(await eventOf()).toMatchObject({
      queued: false,
      not_sent_reason: 'processor_not_connected',
      deliveries: [],
    });
  });

  it('refuses a member (403), a forged origin (403), another workspace (404) and a bad id (400), changing nothing', async () => {
    const w = await world();
    const other = await team(api.current.db, call, 'Other');
    const id = w.campaignIds[0]!;
    const member = await call('POST', `/campaigns/${id}/mark-lost`, { cookie: w.member });
    expect(member.status).toBe(403);
    const forged = await call('POST', `/campaigns/${id}/mark-lost`, {
      cookie: w.owner,
      origin: 'https://evil.example',
    });
    expect(forged.status).toBe(403);
    const theirs = await call('POST', `/campaigns/${id}/mark-recovered`, { cookie: other.owner.cookie });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.type).toBeDefined();
    const bad = await call('POST', '/campaigns/not-a-uuid/mark-lost', { cookie: w.owner });
    expect(bad.status).toBe(400);
    const row = await api.current.db('recovery_campaigns').where({ id }).first('status');
    expect(row.status).toBe('in_flight');
    expect(await api.current.db('security_events').where({ target_id: id })).toEqual([]);
  });
});

describe('GET /dashboard/api/campaigns/export.csv', () => {
  it('streams the filtered campaigns with ids, formula cells neutralised, another workspace never included', async () => {
    const w = await world();
    const other = await world();
    const [customer] = await api.current.db('customers').where({ workspace_id: w.workspaceId }).select('id', 'email');
    const [subscription] = await api.current.db('subscriptions').where({ workspace_id: w.workspaceId }).select('id');
    await api.current.db('recovery_campaigns').insert({
      workspace_id: w.workspaceId,
      customer_id: customer.id,
      subscription_id: subscription.id,
      psp_invoice_id: '=HYPERLINK("http://evil.example")',
      amount_cents: 4200,
      currency: 'usd',
      status: 'lost',
      decline_code: '+cmd|calc',
      decline_category: 'unknown',
      first_failed_at: new Date('2026-02-03T04:05:06.789Z'),
      closed_at: new Date('2026-02-04T00:00:00Z'),
    });
    const reply = await call('GET', '/campaigns/export.csv?status=lost', { cookie: w.member });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(reply.headers.get('content-disposition')).toBe(`attachment; filename="campaigns-lost-${today()}.csv"`);
    const lines = reply.text.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'id,psp_invoice_id,customer_id,customer_email,customer_name,subscription_id,amount_cents,amount,currency,status,decline_code,decline_category,recovered_via,first_failed_at,recovered_at,closed_at',
    );
    // Newest first: the xyz campaign (fixture default failed_at, later) then ours.
    const ours = lines.find((line) => line.includes('HYPERLINK'))!;
    expect(ours).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
    expect(ours).toContain(",'+cmd|calc,unknown,,2026-02-03T04:05:06.789Z,,2026-02-04T00:00:00.000Z");
    expect(ours).toContain(`,${customer.email},`);
    // The amount in major units beside the minor ones, for a spreadsheet's sums.
    expect(ours).toContain(',4200,42.00,usd,lost,');
    expect(lines).toHaveLength(3); // header, xyz lost, ours
    expect(reply.text).not.toContain(other.workspaceId);
    const otherIds = await api.current.db('recovery_campaigns').where({ workspace_id: other.workspaceId }).pluck('id');
    for (const id of otherIds) expect(reply.text).not.toContain(id);

    const byEmail = await call('GET', `/campaigns/export.csv?q=${encodeURIComponent(customer.email)}`, {
      cookie: w.member,
    });
    expect(byEmail.text.trimEnd().split('\n')).toHaveLength(6); // header and all five
    const bad = await call('GET', '/campaigns/export.csv?status=won', { cookie: w.member });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/status: must be one of/);
  });

  it('names the file after the range it exports: its days in `tz` (UTC without), else its instants', async () => {
    const w = await world();
    const disposition = async (search: string, method: 'GET' | 'HEAD' = 'GET') => {
      const reply = await call(method, `/campaigns/export.csv?${search}`, { cookie: w.member });
      expect(reply.status).toBe(200);
      return reply.headers.get('content-disposition');
    };
    const named = (filename: string) => `attachment; filename="${filename}"`;
    // Nov 1 and Nov 2 as they start in Auckland (NZDT, UTC+13), as the dashboard sends them.
    const auckland = 'from=2026-10-31T11%3A00%3A00.000Z&to=2026-11-01T11%3A00%3A00.000Z';
    await expect(disposition(`${auckland}&tz=Pacific%2FAuckland`)).resolves.toBe(
      named('campaigns-2026-11-01-to-2026-11-02.csv'),
    );
    await expect(disposition(`${auckland}&tz=Pacific%2FAuckland`, 'HEAD')).resolves.toBe(
      named('campaigns-2026-11-01-to-2026-11-02.csv'),
    );
    // The same instants named in UTC are not midnights: the instants themselves, no colons.
    await expect(disposition(auckland)).resolves.toBe(named('campaigns-2026-10-31T110000Z-to-2026-11-01T110000Z.csv'));
    await expect(disposition('from=2026-11-01&to=2026-11-02&status=lost')).resolves.toBe(
      named('campaigns-lost-2026-11-01-to-2026-11-02.csv'),
    );
    await expect(disposition('from=2026-11-01')).resolves.toBe(named('campaigns-from-2026-11-01.csv'));
    await expect(disposition('to=2026-11-02T08%3A00%3A00.250Z&tz=America%2FLos_Angeles')).resolves.toBe(
      named('campaigns-before-2026-11-02T080000.250Z.csv'),
    );
    await expect(disposition('to=2026-11-02T08%3A00%3A00Z&tz=America%2FLos_Angeles')).resolves.toBe(
      named('campaigns-before-2026-11-02.csv'),
    );
    await expect(disposition('tz=UTC')).resolves.toBe(named(`campaigns-${today()}.csv`));
    for (const tz of ['Mars%2FOlympus', '%2B13%3A00', 'Pacific%2FAuckland%0D%0AX-Evil%3A%201']) {
      const bad = await call('GET', `/campaigns/export.csv?from=2026-11-01&tz=${tz}`, { cookie: w.member });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(/^tz: must be an IANA time zone name/);
    }
  });

  it('names the file after its filters, and the day it was exported when it has no range', async () => {
    const w = await world();
    const disposition = async (search: string) => {
      const reply = await call('GET', `/campaigns/export.csv?${search}`, { cookie: w.member });
      expect(reply.status).toBe(200);
      return reply.headers.get('content-disposition')!.replace(/^attachment; filename="(.*)"$/, '$1');
    };
    // It was `campaigns.csv` whatever the filter: two exports of a list saved over each other.
    await expect(disposition('status=recovered')).resolves.toBe(`campaigns-recovered-${today()}.csv`);
    await expect(disposition('status=in_flight&decline_category=card_update_required')).resolves.toBe(
      `campaigns-in-flight-card-update-required-${today()}.csv`,
    );
    // The day exported is the zone's, as the page's days are.
    const zone = 'Pacific/Kiritimati';
    await expect(disposition(`status=lost&tz=${encodeURIComponent(zone)}`)).resolves.toBe(
      `campaigns-lost-${today(zone)}.csv`,
    );
    // A search is named safely: ASCII letters, digits and `-`, accents dropped, cut at 40.
    const search = encodeURIComponent('Zoë "O\'Brien"/..\\;@Example.com');
    await expect(disposition(`q=${search}`)).resolves.toBe(`campaigns-search-zoe-o-brien-example-com-${today()}.csv`);
    await expect(disposition(`q=${encodeURIComponent('Ζωή Παπαδοπούλου')}`)).resolves.toBe(
      `campaigns-search-${today()}.csv`,
    );
    const long = await disposition(`q=${'a'.repeat(300)}&from=2026-11-01&status=lost`);
    expect(long).toBe(`campaigns-lost-search-${'a'.repeat(40)}-from-2026-11-01.csv`);
    for (const name of [long, await disposition(`q=${search}`)]) expect(name).toMatch(/^[a-z0-9-]+\.csv$/);
  });

  it('streams 20,000 rows in order', async () => {
    const w = await world();
    const [customer] = await api.current.db('customers').where({ workspace_id: w.workspaceId }).select('id');
    const [subscription] = await api.current.db('subscriptions').where({ workspace_id: w.workspaceId }).select('id');
    await api.current.db.raw(
      `INSERT INTO recovery_campaigns (workspace_id, customer_id, subscription_id, psp_invoice_id, amount_cents, currency,
                                       status, decline_code, decline_category, first_failed_at)
       SELECT ?, ?, ?, 'in_bulk_' || g, g, 'usd', 'in_flight', 'generic_decline', 'unknown',
              timestamptz '2025-01-01T00:00:00Z' + g * interval '1 second'
         FROM generate_series(1, 20000) AS g`,
      [w.workspaceId, customer.id, subscription.id],
    );
    const reply = await call('GET', '/campaigns/export.csv?status=in_flight&decline_category=unknown', {
      cookie: w.member,
    });
    const lines = reply.text.trimEnd().split('\n');
    expect(lines).toHaveLength(20_001);
    expect(lines[1]).toContain(',in_bulk_20000,');
    expect(lines[20_000]).toContain(',in_bulk_1,');
  });
});

describe('GET /dashboard/api/cancel_sessions/export.csv', () => {
  it('streams the filtered sessions with their feedback, formula cells neutralised', async () => {
    const w = await world();
    const [customer] = await api.current
      .db('customers')
      .where({ workspace_id: w.workspaceId })
      .select('id', 'email', 'name');
    await api.current.db('cancel_sessions').insert({
      workspace_id: w.workspaceId,
      customer_id: customer.id,
      outcome: 'canceled',
      reason_code: 'too_expensive',
      feedback: '@SUM(1+1) and, "quoted"',
      monthly_mrr_cents: 1234,
      currency: 'usd',
      created_at: new Date('2026-03-01T00:00:00Z'),
      ended_at: new Date('2026-03-01T00:05:00Z'),
    });
    const reply = await call('GET', '/cancel_sessions/export.csv?outcome=canceled&reason_code=too_expensive', {
      cookie: w.member,
    });
    expect(reply.status).toBe(200);
    const lines = reply.text.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'id,customer_id,customer_email,customer_name,subscription_id,outcome,reason_code,feedback,monthly_mrr_cents,monthly_mrr,currency,created_at,ended_at',
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(
      `,${customer.email},${customer.name ?? ''},,canceled,too_expensive,"'@SUM(1+1) and, ""quoted""",1234,12.34,usd,2026-03-01T00:00:00.000Z,2026-03-01T00:05:00.000Z`,
    );
    expect((await call('GET', '/cancel_sessions/export.csv?reason=x', { cookie: w.member })).status).toBe(400);
  });

  it('names the file after its filters and range as the campaigns export does, and holds exactly them', async () => {
    const w = await world();
    const [customer] = await api.current.db('customers').where({ workspace_id: w.workspaceId }).select('id', 'email');
    const session = async (created_at: string, outcome = 'canceled') => {
      const [row] = await api.current
        .db('cancel_sessions')
        .insert({
          workspace_id: w.workspaceId,
          customer_id: customer.id,
          outcome,
          reason_code: 'unused',
          monthly_mrr_cents: 100,
          currency: 'usd',
          created_at: new Date(created_at),
          ended_at: new Date(created_at),
        })
        .returning<Array<{ id: string }>>('id');
      return row!.id;
    };
    // Nov 1 as it starts in Auckland (NZDT, UTC+13), its last minute, and Nov 2's first.
    await session('2026-10-31T10:59:59.999Z');
    const first = await session('2026-10-31T11:00:00.000Z');
    const last = await session('2026-11-01T10:59:00.000Z', 'saved_pause');
    await session('2026-11-01T11:00:00.000Z');
    const exported = async (search: string) => {
      const reply = await call('GET', `/cancel_sessions/export.csv?${search}`, { cookie: w.member });
      expect([search, reply.status]).toEqual([search, 200]);
      const filename = reply.headers.get('content-disposition')!.replace(/^attachment; filename="(.*)"$/, '$1');
      const rows = reply.text
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]);
      return { filename, rows };
    };
    const auckland = 'from=2026-10-31T11%3A00%3A00.000Z&to=2026-11-01T11%3A00%3A00.000Z';
    await expect(exported(`${auckland}&tz=Pacific%2FAuckland`)).resolves.toEqual({
      filename: 'cancel-sessions-2026-11-01-to-2026-11-02.csv',
      rows: [last, first],
    });
    await expect(exported(`${auckland}&outcome=saved_pause&reason_code=unused`)).resolves.toEqual({
      filename: 'cancel-sessions-saved-pause-unused-2026-10-31T110000Z-to-2026-11-01T110000Z.csv',
      rows: [last],
    });
    const search = encodeURIComponent(customer.email.toUpperCase());
    const bySearch = await exported(`q=${search}&from=2026-11-01&to=2026-11-01T11%3A00%3A00Z&tz=UTC`);
    const safeEmail = customer.email
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 40)
      .replace(/-$/, '');
    expect(bySearch).toEqual({
      filename: `cancel-sessions-search-${safeEmail}-2026-11-01-to-2026-11-01T110000Z.csv`,
      rows: [last],
    });
    const zone = 'Pacific/Kiritimati';
    await expect(exported(`outcome=canceled&tz=${encodeURIComponent(zone)}`)).resolves.toMatchObject({
      filename: `cancel-sessions-canceled-${today(zone)}.csv`,
    });
    const head = await call('HEAD', `/cancel_sessions/export.csv?${auckland}&tz=Pacific%2FAuckland`, {
      cookie: w.member,
    });
    expect(head.headers.get('content-disposition')).toBe(
      'attachment; filename="cancel-sessions-2026-11-01-to-2026-11-02.csv"',
    );
    for (const bad of ['tz=%2B13%3A00', 'from=nope', 'q=ab']) {
      const refused = await call('GET', `/cancel_sessions/export.csv?${bad}`, { cookie: w.member });
      expect([bad, refused.status, refused.body?.error?.type]).toEqual([bad, 400, 'invalid_param']);
    }
  });
});

describe('formula cells in any export', () => {
  it('neutralises a formula behind spaces or in full-width signs, which spreadsheets that trim or fold still evaluate', async () => {
    const w = await world();
    const [customer] = await api.current.db('customers').where({ workspace_id: w.workspaceId }).select('id');
    const risky = [' =1+1', '\u3000+1', '\n-1', '\uFF1D1+1', '\uFF20SUM(A1)', '\uFF0B1', '\uFF0D1'];
    const harmless = ['fine - really', 'a=b'];
    await api.current.db('cancel_sessions').insert(
      [...risky, ...harmless].map((feedback) => ({
        workspace_id: w.workspaceId,
        customer_id: customer.id,
        outcome: 'canceled',
        reason_code: 'missing_features',
        feedback,
        monthly_mrr_cents: 100,
        currency: 'usd',
      })),
    );
    const reply = await call('GET', '/cancel_sessions/export.csv?reason_code=missing_features', { cookie: w.member });
    expect(reply.status).toBe(200);
    for (const feedback of risky) expect(reply.text).toContain(`'${feedback}`);
    for (const feedback of harmless) {
      expect(reply.text).toContain(`,${feedback},`);
      expect(reply.text).not.toContain(`'${feedback}`);
    }
  });
});

describe('GET /dashboard/api/customers/export.csv', () => {
  it('streams the filtered customers newest first, tags in one cell, formula cells neutralised, another workspace never included', async () => {
    const w = await world();
    const other = await world();
    const insert = async (workspaceId: string, row: Record<string, unknown>) => {
      const [inserted] = await api.current
        .db('customers')
        .insert({ workspace_id: workspaceId, ...row })
        .returning<Array<{ id: string }>>('id');
      return inserted!.id;
    };
    const [fixture] = await api.current.db('customers').where({ workspace_id: w.workspaceId }).pluck('id');
    const older = await insert(w.workspaceId, {
      psp_customer_id: 'cus_older',
      email: 'older@example.test',
      name: 'Olga Older',
      tags: ['vip', 'annual plan'],
      created_at: new Date('2026-01-01T00:00:00Z'),
    });
    const newer = await insert(w.workspaceId, {
      psp_customer_id: '=cmd|calc',
      email: 'Newer@Example.test',
      name: '@SUM(1+1), "quoted"',
      tags: ['=danger', 'vip'],
      created_at: new Date('2026-03-01T00:00:00.123Z'),
    });
    // Another workspace's customer with the same email and tag.
    const theirs = await insert(other.workspaceId, {
      psp_customer_id: 'cus_theirs',
      email: 'newer@example.test',
      tags: ['vip'],
    });

    const reply = await call('GET', '/customers/export.csv?tag=VIP', { cookie: w.member });
    expect(reply.status).toBe(200);
    // The bytes open with a UTF-8 byte order mark, once, for Excel; the text (decoded as UTF-8, as
    // every reader of UTF-8 does) starts at the header.
    const raw = await fetch(`${api.current.url}/dashboard/api/customers/export.csv?tag=VIP`, {
      headers: { cookie: w.member },
    });
    const bytes = Buffer.from(await raw.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0xef, 0xbb, 0xbf, 'i'.charCodeAt(0)]);
    expect(bytes.indexOf(Buffer.from([0xef, 0xbb, 0xbf]), 1)).toBe(-1);
    expect(reply.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    // Named after its filters as the campaigns export is (docs/dashboard-api.md, "File names").
    expect(reply.headers.get('content-disposition')).toBe(`attachment; filename="customers-tag-vip-${today()}.csv"`);
    expect(CUSTOMER_EXPORT_TAG_SEPARATOR).toBe('; ');
    expect(CUSTOMER_EXPORT_COLUMNS.join(',')).toBe('id,psp_customer_id,email,name,tags,created_at');
    expect(reply.text.trimEnd().split('\n')).toEqual([
      'id,psp_customer_id,email,name,tags,created_at',
      `${newer},'=cmd|calc,Newer@Example.test,"'@SUM(1+1), ""quoted""",'=danger; vip,2026-03-01T00:00:00.123Z`,
      `${older},cus_older,older@example.test,Olga Older,vip; annual plan,2026-01-01T00:00:00.000Z`,
    ]);

    // The whole list, newest first; nothing of another workspace, whatever the filter.
    const idsOf = (text: string) =>
      text
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]);
    const all = await call('GET', '/customers/export.csv', { cookie: w.member });
    expect(idsOf(all.text)).toEqual([fixture, newer, older]);
    expect(all.text).not.toContain(theirs);
    const byEmail = await call('GET', '/customers/export.csv?email=NEWER%40example.test', { cookie: w.member });
    expect(idsOf(byEmail.text)).toEqual([newer]);
    const theirsByEmail = await call('GET', '/customers/export.csv?email=newer%40example.test', {
      cookie: other.member,
    });
    expect(idsOf(theirsByEmail.text)).toEqual([theirs]);
    // Its file names its filters: an exact email, a tag, a search, made safe, then the day exported in `tz`.
    const zone = 'Pacific/Kiritimati';
    expect(byEmail.headers.get('content-disposition')).toBe(
      `attachment; filename="customers-email-newer-example-test-${today()}.csv"`,
    );
    const named = await call(
      'GET',
      `/customers/export.csv?q=${encodeURIComponent("Zoë O'Brien")}&tag=Annual%20Plan&tz=${encodeURIComponent(zone)}`,
      { cookie: w.member },
    );
    expect(named.headers.get('content-disposition')).toBe(
      `attachment; filename="customers-tag-annual-plan-search-zoe-o-brien-${today(zone)}.csv"`,
    );
    const unnamed = await call('HEAD', '/customers/export.csv?tz=UTC', { cookie: w.member });
    expect(unnamed.headers.get('content-disposition')).toBe(`attachment; filename="customers-${today()}.csv"`);
    const nobody = await call('GET', '/customers/export.csv?tag=nobody', { cookie: w.member });
    expect([nobody.status, nobody.text]).toEqual([200, 'id,psp_customer_id,email,name,tags,created_at\n']);

    // The list's filter parser: a bad or unknown parameter is the JSON 400, and there is no page size.
    for (const query of ['tag=', 'email=a&email=b', `tag=${'x'.repeat(101)}`, 'limit=2', 'cursor=x', 'status=lost']) {
      const bad = await call('GET', `/customers/export.csv?${query}`, { cookie: w.member });
      expect([query, bad.status, bad.body?.error?.type]).toEqual([query, 400, 'invalid_param']);
    }
  });
});
