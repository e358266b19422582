import { notFound, toIsoMillis } from '@retention/core';
import type { Queryable } from '../connection.js';
import {
  toCampaign,
  toCustomer,
  toSubscription,
  type CampaignRow,
  type CustomerRow,
  type SubscriptionRow,
} from '../resources.js';

/**
 * A campaign's detail page: the campaign, its customer and subscription, and a timeline of
 * what happened to it, oldest first: each event about it (opened, recovered, lost, …) with
 * every webhook delivery of that event and its outcome, and each manual action of the
 * security log (who marked it recovered or lost, from where). Reads only this campaign's rows
 * (events through `events_campaign_idx`, deliveries through their unique (event_id, …) key).
 */

export interface TimelineDelivery {
  id: string;
  endpoint_id: string;
  endpoint_name: string;
  status: string;
  attempt_count: number;
  last_http_status: number | null;
  completed_at: string | null;
}

export type TimelineEntry =
  | { kind: 'event'; at: string; event_id: string; type: string; source: string | null; deliveries: TimelineDelivery[] }
  | { kind: 'action'; at: string; action: string; actor: { user_id: string | null; label: string | null } };

export async function campaignDetail(db: Queryable, workspaceId: string, campaignId: string) {
  const campaign = await db('recovery_campaigns')
    .where({ workspace_id: workspaceId, id: campaignId })
    .first<(CampaignRow & { closed_by_user_id: string | null }) | undefined>();
  if (!campaign) throw notFound(`No campaign with id ${campaignId}`);
  const customer = await db('customers')
    .where({ workspace_id: workspaceId, id: campaign.customer_id })
    .first<CustomerRow>();
  const subscription = await db('subscriptions')
    .where({ workspace_id: workspaceId, id: campaign.subscription_id })
    .first<SubscriptionRow>();
  const events = await db('events')
    .where({ workspace_id: workspaceId })
    .whereRaw("data ->> 'campaign_id' = ?", [campaignId])
    .orderBy('seq')
    .select<Array<{ id: string; type: string; data: Record<string, unknown>; created_at: Date }>>(
      'id',
      'type',
      'data',
      'created_at',
    );
  const deliveries = events.length
    ? await db('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .whereIn(
          'd.event_id',
          events.map((event) => event.id),
        )
        .orderBy('d.created_at')
        .select<
          Array<{
            id: string;
            event_id: string;
            endpoint_id: string;
            endpoint_name: string;
            status: string;
            attempt_count: number;
            completed_at: Date | null;
            last_http_status: number | null;
          }>
        >(
          'd.id',
          'd.event_id',
          'd.endpoint_id',
          'e.name as endpoint_name',
          'd.status',
          'd.attempt_count',
          'd.completed_at',
          db.raw(
            '(SELECT a.http_status FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY a.attempt DESC LIMIT 1) AS last_http_status',
          ),
        )
    : [];
  const actions = await db('security_events')
    .where({ workspace_id: workspaceId, target_type: 'campaign', target_id: campaignId })
    .orderBy('created_at')
    .select<Array<{ action: string; actor_user_id: string | null; actor_label: string | null; created_at: Date }>>(
      'action',
      'actor_user_id',
      'actor_label',
      'created_at',
    );

  const timeline: TimelineEntry[] = [
    ...events.map((event) => ({
      kind: 'event' as const,
      at: toIsoMillis(event.created_at),
      event_id: event.id,
      type: event.type,
      source: typeof event.data.source === 'string' ? event.data.source : null,
      deliveries: deliveries
        .filter((delivery) => delivery.event_id === event.id)
        .map(({ event_id: _event, completed_at, ...delivery }) => ({
          ...delivery,
          completed_at: completed_at ? toIsoMillis(completed_at) : null,
        })),
    })),
    ...actions.map((action) => ({
      kind: 'action' as const,
      at: toIsoMillis(action.created_at),
      action: action.action,
      actor: { user_id: action.actor_user_id, label: action.actor_label },
    })),
  ];
  // Stable: an event and the action recorded in its transaction share a time; the event comes first.
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return {
    ...toCampaign(campaign),
    customer: customer ? toCustomer(customer) : null,
    subscription: subscription ? toSubscription(subscription) : null,
    closed_by_user_id: campaign.closed_by_user_id,
    timeline,
  };
}
