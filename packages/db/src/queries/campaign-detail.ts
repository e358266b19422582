import { notFound, type Customer, type RecoveryCampaign, type Subscription } from '@retention/core';
import type { Queryable } from '../connection.js';
import type { CampaignDetailView, EventNotSentReason, TimelineDelivery, TimelineEntry } from '../dashboard-views.js';
import { campaignJsonSql, customerJsonSql, isoMillisSql, subscriptionJsonSql } from '../resource-json.js';

/**
 * A campaign's detail page: the campaign, its customer and subscription, and a timeline of
 * what happened to it, oldest first: each event about it (opened, recovered, lost, …) with
 * every webhook delivery of that event and its outcome, and each manual action of the
 * security log (who marked it recovered or lost, from where). Reads only this campaign's rows
 * (events through `events_campaign_idx`, deliveries through their unique (event_id, …) key).
 * Postgres builds every part as JSON, in the API's shapes (resource-json.ts).
 */

interface TimelineEventRow {
  event_id: string;
  type: string;
  source: string | null;
  at: string;
  queued: boolean;
  not_sent_reason: EventNotSentReason | null;
  deliveries: TimelineDelivery[];
}

interface TimelineActionRow {
  action: string;
  actor_user_id: string | null;
  actor_label: string | null;
  at: string;
}

/**
 * Each event about the campaign, oldest first, with its deliveries (and each one's last HTTP
 * status), whether it is still in the outbox (`queued`: the dispatcher has not taken it yet), and
 * why it was not sent when it was not: recorded by the dispatcher (`events_not_sent`), or, still
 * queued, what the dispatcher will find (the workspace's processor not `connected` now).
 */
const EVENTS_SQL = `coalesce((
    SELECT json_agg(json_build_object(
             'event_id', e.id, 'type', e.type, 'source', e.data ->> 'source', 'at', ${isoMillisSql('e.created_at')},
             'queued', q.queued,
             'not_sent_reason', coalesce(
               (SELECT n.reason FROM events_not_sent n WHERE n.event_id = e.id),
               CASE WHEN q.queued AND (SELECT ws.processor_status FROM workspaces ws WHERE ws.id = k.workspace_id) <> 'connected'
                    THEN 'processor_not_connected' END),
             'deliveries', coalesce((
               SELECT json_agg(json_build_object(
                        'id', d.id, 'endpoint_id', d.endpoint_id, 'endpoint_name', w.name, 'status', d.status,
                        'attempt_count', d.attempt_count,
                        'last_http_status', (SELECT a.http_status FROM webhook_attempts a
                                              WHERE a.delivery_id = d.id ORDER BY a.attempt DESC LIMIT 1),
                        'completed_at', ${isoMillisSql('d.completed_at')}) ORDER BY d.created_at)
                 FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                WHERE d.event_id = e.id), '[]'::json)) ORDER BY e.seq)
      FROM events e
     CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM event_outbox o WHERE o.seq = e.seq) AS queued) q
     WHERE e.workspace_id = k.workspace_id AND e.data ->> 'campaign_id' = k.id::text
  ), '[]'::json)`;

/** The manual actions of the security log about the campaign, oldest first. */
const ACTIONS_SQL = `coalesce((
    SELECT json_agg(json_build_object('action', x.action, 'actor_user_id', x.actor_user_id,
             'actor_label', x.actor_label, 'at', ${isoMillisSql('x.created_at')}) ORDER BY x.created_at)
      FROM security_events x
     WHERE x.workspace_id = k.workspace_id AND x.target_type = 'campaign' AND x.target_id = k.id::text
  ), '[]'::json)`;

/**
 * One statement (a page's render waits on one round trip, not six): the campaign, its
 * customer and subscription as the API shows them, and the timeline's parts, which are then
 * merged in time order.
 */
export async function campaignDetail(
  db: Queryable,
  workspaceId: string,
  campaignId: string,
): Promise<CampaignDetailView> {
  const row = await db('recovery_campaigns as k')
    .where({ 'k.workspace_id': workspaceId, 'k.id': campaignId })
    .first<
      | {
          campaign: RecoveryCampaign;
          closed_by_user_id: string | null;
          customer: Customer | null;
          subscription: Subscription | null;
          events: TimelineEventRow[];
          actions: TimelineActionRow[];
        }
      | undefined
    >(
      db.raw(`${campaignJsonSql('k')} AS campaign`),
      'k.closed_by_user_id',
      db.raw(
        `(SELECT ${customerJsonSql('c')} FROM customers c WHERE c.workspace_id = k.workspace_id AND c.id = k.customer_id) AS customer`,
      ),
      db.raw(
        `(SELECT ${subscriptionJsonSql('s')} FROM subscriptions s WHERE s.workspace_id = k.workspace_id AND s.id = k.subscription_id) AS subscription`,
      ),
      db.raw(`${EVENTS_SQL} AS events`),
      db.raw(`${ACTIONS_SQL} AS actions`),
    );
  if (!row) throw notFound(`No campaign with id ${campaignId}`);
  const timeline: TimelineEntry[] = [
    ...row.events.map(({ event_id, type, source, at, queued, not_sent_reason, deliveries }) => ({
      kind: 'event' as const,
      at,
      event_id,
      type,
      source,
      queued,
      not_sent_reason,
      deliveries,
    })),
    ...row.actions.map((action) => ({
      kind: 'action' as const,
      at: action.at,
      action: action.action,
      actor: { user_id: action.actor_user_id, label: action.actor_label },
    })),
  ];
  // Stable: an event and the action recorded in its transaction share a time; the event comes first.
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return {
    ...row.campaign,
    customer: row.customer,
    subscription: row.subscription,
    closed_by_user_id: row.closed_by_user_id,
    timeline,
  };
}
