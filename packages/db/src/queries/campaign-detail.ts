import { notFound, type Customer, type RecoveryCampaign, type Subscription } from '@retention/core';
import type { Queryable } from '../connection.js';
import type { CampaignDetailView, NextPaymentAttempt, TimelineEntry } from '../dashboard-views.js';
import { campaignJsonSql, customerJsonSql, isoMillisSql, subscriptionJsonSql } from '../resource-json.js';
import { eventTimelineSql } from './event-timeline.js';

/**
 * A campaign's detail page: the campaign, its customer and subscription, and a timeline of
 * what happened to it, oldest first: each event about it (opened, recovered, lost, …) with
 * every webhook delivery of that event and its outcome, and each manual action of the
 * security log (who marked it recovered or lost, from where). Reads only this campaign's rows
 * (its events as event-timeline.ts reads them, for a cancel session's page too).
 * Postgres builds every part as JSON, in the API's shapes (resource-json.ts).
 */

type TimelineEventRow = Extract<TimelineEntry, { kind: 'event' }>;
type TimelineAttemptRow = Omit<Extract<TimelineEntry, { kind: 'payment_attempt' }>, 'kind'>;

interface TimelineActionRow {
  action: string;
  actor_type: string;
  actor_user_id: string | null;
  actor_label: string | null;
  actor_email: string | null;
  at: string;
}

/** The manual actions of the security log about the campaign, oldest first. */
const ACTIONS_SQL = `coalesce((
    SELECT json_agg(json_build_object('action', x.action, 'actor_type', x.actor_type, 'actor_user_id', x.actor_user_id,
             'actor_label', x.actor_label, 'actor_email', x.actor_email, 'at', ${isoMillisSql('x.created_at')}) ORDER BY x.created_at)
      FROM security_events x
     WHERE x.workspace_id = k.workspace_id AND x.target_type = 'campaign' AND x.target_id = k.id::text
  ), '[]'::json)`;

/** The campaign's failed payment attempts (migration 0041), by number. */
const ATTEMPTS_SQL = `coalesce((
    SELECT json_agg(json_build_object('attempt_number', a.attempt_number, 'at', ${isoMillisSql('a.failed_at')},
             'decline_code', a.decline_code, 'decline_category', a.decline_category) ORDER BY a.attempt_number)
      FROM campaign_payment_attempts a
     WHERE a.campaign_id = k.id AND a.workspace_id = k.workspace_id
  ), '[]'::json)`;

/** The processor's next attempt, while the campaign is in flight and the processor has said. */
const NEXT_ATTEMPT_SQL = `CASE WHEN k.status = 'in_flight' AND k.next_payment_attempt_as_of IS NOT NULL
    THEN json_build_object('at', ${isoMillisSql('k.next_payment_attempt_at')},
                           'reported_at', ${isoMillisSql('k.next_payment_attempt_as_of')}) END`;

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
          attempts: TimelineAttemptRow[];
          next_payment_attempt: NextPaymentAttempt | null;
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
      db.raw(`${eventTimelineSql('k.workspace_id', 'campaign_id', 'k.id')} AS events`),
      db.raw(`${ACTIONS_SQL} AS actions`),
      db.raw(`${ATTEMPTS_SQL} AS attempts`),
      db.raw(`${NEXT_ATTEMPT_SQL} AS next_payment_attempt`),
    );
  if (!row) throw notFound(`No campaign with id ${campaignId}`);
  const timeline: TimelineEntry[] = [
    ...row.attempts.map((attempt) => ({ kind: 'payment_attempt' as const, ...attempt })),
    ...row.actions.map((action) => ({
      kind: 'action' as const,
      at: action.at,
      action: action.action,
      actor: {
        type: action.actor_type,
        user_id: action.actor_user_id,
        label: action.actor_label,
        email: action.actor_email,
      },
    })),
    ...row.events,
  ];
  // Stable: an action and the event recorded in its transaction share a time; the action, the
  // cause ("Marked lost by …"), comes before its effect (the `recovery.lost` it recorded). So
  // does a failed payment attempt before the `recovery.opened` of the same time it caused.
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return {
    ...row.campaign,
    customer: row.customer,
    subscription: row.subscription,
    closed_by_user_id: row.closed_by_user_id,
    timeline,
    next_payment_attempt: row.next_payment_attempt,
  };
}
