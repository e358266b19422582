import { api } from '../api/client.js';
import type { CancelSessionDetail as Detail } from '../api/types.js';
import { BreakableEmail } from '../components/BreakableUrl.js';
import { Facts } from '../components/Facts.js';
import { Badge } from '../components/ListPage.js';
import { LoadError, Loading, PageHeader } from '../components/states.js';
import { Time } from '../components/Time.js';
import { Timeline, useRefreshWhileSending } from '../components/Timeline.js';
import { formatMoney } from '../format.js';
import { cancelOutcomeLabel, cancelReasonLabel, subscriptionStatusLabel } from '../labels.js';
import { useLoad } from '../hooks.js';
import { Link, ListCrumb } from '../router.js';

/**
 * One cancel session: its outcome, reason and the customer's own words, and the timeline of its
 * event (`cancel.saved`, `cancel.lost`) and its deliveries, as a campaign's page has.
 */
export default function CancelSessionDetail({ id }: { id: string }) {
  const detail = useLoad(
    (signal) => api<Detail>('GET', `/cancel_sessions/${encodeURIComponent(id)}`, { signal }),
    `session:${id}`,
  );
  const session = detail.data;
  useRefreshWhileSending(session?.timeline, detail.reload);
  return (
    <>
      <p className="breadcrumb">
        <ListCrumb to="/cancel-sessions">Cancel sessions</ListCrumb>
      </p>
      {/* Named by its customer, as a campaign's page by its invoice and a customer's by their
          email: every session's page was "Cancel session", in its heading and its tab alike. */}
      <PageHeader
        title={
          session ? (
            <>
              Cancel session of <BreakableEmail email={session.customer.email} />
            </>
          ) : (
            'Cancel session'
          )
        }
      />
      {detail.loading && !session && <Loading />}
      <LoadError
        loaded={detail}
        what="cancel session"
        back={{ to: '/cancel-sessions', label: 'All cancel sessions' }}
      />
      {session && (
        <div className="detail-grid">
          <section className="card" aria-labelledby="session-facts">
            <h2 id="session-facts">Session</h2>
            <Facts
              facts={[
                ['Outcome', <Badge value={session.outcome} label={cancelOutcomeLabel(session.outcome)} />],
                ['Reason', cancelReasonLabel(session.reason_code)],
                ['MRR', formatMoney(session.monthly_mrr_cents, session.currency)],
                ['Started', <Time value={session.created_at} sayUtc />],
                ['Ended', <Time value={session.ended_at} sayUtc />],
              ]}
            />
            <h2>Feedback</h2>
            {session.feedback ? (
              <blockquote className="feedback">{session.feedback}</blockquote>
            ) : (
              <p className="muted">None given.</p>
            )}
          </section>
          <section className="card" aria-labelledby="session-customer">
            <h2 id="session-customer">Customer</h2>
            <Facts
              facts={[
                [
                  'Email',
                  <Link to={`/customers/${session.customer.id}`}>
                    <BreakableEmail email={session.customer.email} />
                  </Link>,
                ],
                ['Name', session.customer.name ?? '—'],
              ]}
            />
            <h2>Subscription</h2>
            {session.subscription ? (
              <Facts
                facts={[
                  ['Plan', session.subscription.plan_name],
                  [
                    'Price',
                    `${formatMoney(session.subscription.amount_cents, session.subscription.currency)} / ${session.subscription.interval}`,
                  ],
                  [
                    'Status',
                    <Badge
                      value={session.subscription.status}
                      label={subscriptionStatusLabel(session.subscription.status)}
                    />,
                  ],
                ]}
              />
            ) : (
              <p className="muted">No subscription record.</p>
            )}
          </section>
          <section className="card wide" aria-labelledby="session-timeline">
            <h2 id="session-timeline">Timeline</h2>
            <Timeline
              entries={session.timeline}
              empty={
                session.outcome === 'abandoned'
                  ? // cancel-sessions.ts: the customer left the flow; no event is recorded for it, by design.
                    // Every session has its reason (reason_code is required of each, abandoned or not:
                    // decisions.md, the CLI's --reason-code), so this does not say "without an answer"
                    // beside the Reason it shows: what was left unanswered is the offer.
                    'The customer left the flow before accepting an offer or canceling (the reason shown is ' +
                    'the one recorded before they left): no event is recorded for an abandoned session, so none ' +
                    'is sent to your webhook endpoints.'
                  : // A saved or canceled session always records its event (events are never deleted), unless
                    // it was imported as past data (`fixtures load`, a demo seeded before its sessions had history).
                    'No event is on record for this session: it was imported with past data rather than recorded ' +
                    'when it ended, so nothing about it was sent to your webhook endpoints.'
              }
            />
          </section>
        </div>
      )}
    </>
  );
}
