import type { Db } from '@retention/db';

/**
 * A digest of a seeded workspace's data that ignores what is generated afresh on every run
 * (UUIDs, the API token, signing secrets): rows are identified by their processor ids (events
 * by their campaign's invoice or their cancel session's customer), and timestamps are
 * taken relative to the seed's `as_of`, so two runs of one seed at different times compare equal.
 * A later demo's admin in the same database is `ops+2@…` (seed.ts, freeAdminAddress): the tag is
 * left out, so two demos of one seed in one database compare equal too.
 */
export async function demoDigest(db: Db, workspaceId: string, asOf: string): Promise<Record<string, string>> {
  const untagged = (column: string) => `regexp_replace(${column}, '[+][0-9]+@', '@')`;
  const relative = (column: string) =>
    `CAST(extract(epoch FROM ${column} - CAST(:asOf AS timestamptz)) * 1000 AS bigint)`;
  // What an event is about, in words that survive a reseed: a campaign's invoice, or a cancel
  // session's customer and start.
  const subject = `coalesce(k.psp_invoice_id, c.psp_customer_id || ' ' || ${relative('x.created_at')})`;
  const subjectJoins = `LEFT JOIN recovery_campaigns k ON k.id::text = e.data ->> 'campaign_id'
    LEFT JOIN cancel_sessions x ON x.id::text = e.data ->> 'session_id' LEFT JOIN customers c ON c.id = x.customer_id`;
  const queries: Record<string, string> = {
    workspace: `SELECT name, processor_status, display_currency FROM workspaces WHERE id = :workspaceId`,
    users: `SELECT ${untagged('email')} AS email, role FROM users WHERE workspace_id = :workspaceId ORDER BY email`,
    tokens: `SELECT name, rate_limit_per_minute, revoked_at FROM api_tokens WHERE workspace_id = :workspaceId`,
    customers: `SELECT psp_customer_id, email, name, tags, ${relative('created_at')} AS created
                  FROM customers WHERE workspace_id = :workspaceId ORDER BY psp_customer_id`,
    subscriptions: `SELECT c.psp_customer_id, s.psp_subscription_id, s.status, s.plan_name, s.amount_cents,
                           s.currency, s.interval, ${relative('s.trial_end')} AS trial_end,
                           ${relative('s.current_period_end')} AS period_end, ${relative('s.canceled_at')} AS canceled,
                           ${relative('s.created_at')} AS created
                      FROM subscriptions s JOIN customers c ON c.id = s.customer_id
                     WHERE s.workspace_id = :workspaceId ORDER BY s.psp_subscription_id`,
    campaigns: `SELECT k.psp_invoice_id, c.psp_customer_id, s.psp_subscription_id, k.amount_cents, k.currency,
                       k.status, k.decline_code, k.decline_category, k.recovered_via,
                       ${relative('k.first_failed_at')} AS failed, ${relative('k.recovered_at')} AS recovered,
                       ${relative('k.closed_at')} AS closed
                  FROM recovery_campaigns k JOIN customers c ON c.id = k.customer_id
                  JOIN subscriptions s ON s.id = k.subscription_id
                 WHERE k.workspace_id = :workspaceId ORDER BY k.psp_invoice_id`,
    cancel_sessions: `SELECT c.psp_customer_id, s.psp_subscription_id, x.outcome, x.reason_code, x.feedback,
                             x.monthly_mrr_cents, x.currency, ${relative('x.created_at')} AS created,
                             ${relative('x.ended_at')} AS ended
                        FROM cancel_sessions x JOIN customers c ON c.id = x.customer_id
                        LEFT JOIN subscriptions s ON s.id = x.subscription_id
                       WHERE x.workspace_id = :workspaceId ORDER BY c.psp_customer_id, x.created_at`,
    // The history: events (named by their campaign's invoice or their cancel session's customer and
    // start), deliveries and attempts, manual closes.
    events: `SELECT e.type, ${subject} AS subject, e.data - 'campaign_id' - 'session_id' AS data,
                    ${relative('e.created_at')} AS created,
                    EXISTS (SELECT 1 FROM event_outbox o WHERE o.event_id = e.id) AS undispatched
               FROM events e ${subjectJoins}
              WHERE e.workspace_id = :workspaceId`,
    webhook_endpoints: `SELECT name, url, event_types, enabled, ${relative('created_at')} AS created,
                               ${relative('last_success_at')} AS last_success, ${relative('last_failure_at')} AS last_failure
                          FROM webhook_endpoints WHERE workspace_id = :workspaceId`,
    webhook_attempts: `SELECT w.name, d.event_type, ${subject} AS subject, d.status, d.attempt_count,
                              ${relative('d.created_at')} AS created, ${relative('d.completed_at')} AS completed,
                              a.attempt, a.outcome, a.http_status, a.error, a.response_body, a.duration_ms,
                              ${relative('a.attempted_at')} AS attempted, ${relative('a.next_attempt_at')} AS next_attempt
                         FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                         JOIN events e ON e.id = d.event_id ${subjectJoins}
                         JOIN webhook_attempts a ON a.delivery_id = d.id
                        WHERE d.workspace_id = :workspaceId`,
    // Without the demo token's hint (token.created), drawn afresh at every seed.
    security_events: `SELECT x.action, ${untagged('u.email')} AS email, ${untagged('x.actor_label')} AS actor_label,
                             ${untagged('x.target_label')} AS target_label, x.ip_address, x.user_agent,
                             x.details - 'hint' AS details,
                             ${relative('x.created_at')} AS created
                        FROM security_events x LEFT JOIN users u ON u.id = x.actor_user_id
                       WHERE x.workspace_id = :workspaceId`,
  };
  const digest: Record<string, string> = {};
  for (const [name, query] of Object.entries(queries)) {
    const { rows } = await db.raw<{ rows: Array<{ count: number; hash: string | null }> }>(
      `SELECT count(*) AS count, md5(string_agg(CAST(row_to_json(r) AS text), '|' ORDER BY CAST(row_to_json(r) AS text)))
         AS hash FROM (${query}) r`,
      { workspaceId, asOf },
    );
    digest[name] = `${rows[0]!.count}:${rows[0]!.hash ?? ''}`;
  }
  return digest;
}
