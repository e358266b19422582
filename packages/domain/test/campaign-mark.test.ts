import { beforeAll, describe, expect, it } from '@jest/globals';
import { markCampaignLost, markCampaignRecovered, openCampaign } from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';
import { actionGraph, eventsOf, expectRefusal, type ActionGraph } from './helpers.js';

const database = useTestDatabase();

let g: ActionGraph;
let invoice = 0;

beforeAll(async () => {
  g = await actionGraph(database.current.db);
});

async function open(failedAt?: Date) {
  invoice += 1;
  return openCampaign(database.current.db, {
    workspace_id: g.a.id,
    customer_id: g.a.ann,
    subscription_id: g.a.active,
    psp_invoice_id: `in_mark_${invoice}`,
    amount_cents: 4900,
    currency: 'usd',
    decline_code: 'insufficient_funds',
    ...(failedAt && { failed_at: failedAt }),
  });
}

const actor = (userId: string) => ({ type: 'user' as const, user_id: userId, ip: '203.0.113.9', user_agent: 'test' });

async function securityEvents(workspaceId: string, campaignId: string) {
  return database.current
    .db('security_events')
    .where({ workspace_id: workspaceId, target_id: campaignId })
    .select('action', 'actor_type', 'actor_user_id', 'actor_label', 'target_type', 'ip_address', 'details');
}

describe('markCampaignRecovered and markCampaignLost', () => {
  it('mark recovered as manual by the owner, with recovery.recovered and the security log in one go', async () => {
    const { db } = database.current;
    const campaign = await open();
    const recovered = await markCampaignRecovered(db, {
      id: campaign.id,
      workspace_id: g.a.id,
      actor: actor(g.a.owner),
    });
    expect(recovered).toMatchObject({ status: 'recovered', recovered_via: 'manual' });
    const events = (await eventsOf(db, g.a.id)).filter((event) => event.data.campaign_id === campaign.id);
    expect(events.map((event) => [event.type, event.data.recovered_via ?? null])).toEqual([
      ['recovery.opened', null],
      ['recovery.recovered', 'manual'],
    ]);
    expect(await securityEvents(g.a.id, campaign.id)).toEqual([
      {
        action: 'campaign.marked_recovered',
        actor_type: 'user',
        actor_user_id: g.a.owner,
        actor_label: 'owner@acme.test',
        target_type: 'campaign',
        ip_address: '203.0.113.9',
        details: { recovered_via: 'manual' },
      },
    ]);
    const row = await db('recovery_campaigns').where({ id: campaign.id }).first('closed_by_user_id');
    expect(row.closed_by_user_id).toBe(g.a.owner);
  });

  it('mark lost with source "dashboard" on recovery.lost and campaign.marked_lost in the security log', async () => {
    const { db } = database.current;
    const campaign = await open();
    await markCampaignLost(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.owner) });
    const lost = (await eventsOf(db, g.a.id)).find(
      (event) => event.data.campaign_id === campaign.id && event.type === 'recovery.lost',
    );
    expect(lost?.data.source).toBe('dashboard');
    expect((await securityEvents(g.a.id, campaign.id)).map((row) => row.action)).toEqual(['campaign.marked_lost']);
  });

  it('refuse a closed campaign with the conflict message, and change nothing', async () => {
    const { db } = database.current;
    const campaign = await open();
    await markCampaignLost(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.owner) });
    await expectRefusal(
      db,
      'conflict',
      () => markCampaignRecovered(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.owner) }),
      /is already lost; a closed campaign cannot change/,
    );
  });

  it('refuse a member (403), and another workspace campaign or user (404), changing nothing', async () => {
    const { db } = database.current;
    const campaign = await open();
    await expectRefusal(db, 'forbidden', () =>
      markCampaignLost(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.member) }),
    );
    await expectRefusal(db, 'not_found', () =>
      markCampaignLost(db, { id: campaign.id, workspace_id: g.b.id, actor: actor(g.b.owner) }),
    );
    await expectRefusal(db, 'not_found', () =>
      markCampaignRecovered(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.b.owner) }),
    );
  });

  it('replayed (the demo seed): the close and its security log record at the time given', async () => {
    const { db } = database.current;
    const campaign = await open(new Date(Date.now() - 3_600_000));
    const at = new Date(Date.now() - 60_000);
    await expectRefusal(
      db,
      'invalid_param',
      () =>
        markCampaignRecovered(db, {
          id: campaign.id,
          workspace_id: g.a.id,
          actor: actor(g.a.owner),
          at: new Date(Date.now() - 7_200_000),
        }),
      /at: must not be before the campaign first failed/,
    );
    await markCampaignRecovered(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.owner), at });
    const row = await db('recovery_campaigns').where({ id: campaign.id }).first();
    expect([row.closed_at, row.recovered_at]).toEqual([at, at]);
    const logged = await db('security_events').where({ target_id: campaign.id }).select('action', 'created_at');
    expect(logged).toEqual([{ action: 'campaign.marked_recovered', created_at: at }]);
    const [event] = (await eventsOf(db, g.a.id)).filter(
      (one) => one.type === 'recovery.recovered' && (one.data as { campaign_id: string }).campaign_id === campaign.id,
    );
    expect(event!.created_at).toEqual(at);
  });

  it('let exactly one of two simultaneous marks win', async () => {
    const { db } = database.current;
    const campaign = await open();
    const outcomes = await Promise.allSettled([
      markCampaignLost(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.owner) }),
      markCampaignRecovered(db, { id: campaign.id, workspace_id: g.a.id, actor: actor(g.a.owner) }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(await securityEvents(g.a.id, campaign.id)).toHaveLength(1);
  });
});
