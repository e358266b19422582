import { isoMillisSql } from '../resource-json.js';

/**
 * The events about one campaign or one cancel session, oldest first, as the dashboard's timeline
 * shows them (docs/dashboard-api.md, "Campaigns"): a JSON array (`[]` when none) of
 * `{ kind: "event", at, event_id, type, source, queued, not_sent_reason, deliveries }`, each
 * delivery with the attempts actually sent (`attempt_count` less its skipped lines, which take an
 * attempt number each: docs/decisions.md), its last log line's HTTP status and outcome, and error
 * when that attempt failed or was interrupted (a pending delivery retrying after a refused
 * connection is not merely "pending"), `sent_to_url`: its last log line's URL when that is not
 * the endpoint's URL now (edited since; else null), a skipped one's reason (its skipped log line: the endpoint
 * was off when the event was recorded, was turned off before its retry, …), when it was completed
 * and, pending, when its next attempt is due. `queued`: still in the outbox (the dispatcher has not taken it yet). `not_sent_reason`:
 * recorded by the dispatcher (`events_not_sent`), or, still queued, what the dispatcher will find
 * (the workspace's processor not `connected` now).
 *
 * One expression for both pages, so that what a campaign's page says of its events a cancel
 * session's says of its own. `workspace` and `id` are SQL expressions of the outer row (its
 * workspace_id and id); `key` is the field of the events' data naming it: `campaign_id`, read
 * through events_campaign_idx, or `session_id`, through events_session_idx (migrations 0012,
 * 0025); deliveries through their unique (event_id, …) key.
 */
export function eventTimelineSql(workspace: string, key: 'campaign_id' | 'session_id', id: string): string {
  // row_to_json over one-row subqueries, as resource-json.ts builds objects: compact JSON
  // (json_build_object writes `"key" : value`), since a cancel session's detail is sent as built.
  return `coalesce((
    SELECT json_agg((SELECT row_to_json(entry) FROM (SELECT
             'event'::text AS kind, ${isoMillisSql('e.created_at')} AS at, e.id AS event_id, e.type,
             e.data ->> 'source' AS source, q.queued,
             coalesce(
               (SELECT n.reason FROM events_not_sent n WHERE n.event_id = e.id),
               CASE WHEN q.queued AND (SELECT ws.processor_status FROM workspaces ws WHERE ws.id = e.workspace_id) <> 'connected'
                    THEN 'processor_not_connected' END) AS not_sent_reason,
             coalesce((
               SELECT json_agg((SELECT row_to_json(delivery) FROM (SELECT
                        d.id, d.endpoint_id, w.name AS endpoint_name, d.status, d.attempt_count,
                        d.attempt_count - lines.skipped AS attempts_sent,
                        lines.last_http_status, lines.last_outcome,
                        CASE WHEN lines.last_outcome IN ('failed', 'interrupted') THEN lines.last_error END AS last_error,
                        CASE WHEN d.status = 'skipped' THEN regexp_replace(lines.last_error, '^skipped: ', '') END
                          AS skipped_reason,
                        ${isoMillisSql('d.completed_at')} AS completed_at,
                        ${isoMillisSql('d.next_attempt_at')} AS next_attempt_at,
                        NULLIF(lines.last_url, w.url) AS sent_to_url) delivery) ORDER BY d.created_at)
                 FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                 -- The delivery's log lines read once: its skipped lines, and its last line's status, outcome and error.
                CROSS JOIN LATERAL (
                  SELECT count(*) FILTER (WHERE a.outcome = 'skipped')::int AS skipped,
                         (array_agg(a.http_status ORDER BY a.attempt DESC))[1] AS last_http_status,
                         (array_agg(a.outcome ORDER BY a.attempt DESC))[1] AS last_outcome,
                         (array_agg(a.error ORDER BY a.attempt DESC))[1] AS last_error,
                         (array_agg(a.url ORDER BY a.attempt DESC))[1] AS last_url
                    FROM webhook_attempts a WHERE a.delivery_id = d.id) lines
                WHERE d.event_id = e.id), '[]'::json) AS deliveries) entry) ORDER BY e.seq)
      FROM events e
     CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM event_outbox o WHERE o.seq = e.seq) AS queued) q
     WHERE e.workspace_id = ${workspace} AND e.data ->> '${key}' = ${id}::text
  ), '[]'::json)`;
}
