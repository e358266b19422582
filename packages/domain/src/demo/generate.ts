import {
  CAMPAIGN_STATUSES,
  CANCEL_OUTCOMES,
  declineCategoryOf,
  DEFAULT_STALE_CAMPAIGN_CHECK_INTERVAL,
  DEFAULT_STALE_CAMPAIGN_DAYS,
  parseDuration,
  toIsoMillis,
  type CampaignStatus,
  type CancelOutcome,
  type DeclineCategory,
  type RecoveredVia,
  type SubscriptionStatus,
  SUBSCRIPTION_STATUSES,
  zeroCounts,
} from '@retention/core';
import type { FixtureCampaign, FixtureCancelSession, FixtureCustomer, FixtureFile } from '../fixtures/schema.js';
import {
  CANCEL_REASON_WEIGHTS,
  CURRENCY_WEIGHTS,
  CUSTOMER_TAGS,
  DECLINE_CODE_WEIGHTS,
  DEMO_BUSINESS,
  DEMO_CURRENCIES,
  DEMO_PEOPLE,
  EMAIL_DOMAINS,
  FEEDBACK,
  NAMES,
  outcomeWeights,
  PLAN_WEIGHTS,
  PLANS,
  YEARLY_MONTHS_CHARGED,
  YEARLY_SHARE,
  type DemoCurrency,
} from './catalog.js';
import { SeededRandom } from './random.js';

/**
 * Builds the demo business as a fixture file: a pure function of (customers, seed, now), so
 * the same seed gives the same data. Each subscription is simulated through its billing
 * history over the last 365 days (the overview charts show 12 months): renewals that fail open campaigns whose fate (recovered,
 * lost by the processor, left to go stale) follows the decline category, and some customers
 * go through the cancel flow. Statuses follow from the story: a campaign is `in_flight` only
 * while it is younger than the stale limit, a lost campaign cancels its subscription.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WINDOW_DAYS = 365;
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;
const TRIAL = 14 * DAY;
/** The default STALE_CAMPAIGN_DAYS: open campaigns older than this are abandoned. */
export const STALE_AFTER_DAYS = DEFAULT_STALE_CAMPAIGN_DAYS;
/**
 * The days after a demo invoice's first failure on which Stripe's retry schedule tries it again
 * (then no more); a recovery by retry is one of these, within RETRY_WITHIN_HOURS of its day.
 */
export const RETRY_DAYS: readonly number[] = [1, 3, 5, 7];
export const RETRY_WITHIN_HOURS = 4;
const STALE_AFTER = STALE_AFTER_DAYS * DAY;
/**
 * The default STALE_CAMPAIGN_CHECK_INTERVAL: the worker's stale-campaign job runs this often,
 * so a campaign is abandoned at the job's first run after it turned 30 days old. The replay
 * (replay.ts) runs the job at those times, on a grid of runs that ends at `now`.
 */
const STALE_CHECK_EVERY = parseDuration(DEFAULT_STALE_CAMPAIGN_CHECK_INTERVAL)!;

/**
 * The first customers are scripted so that every campaign status, every cancel outcome and
 * every currency appears even in a small demo; the next ones so that every campaign status
 * appears in every currency; the rest are drawn at random.
 */
export const MIN_DEMO_CUSTOMERS = CAMPAIGN_STATUSES.length + CANCEL_OUTCOMES.length;

const FAILURE_RATE = { month: 0.09, year: 0.12 } as const;
const CANCEL_FLOW_RATE = 0.22;

const RECOVERY_RATE: Record<DeclineCategory, number> = {
  soft: 0.68,
  card_update_required: 0.52,
  authentication_required: 0.55,
  revoked: 0.12,
  fraud: 0.05,
  unknown: 0.4,
};
/** Of the campaigns not recovered, the share the processor gives up on (the rest go stale). */
const PROCESSOR_GIVES_UP_RATE = 0.45;

const SOFT_VIA: ReadonlyArray<readonly [RecoveredVia, number]> = [
  ['retry', 70],
  ['spontaneous', 14],
  ['customer_update', 13],
  ['manual', 3],
];
const HARD_VIA: ReadonlyArray<readonly [RecoveredVia, number]> = [
  ['customer_update', 80],
  ['spontaneous', 10],
  ['manual', 7],
  ['retry', 3],
];

type Fate =
  | { kind: 'recovered'; via: RecoveredVia; afterMs: number }
  | { kind: 'lost'; afterMs: number }
  | { kind: 'unresolved' };

interface Script {
  currency?: DemoCurrency;
  campaign?: CampaignStatus;
  session?: CancelOutcome;
}

function firstScript(index: number): Script {
  const currency = DEMO_CURRENCIES[index % DEMO_CURRENCIES.length]!;
  if (index < CAMPAIGN_STATUSES.length) return { currency, campaign: CAMPAIGN_STATUSES[index]! };
  const session = CANCEL_OUTCOMES[index - CAMPAIGN_STATUSES.length];
  return session ? { currency, session } : {};
}

const FIRST_SCRIPTS = Array.from({ length: MIN_DEMO_CUSTOMERS }, (_, index) => firstScript(index));

/** The (currency, campaign status) pairs the first scripts leave out, in a fixed order. */
const PAIR_SCRIPTS: Script[] = DEMO_CURRENCIES.flatMap((currency) =>
  CAMPAIGN_STATUSES.filter(
    (campaign) => !FIRST_SCRIPTS.some((script) => script.currency === currency && script.campaign === campaign),
  ).map((campaign) => ({ currency, campaign })),
);

function scriptFor(index: number): Script {
  return FIRST_SCRIPTS[index] ?? PAIR_SCRIPTS[index - MIN_DEMO_CUSTOMERS] ?? {};
}

export interface DemoSummary {
  customers: number;
  subscriptions: Record<SubscriptionStatus, number>;
  campaigns: Record<CampaignStatus, number>;
  cancel_sessions: Record<CancelOutcome, number>;
}

export interface DemoFixture {
  file: FixtureFile;
  summary: DemoSummary;
}

export function buildDemoFixture(options: { customers: number; seed: number; now: number }): DemoFixture {
  return new DemoBuilder(options.seed, options.now).build(options.customers);
}

class DemoBuilder {
  private readonly rng: SeededRandom;
  private readonly customers: FixtureCustomer[] = [];
  private readonly campaigns: FixtureCampaign[] = [];
  private readonly sessions: FixtureCancelSession[] = [];
  private readonly usedIds = new Set<string>();
  private readonly emailsSeen = new Map<string, number>();
  private readonly summary: DemoSummary = {
    customers: 0,
    subscriptions: zeroCounts(SUBSCRIPTION_STATUSES),
    campaigns: zeroCounts(CAMPAIGN_STATUSES),
    cancel_sessions: zeroCounts(CANCEL_OUTCOMES),
  };

  constructor(
    seed: number,
    private readonly now: number,
  ) {
    this.rng = new SeededRandom(seed);
  }

  build(count: number): DemoFixture {
    for (let index = 0; index < count; index += 1) this.addCustomer(index);
    this.summary.customers = count;
    const file: FixtureFile = {
      workspaces: [
        {
          key: 'demo',
          name: DEMO_BUSINESS.name,
          processor: 'connected',
          display_currency: 'usd',
          users: [
            // Named, as people who work there are: nameless, each read "—" on Team, even ops, who
            // has signed in and marked campaigns recovered.
            ...DEMO_PEOPLE,
          ],
          tokens: [{ key: 'demo', name: 'demo seed' }],
          customers: this.customers,
          campaigns: this.campaigns,
          cancel_sessions: this.sessions,
        },
      ],
    };
    return { file, summary: this.summary };
  }

  private processorId(prefix: string, length: number): string {
    for (;;) {
      const id = `${prefix}_${this.rng.base62(length)}`;
      if (!this.usedIds.has(id)) {
        this.usedIds.add(id);
        return id;
      }
    }
  }

  /** first.last@domain, numbered from the second customer of that name on that domain. */
  private email(first: string, last: string): string {
    const ascii = (name: string) =>
      name
        .normalize('NFD')
        .replace(/[^A-Za-z]/g, '')
        .toLowerCase();
    const local = `${ascii(first)}.${ascii(last)}`;
    const domain = this.rng.pick(EMAIL_DOMAINS);
    const base = `${local}@${domain}`;
    const seen = this.emailsSeen.get(base) ?? 0;
    this.emailsSeen.set(base, seen + 1);
    return seen === 0 ? base : `${local}${seen + 1}@${domain}`;
  }

  private addCustomer(index: number): void {
    const { rng, now } = this;
    const script = scriptFor(index);
    const scripted = script.campaign !== undefined || script.session !== undefined;
    const currency = script.currency ?? rng.weighted(CURRENCY_WEIGHTS);
    const region = NAMES[currency];
    const first = rng.pick(region.first);
    const last = rng.pick(region.last);

    // Scripted customers are three to five months old, billed monthly, their last renewal 5 to
    // 15 days ago. Others sign up over the whole window, a little more often lately (growth).
    const createdAt = scripted
      ? now - (rng.integer(3, 5) * 30 + rng.integer(5, 15)) * DAY - rng.integer(0, 12) * HOUR
      : now - HOUR - (WINDOW_DAYS * DAY - 2 * HOUR) * (1 - rng.next() ** 0.8);
    const interval = !scripted && rng.chance(YEARLY_SHARE) ? 'year' : 'month';
    let planIndex = rng.weighted(PLAN_WEIGHTS.map((weight, plan) => [plan, weight] as const));
    const price = () => PLANS[planIndex]!.monthly[currency] * (interval === 'year' ? YEARLY_MONTHS_CHARGED : 1);
    const monthly = () => (interval === 'year' ? Math.round(price() / 12) : price());

    const customerKey = `c${index}`;
    const subscriptionKey = `s${index}`;
    const subscriptionCreated = Math.min(createdAt + rng.integer(0, 90) * MINUTE, now - MINUTE);
    const inTrial = !scripted && now - subscriptionCreated < TRIAL && rng.chance(0.6);
    const hadTrial = !scripted && !inTrial && now - subscriptionCreated >= TRIAL && rng.chance(0.35);
    const trialEnd = inTrial || hadTrial ? subscriptionCreated + TRIAL : null;
    const period = interval === 'year' ? YEAR : MONTH;
    const firstInvoice = trialEnd ?? subscriptionCreated;

    let status: SubscriptionStatus = inTrial ? 'trialing' : 'active';
    let canceledAt: number | null = null;
    let stopped = inTrial;

    let sessionAt: number | null = null;
    if (script.session !== undefined) {
      sessionAt = now - rng.integer(10, 60) * DAY - rng.integer(0, 23) * HOUR;
    } else if (!scripted && !inTrial && rng.chance(CANCEL_FLOW_RATE)) {
      const earliest = firstInvoice + DAY;
      const latest = now - 10 * MINUTE;
      if (earliest < latest) sessionAt = rng.between(earliest, latest);
    }

    const runSession = (at: number) => {
      const reason = rng.weighted(CANCEL_REASON_WEIGHTS);
      const outcome = script.session ?? rng.weighted(outcomeWeights(reason));
      const endedAt = at + rng.between(1, 9) * MINUTE;
      this.sessions.push({
        key: `x${this.sessions.length}`,
        customer: customerKey,
        subscription: subscriptionKey,
        outcome,
        reason_code: reason,
        feedback: rng.chance(0.35) ? rng.pick(FEEDBACK[reason]) : null,
        monthly_mrr_cents: monthly(),
        currency,
        created_at: toIsoMillis(Math.round(at)),
        ended_at: toIsoMillis(Math.round(endedAt)),
      });
      this.summary.cancel_sessions[outcome] += 1;
      if (outcome === 'canceled') {
        status = 'canceled';
        canceledAt = endedAt;
        stopped = true;
      } else if (outcome === 'saved_pause' && now - at < 90 * DAY) {
        status = 'paused';
        stopped = true;
      } else if (outcome === 'saved_downgrade' && planIndex > 0) {
        planIndex -= 1;
      }
    };

    const lastInvoiceIndex = Math.floor((now - firstInvoice) / period);
    const scriptedFailure = script.campaign === 'in_flight' ? lastInvoiceIndex : 1;
    let invoiceAt = firstInvoice;
    let invoiceIndex = 0;
    for (; !stopped && invoiceAt <= now; invoiceAt += period, invoiceIndex += 1) {
      if (sessionAt !== null && sessionAt < invoiceAt) {
        runSession(sessionAt);
        sessionAt = null;
        if (stopped) break;
      }
      const fails =
        script.campaign !== undefined
          ? invoiceIndex === scriptedFailure
          : script.session === undefined && rng.chance(FAILURE_RATE[interval]);
      if (!fails) continue;
      const outcome = this.addCampaign(customerKey, subscriptionKey, invoiceAt, price(), currency, script.campaign);
      if (outcome.status !== 'recovered') {
        status = outcome.status === 'lost' ? 'canceled' : 'past_due';
        canceledAt = outcome.status === 'lost' ? outcome.closedAt : null;
        stopped = true;
      }
    }
    if (sessionAt !== null && !stopped) runSession(sessionAt);

    this.customers.push({
      key: customerKey,
      email: this.email(first, last),
      name: `${first} ${last}`,
      psp_customer_id: this.processorId('cus', 14),
      tags: [
        ...CUSTOMER_TAGS.filter(([, probability]) => rng.chance(probability)).map(([tag]) => tag),
        ...(interval === 'year' ? ['annual'] : []),
      ],
      created_at: toIsoMillis(Math.round(createdAt)),
      subscriptions: [
        {
          key: subscriptionKey,
          psp_subscription_id: this.processorId('sub', 24),
          status,
          plan_name: PLANS[planIndex]!.name,
          amount_cents: price(),
          currency,
          interval,
          trial_end: trialEnd === null ? null : toIsoMillis(Math.round(trialEnd)),
          // The renewal the loop stopped at: the end of the period the customer last had.
          current_period_end: toIsoMillis(Math.round(invoiceAt)),
          canceled_at: canceledAt === null ? null : toIsoMillis(Math.round(canceledAt)),
          created_at: toIsoMillis(Math.round(subscriptionCreated)),
        },
      ],
    });
    this.summary.subscriptions[status] += 1;
  }

  /** Opens the campaign of a failed renewal and plays its fate up to now. */
  private addCampaign(
    customer: string,
    subscription: string,
    invoiceAt: number,
    amount: number,
    currency: DemoCurrency,
    scripted: CampaignStatus | undefined,
  ): { status: CampaignStatus; closedAt: number | null } {
    const { rng, now } = this;
    const declineCode = rng.weighted(DECLINE_CODE_WEIGHTS);
    // The charge runs within hours of the renewal, and never after now.
    const failedAt = invoiceAt + rng.between(0, Math.max(0, Math.min(6 * HOUR, now - MINUTE - invoiceAt)));
    const fate = scripted === undefined ? this.drawFate(declineCategoryOf(declineCode)) : this.scriptedFate(scripted);

    let status: CampaignStatus = 'in_flight';
    let closedAt: number | null = null;
    let via: RecoveredVia | null = null;
    const endsAt = fate.kind === 'unresolved' ? this.abandonedAt(failedAt) : failedAt + fate.afterMs;
    if (endsAt <= now) {
      closedAt = endsAt;
      status = fate.kind === 'recovered' ? 'recovered' : fate.kind === 'lost' ? 'lost' : 'abandoned';
      via = fate.kind === 'recovered' ? fate.via : null;
    }
    this.campaigns.push({
      key: `k${this.campaigns.length}`,
      customer,
      subscription,
      psp_invoice_id: this.processorId('in', 24),
      amount_cents: amount,
      currency,
      status,
      decline_code: declineCode,
      first_failed_at: toIsoMillis(Math.round(failedAt)),
      recovered_via: via,
      recovered_at: status === 'recovered' ? toIsoMillis(Math.round(closedAt!)) : null,
      closed_at: closedAt === null ? null : toIsoMillis(Math.round(closedAt)),
    });
    this.summary.campaigns[status] += 1;
    return { status, closedAt };
  }

  /**
   * When the stale-campaign job abandons a campaign that failed at `failedAt`: its first run
   * (runs fall every STALE_CHECK_EVERY back from `now`) when the campaign is more than
   * STALE_AFTER old, as the job's `first_failed_at < now - 30 days` reads it (whole
   * milliseconds, as stored). After `now` when that run is still to come.
   */
  private abandonedAt(failedAt: number): number {
    const late = this.now - (Math.round(failedAt) + STALE_AFTER);
    if (late <= 0) return this.now + STALE_CHECK_EVERY;
    return this.now - (Math.ceil(late / STALE_CHECK_EVERY) - 1) * STALE_CHECK_EVERY;
  }

  private drawFate(category: DeclineCategory): Fate {
    const { rng } = this;
    if (rng.chance(RECOVERY_RATE[category])) {
      const via = rng.weighted(category === 'soft' ? SOFT_VIA : HARD_VIA);
      return { kind: 'recovered', via, afterMs: this.recoveryDelay(via) };
    }
    if (rng.chance(PROCESSOR_GIVES_UP_RATE)) return { kind: 'lost', afterMs: rng.between(14, 21) * DAY };
    return { kind: 'unresolved' };
  }

  /** Smart retries land on days 1, 3, 5 and 7; people update cards sooner rather than later. */
  private recoveryDelay(via: RecoveredVia): number {
    const { rng } = this;
    switch (via) {
      case 'retry':
        return rng.pick(RETRY_DAYS) * DAY + rng.between(0, RETRY_WITHIN_HOURS) * HOUR;
      case 'customer_update':
        return (0.1 + 9 * rng.next() ** 2) * DAY;
      case 'spontaneous':
        return rng.between(0.5, 6) * DAY;
      case 'manual':
        return rng.between(1, 12) * DAY;
    }
  }

  /** The scripted customers' failures are old enough (or recent enough) for their status. */
  private scriptedFate(status: CampaignStatus): Fate {
    const { rng } = this;
    switch (status) {
      case 'recovered': {
        const via = rng.weighted(SOFT_VIA);
        return { kind: 'recovered', via, afterMs: this.recoveryDelay(via) };
      }
      case 'lost':
        return { kind: 'lost', afterMs: rng.between(14, 21) * DAY };
      case 'in_flight':
      case 'abandoned':
        return { kind: 'unresolved' };
    }
  }
}
