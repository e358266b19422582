import { beforeAll, describe, expect, it } from '@jest/globals';
import { setFxRate } from '@retention/domain';
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

/** A workspace with an API token, a signed-in owner and member, and campaigns in four currencies (xyz has no rate). */
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
      .insert({ workspace_id: w.workspaceId, name: 'Receiver', url: 'https://e.invalid/', signing_secret: 'whsec_x' })
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
    ).toEqual(['recovery.lost', 'campaign.marked_lost']);
    expect(detail.body.timeline[0]).toMatchObject({
      source: 'dashboard',
      deliveries: [{ endpoint_name: 'Receiver', status: 'succeeded', attempt_count: 1 }],
    });
    expect(detail.body.timeline[1].actor.user_id).toBeTruthy();
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
