import { useState } from 'react';
import { api, ApiError } from '../api/client.js';
import type { CampaignDetail as Detail, TimelineEntry, User } from '../api/types.js';
import { BreakableEmail } from '../components/BreakableUrl.js';
import { ActorName, useTeamMembers } from '../components/ActorName.js';
import { Timeline, useRefreshWhileSending } from '../components/Timeline.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { Facts, type Fact } from '../components/Facts.js';
import { DeclineReason } from '../components/Labels.js';
import { Badge } from '../components/ListPage.js';
import { HeadingId, LiveStatus, LoadError, Loading, PageHeader } from '../components/states.js';
import { ProcessorId } from '../components/ProcessorId.js';
import { Time } from '../components/Time.js';
import { formatMoney } from '../format.js';
import { campaignStatusLabel, eventTypeLabel, RECOVERED_VIA_LABELS, subscriptionStatusLabel } from '../labels.js';
import { useLoad } from '../hooks.js';
import { Link, ListCrumb } from '../router.js';
import { useSession } from '../session.js';
import { useAction } from '../use-action.js';

type Action = 'mark-recovered' | 'mark-lost';

/**
 * Each action's confirmation. While the workspace's processor is not connected, outbound webhooks
 * are paused and the event is never sent (docs/dashboard-ui.md), so the dialog does not promise it.
 */
const ACTIONS: Record<
  Action,
  { label: string; verb: string; recorded: string; event: string; done: string; tone: 'primary' | 'danger' }
> = {
  // Recording money that came in is no loss: its confirmation is the primary button, not the red
  // one of Mark lost (which gives the campaign up), so the two do not read as equally destructive.
  'mark-recovered': {
    label: 'Mark recovered',
    tone: 'primary',
    done: 'Marked recovered.',
    verb: 'Mark this campaign recovered',
    recorded: 'It is recorded as recovered by hand',
    event: 'recovery.recovered',
  },
  'mark-lost': {
    label: 'Mark lost',
    tone: 'danger',
    done: 'Marked lost.',
    verb: 'Mark this campaign lost',
    recorded: 'It closes without recovery',
    event: 'recovery.lost',
  },
};

function consequence(action: Action, webhooksSent: boolean): string {
  const { recorded, event } = ACTIONS[action];
  return webhooksSent
    ? `${recorded}, and your webhook endpoints are told "${eventTypeLabel(event)}".`
    : `${recorded}. Outbound webhooks are paused (the payment processor is not connected and syncing), so your ` +
        'webhook endpoints are not told, then or later.';
}

/** One campaign: its facts, customer, subscription, timeline and (owners, admins) the closing actions. */
export default function CampaignDetail({ id }: { id: string }) {
  // Escaped: the id comes from the address, and `..%2Fteam` must not name another route.
  const path = `/campaigns/${encodeURIComponent(id)}`;
  const detail = useLoad((signal) => api<Detail>('GET', path, { signal }), `campaign:${id}`);
  const { me } = useSession();
  const [action, setAction] = useState<Action | null>(null);
  /** A mark refused because the campaign was closed meanwhile: said beside it, as it is now. */
  const [refused, setRefused] = useState<Action | null>(null);
  const marking = useAction();
  /**
   * What the last mark made here did, in the page's status: the buttons go with the campaign in
   * flight, and the focus with them to the page's content, so the change was otherwise unsaid.
   */
  const [marked, setMarked] = useState<Action | null>(null);

  // The campaign is shown closed as the dialog closes (as Revoke token does), so the dialog finds
  // its opener (Mark recovered, gone with the campaign in flight) gone and gives the focus to the
  // page's content: closed first, it gave it back to that button, which the reload then removed,
  // leaving the focus on the body. Once the mark is made, a failed read of the campaign does not
  // keep the dialog open as if the mark had failed (a second try would be refused): the page
  // reads it again on its own, with its error and Try again.
  // Closed meanwhile (another person, Stripe's retry, the stale-campaign sweep): the page, which
  // still showed it in flight, reads it again and says who closed it and when, not the server's
  // "is already lost", and the dialog closes as after a mark.
  const run = () =>
    void marking.run(async () => {
      try {
        await api('POST', `${path}/${action}`);
        setRefused(null);
        setMarked(action);
      } catch (failure) {
        if (!(failure instanceof ApiError) || failure.code !== 'campaign_closed') throw failure;
        // AlreadyClosed says who closed it instead.
        setRefused(action);
        setMarked(null);
      }
      const marked = await api<Detail>('GET', path).catch(() => null);
      if (marked) detail.set(marked);
      else detail.reload();
      setAction(null);
    });

  const campaign = detail.data;
  useRefreshWhileSending(campaign?.timeline, detail.reload);
  const canAct = me.permissions.manage_campaigns && campaign?.status === 'in_flight';
  // The team names who closed it (a person's mark, the operator CLI run for someone); read while
  // the marks are offered too, so that a mark refused as closed meanwhile names the closer at
  // once, not their email or "the operator CLI" until the team's list comes.
  const members = useTeamMembers(
    Boolean(campaign && (canAct || campaign.closed_by_user_id !== null || closingAction(campaign))),
  );
  return (
    <>
      <p className="breadcrumb">
        <ListCrumb to="/campaigns">Campaigns</ListCrumb>
      </p>
      <PageHeader
        title={
          campaign ? (
            <>
              Invoice <HeadingId>{campaign.psp_invoice_id}</HeadingId>
            </>
          ) : (
            'Campaign'
          )
        }
      >
        {canAct &&
          (Object.keys(ACTIONS) as Action[]).map((key) => (
            <button key={key} type="button" className="button" onClick={() => setAction(key)}>
              {ACTIONS[key].label}
            </button>
          ))}
      </PageHeader>
      <LiveStatus>{marked && ACTIONS[marked].done}</LiveStatus>
      {detail.loading && !campaign && <Loading />}
      <LoadError loaded={detail} what="campaign" back={{ to: '/campaigns', label: 'All campaigns' }} />
      {campaign && refused && campaign.status !== 'in_flight' && (
        <AlreadyClosed action={refused} campaign={campaign} members={members} />
      )}
      {campaign && <CampaignBody campaign={campaign} members={members} />}
      {action && (
        <ConfirmDialog
          title={ACTIONS[action].label}
          message={
            <p>
              {ACTIONS[action].verb} ({campaign ? formatMoney(campaign.amount_cents, campaign.currency) : ''})?{' '}
              {consequence(action, me.workspace.processor_status === 'connected')} This cannot be undone.
            </p>
          }
          confirmLabel={ACTIONS[action].label}
          tone={ACTIONS[action].tone}
          action={marking}
          onConfirm={run}
          onClose={() => setAction(null)}
        />
      )}
    </>
  );
}

type Actor = Extract<TimelineEntry, { kind: 'action' }>['actor'];

/** The mark that closed the campaign (a person's on the dashboard, or the operator CLI's): its security log record, in the timeline. */
function closingAction(campaign: Detail) {
  const entry = [...campaign.timeline]
    .reverse()
    .find((each) => each.kind === 'action' && each.action.startsWith('campaign.marked_'));
  return entry?.kind === 'action' ? entry : undefined;
}

/**
 * Who closed a campaign, from what its page reads (docs/dashboard-ui.md, "Campaign"):
 * - `actor`: whoever the closing mark's security log record names: someone's Mark recovered or
 *   Mark lost on the dashboard, or the operator CLI's `campaign recover` or `campaign lose` run by
 *   hand (with the person `--actor` named, their `email` kept once they have left). A close from
 *   before the CLI logged its closes has no record: the operator CLI then, with the campaign's
 *   `closed_by_user_id` (null once that person has left), or with nobody for a manual recovery or
 *   a loss "from the dashboard" with no one on record;
 * - `processor`: the payment processor, a recovery by payment or a loss it gave up on;
 * - `sweep`: the stale-campaign sweep, which abandons campaigns open too long.
 */
type Closer = { by: 'actor'; actor: Actor } | { by: 'processor' } | { by: 'sweep' };

/** The operator CLI, for a close it made before it logged its closes: by whom only the campaign says. */
const unloggedOperatorClose = (userId: string | null): Closer => ({
  by: 'actor',
  actor: { type: 'operator', user_id: userId, label: 'operator CLI', email: null },
});

function closerOf(campaign: Detail): Closer | null {
  if (campaign.status === 'in_flight') return null;
  if (campaign.status === 'abandoned') return { by: 'sweep' };
  const marked = closingAction(campaign);
  if (marked) return { by: 'actor', actor: marked.actor };
  if (campaign.closed_by_user_id) return unloggedOperatorClose(campaign.closed_by_user_id);
  if (campaign.status === 'recovered') {
    return campaign.recovered_via === 'manual' ? unloggedOperatorClose(null) : { by: 'processor' };
  }
  const lost = campaign.timeline.find((entry) => entry.kind === 'event' && entry.type === 'recovery.lost');
  return lost?.kind === 'event' && lost.source === 'dashboard' ? unloggedOperatorClose(null) : { by: 'processor' };
}

/**
 * The closer's name as the Security log and the timeline give it (ActorName): a person by name
 * with the email the mark recorded, the operator CLI run for someone as "Jane Doe via operator
 * CLI"; "the operator CLI" when it is known for no one; the processor and the sweep in words.
 * `inline`: within a sentence (the email in brackets, lower case to start); else a fact's value
 * (the email or "via operator CLI" on a quieter line).
 */
function CloserName({
  closer,
  members,
  inline = false,
}: {
  closer: Closer;
  members: ReadonlyMap<string, User>;
  inline?: boolean;
}) {
  const words = (text: string) => <>{inline ? text : text[0]!.toUpperCase() + text.slice(1)}</>;
  switch (closer.by) {
    case 'actor': {
      const { actor } = closer;
      const known = (actor.user_id !== null && members.has(actor.user_id)) || actor.email !== null;
      if (actor.type === 'operator' && !known) return words('the operator CLI');
      return <ActorName actor={actor} members={members} inline={inline} />;
    }
    case 'processor':
      return words('the payment processor');
    case 'sweep':
      return words('the stale-campaign sweep');
  }
}

/**
 * Why nothing was marked: the campaign was closed after the page showed it, by whom (a person, the
 * operator CLI, the payment processor or the stale-campaign sweep: closerOf) and when.
 */
function AlreadyClosed({
  action,
  campaign,
  members,
}: {
  action: Action;
  campaign: Detail;
  members: ReadonlyMap<string, User>;
}) {
  const closer = closerOf(campaign);
  if (!closer) return null;
  return (
    <p className="notice page-notice" role="alert">
      {ACTIONS[action].label} did nothing: <CloserName closer={closer} members={members} inline /> had already closed
      this campaign as {campaignStatusLabel(campaign.status).toLowerCase()}, <Time value={campaign.closed_at} />. The
      page now shows it as it is.
    </p>
  );
}

function CampaignBody({ campaign, members }: { campaign: Detail; members: ReadonlyMap<string, User> }) {
  const closedBy = closerOf(campaign);
  const facts: Fact[] = [
    ['Status', <Badge value={campaign.status} label={campaignStatusLabel(campaign.status)} />],
    ['Invoice', <ProcessorId id={campaign.psp_invoice_id} record="invoice" />],
    ['Amount', formatMoney(campaign.amount_cents, campaign.currency)],
    ['Decline', <DeclineReason code={campaign.decline_code} category={campaign.decline_category} />],
    ['Recovered via', campaign.recovered_via ? RECOVERED_VIA_LABELS[campaign.recovered_via] : '—'],
    ['First failed', <Time value={campaign.first_failed_at} sayUtc />],
    ['Recovered', <Time value={campaign.recovered_at} sayUtc />],
    ['Closed', <Time value={campaign.closed_at} sayUtc />],
    ...(closedBy ? [['Closed by', <CloserName closer={closedBy} members={members} />] as Fact] : []),
  ];
  const { customer, subscription } = campaign;
  return (
    <div className="detail-grid">
      <section className="card" aria-labelledby="campaign-facts">
        <h2 id="campaign-facts">Campaign</h2>
        <Facts facts={facts} />
      </section>
      <section className="card" aria-labelledby="campaign-customer">
        <h2 id="campaign-customer">Customer</h2>
        {customer ? (
          <Facts
            facts={[
              [
                'Email',
                <Link to={`/customers/${customer.id}`}>
                  <BreakableEmail email={customer.email} />
                </Link>,
              ],
              ['Name', customer.name ?? '—'],
              ['Processor id', <ProcessorId id={customer.psp_customer_id} record="customer" />],
            ]}
          />
        ) : (
          <p className="muted">No customer record.</p>
        )}
        <h2>Subscription</h2>
        {subscription ? (
          <Facts
            facts={[
              ['Plan', subscription.plan_name],
              ['Price', `${formatMoney(subscription.amount_cents, subscription.currency)} / ${subscription.interval}`],
              ['Status', <Badge value={subscription.status} label={subscriptionStatusLabel(subscription.status)} />],
              ['Processor id', <ProcessorId id={subscription.psp_subscription_id} record="subscription" />],
            ]}
          />
        ) : (
          <p className="muted">No subscription record.</p>
        )}
      </section>
      <section className="card wide" aria-labelledby="campaign-timeline">
        <h2 id="campaign-timeline">Timeline</h2>
        <Timeline
          entries={campaign.timeline}
          members={members}
          empty="No events have been recorded for this campaign."
          next={
            campaign.status === 'in_flight' && campaign.next_payment_attempt ? (
              <NextRetry next={campaign.next_payment_attempt} />
            ) : undefined
          }
        />
      </section>
    </div>
  );
}

/**
 * What a campaign in flight waits on: Stripe's next retry of the invoice's payment, or that it
 * scheduled none (docs/dashboard-ui.md, "Campaign"). A retry whose time has passed is said to be
 * due, its outcome not reported yet. The page says nothing of it when Stripe never said (a
 * campaign opened before it was kept, or by the operator CLI or fixtures).
 */
function NextRetry({ next }: { next: NonNullable<Detail['next_payment_attempt']> }) {
  if (next.at === null) return <strong>No retry scheduled by Stripe</strong>;
  return (
    <>
      <strong>Stripe's next retry:</strong> <Time value={next.at} />
      {Date.parse(next.at) <= Date.now() && <> (due; Stripe has not reported its outcome yet)</>}
    </>
  );
}
