import type { CancelOutcome, CancelReasonCode } from '@retention/core';

/**
 * The tables the demo business is drawn from: a B2B SaaS selling three plans in four
 * currencies, with decline codes and cancellation reasons at roughly the frequencies card
 * processors and cancel-flow vendors publish.
 */

export const DEMO_CURRENCIES = ['usd', 'eur', 'gbp', 'jpy'] as const;
export type DemoCurrency = (typeof DEMO_CURRENCIES)[number];

/** Share of customers billed in each currency. */
export const CURRENCY_WEIGHTS: ReadonlyArray<readonly [DemoCurrency, number]> = [
  ['usd', 55],
  ['eur', 22],
  ['gbp', 13],
  ['jpy', 10],
];

export interface Plan {
  name: string;
  /** Monthly price in minor units per currency: JPY has no minor unit, so these are whole yen. */
  monthly: Record<DemoCurrency, number>;
}

/** Cheapest first: a downgrade moves one step left. */
export const PLANS: readonly Plan[] = [
  { name: 'Starter', monthly: { usd: 1900, eur: 1900, gbp: 1500, jpy: 2500 } },
  { name: 'Pro', monthly: { usd: 4900, eur: 4500, gbp: 3900, jpy: 6800 } },
  { name: 'Business', monthly: { usd: 14900, eur: 13900, gbp: 11900, jpy: 19800 } },
];
export const PLAN_WEIGHTS = [50, 35, 15];

/** Yearly plans cost ten months: two months free. */
export const YEARLY_MONTHS_CHARGED = 10;
export const YEARLY_SHARE = 0.2;

/**
 * Decline codes of failed renewals, per thousand. Soft declines dominate: insufficient
 * funds and the issuer's unexplained generic decline are well over half of all failures.
 */
export const DECLINE_CODE_WEIGHTS: ReadonlyArray<readonly [string, number]> = [
  ['insufficient_funds', 380],
  ['generic_decline', 240],
  ['do_not_honor', 85],
  ['expired_card', 70],
  ['authentication_required', 30],
  ['card_velocity_exceeded', 25],
  ['try_again_later', 20],
  ['processing_error', 15],
  ['transaction_not_allowed', 15],
  ['lost_card', 15],
  ['fraudulent', 12],
  ['card_not_supported', 10],
  ['issuer_not_available', 10],
  ['incorrect_cvc', 8],
  ['withdrawal_count_limit_exceeded', 8],
  ['restricted_card', 6],
  ['new_account_information_available', 6],
  ['stolen_card', 5],
  ['pickup_card', 5],
  ['invalid_account', 5],
  ['revocation_of_authorization', 5],
  ['incorrect_number', 4],
  ['do_not_try_again', 4],
  ['stop_payment_order', 3],
  ['security_violation', 2],
];

export const CANCEL_REASON_WEIGHTS: ReadonlyArray<readonly [CancelReasonCode, number]> = [
  ['too_expensive', 30],
  ['unused', 20],
  ['missing_features', 13],
  ['switched_service', 12],
  ['other', 11],
  ['too_complex', 6],
  ['low_quality', 5],
  ['customer_service', 3],
];

/** How cancel flows end before the reason is taken into account. */
const BASE_OUTCOME_WEIGHTS: Record<CancelOutcome, number> = {
  canceled: 45,
  saved_discount: 17,
  saved_pause: 11,
  saved_downgrade: 8,
  saved_other: 4,
  abandoned: 15,
};

/**
 * A reason makes some offers land more often: price-driven customers take discounts, idle ones
 * pause.
 */
const OUTCOME_BIAS: Partial<Record<CancelReasonCode, Partial<Record<CancelOutcome, number>>>> = {
  too_expensive: { saved_discount: 2, saved_downgrade: 2 },
  unused: { saved_pause: 2.5 },
  missing_features: { canceled: 1.4, saved_other: 1.5 },
  switched_service: { canceled: 1.6, saved_discount: 0.6 },
  too_complex: { saved_downgrade: 1.5, saved_other: 1.5 },
  customer_service: { saved_other: 2 },
};

export function outcomeWeights(reason: CancelReasonCode): Array<readonly [CancelOutcome, number]> {
  const bias = OUTCOME_BIAS[reason] ?? {};
  return (Object.entries(BASE_OUTCOME_WEIGHTS) as Array<[CancelOutcome, number]>).map(
    ([outcome, weight]) => [outcome, weight * (bias[outcome] ?? 1)] as const,
  );
}

export const FEEDBACK: Record<CancelReasonCode, readonly string[]> = {
  too_expensive: [
    'Budget cuts this quarter, we need to trim tools.',
    'Great product but hard to justify the price for a team our size.',
    'Found a cheaper plan elsewhere that covers what we use.',
  ],
  unused: [
    'We only needed it for one project, which is done now.',
    'Nobody on the team has logged in for weeks.',
    'Seasonal business, will probably be back in spring.',
  ],
  missing_features: [
    'Need SSO and audit logs before security signs off.',
    'No Salesforce integration was a deal breaker.',
    'Reporting is too limited for our board meetings.',
  ],
  switched_service: ['Moving to the tool our parent company already pays for.', 'Switched to a competitor bundle.'],
  customer_service: ['Waited four days for a reply to a billing question.', 'Support could not fix our import issue.'],
  too_complex: ['Too much setup for what we need.', 'Onboarding took longer than expected, team gave up.'],
  low_quality: ['Sync kept failing overnight.', 'Too many bugs in the mobile app.'],
  other: ['Company is closing down.', 'Consolidating accounts under a new entity.', 'Personal reasons.'],
};

export const CUSTOMER_TAGS: ReadonlyArray<readonly [string, number]> = [
  ['vip', 0.05],
  ['enterprise', 0.06],
  ['startup', 0.15],
  ['agency', 0.08],
  ['nonprofit', 0.03],
  ['education', 0.04],
  ['beta', 0.07],
];

interface Region {
  first: readonly string[];
  last: readonly string[];
}

/** Names by billing currency, so a yen invoice belongs to a plausible customer. */
export const NAMES: Record<DemoCurrency, Region> = {
  usd: {
    first: ['James', 'Mary', 'Robert', 'Patricia', 'Michael', 'Jennifer', 'David', 'Linda', 'Daniel', 'Ashley'],
    last: ['Smith', 'Johnson', 'Williams', 'Brown', 'Garcia', 'Miller', 'Davis', 'Martinez', 'Lee', 'Walker'],
  },
  eur: {
    first: ['Lukas', 'Sophie', 'Jan', 'Emma', 'Luca', 'Giulia', 'Hugo', 'Léa', 'Pablo', 'Lucía'],
    last: ['Müller', 'Schmidt', 'Janssen', 'De Vries', 'Rossi', 'Bianchi', 'Martin', 'Bernard', 'García', 'López'],
  },
  gbp: {
    first: ['Oliver', 'Amelia', 'Harry', 'Isla', 'George', 'Ava', 'Jack', 'Emily', 'Noah', 'Freya'],
    last: ['Taylor', 'Jones', 'Evans', 'Thomas', 'Roberts', 'Wright', 'Hughes', 'Edwards', 'Hall', 'Wood'],
  },
  jpy: {
    first: ['Haruto', 'Yui', 'Sota', 'Hina', 'Yuto', 'Aoi', 'Ren', 'Mio', 'Riku', 'Sakura'],
    last: ['Sato', 'Suzuki', 'Takahashi', 'Tanaka', 'Watanabe', 'Ito', 'Yamamoto', 'Nakamura', 'Kobayashi', 'Kato'],
  },
};

/**
 * Only reserved example domains (RFC 2606): demo data reaches webhook receivers, and a
 * receiver that emails `customer_email` must never reach a real mailbox.
 */
export const EMAIL_DOMAINS = ['example.com', 'example.net', 'example.org', 'mail.example.com', 'inbox.example.net'];

export const DEMO_BUSINESS = { name: 'Northwind Analytics (demo)', domain: 'northwind.example' };
export const DEMO_OWNER_EMAIL = `owner@${DEMO_BUSINESS.domain}`;

/**
 * The business's people, each with a name (Team, the Security log's Who, a campaign's "closed by"
 * named them "—" or by address before): its owner, who signs in with npm start's invitation and
 * may choose another name then; ops, the admin who marked campaigns recovered; support, a member.
 */
export const DEMO_PEOPLE = [
  { key: 'owner', email: DEMO_OWNER_EMAIL, role: 'owner', name: 'Dana Moreno' },
  { key: 'admin', email: `ops@${DEMO_BUSINESS.domain}`, role: 'admin', name: 'Priya Shah' },
  { key: 'member', email: `support@${DEMO_BUSINESS.domain}`, role: 'member', name: 'Leo Martin' },
] as const;

/**
 * The business's webhook endpoints, added four months ago: its email tool sends the dunning
 * emails (and a thank-you once paid), its CRM tracks accounts; `accepts` is how each answers.
 * The hosts are reserved `.example` names, which nothing answers: `demo seed` keeps them. `npm
 * start` runs a local receiver that answers as `accepts` says, and points the endpoints at it
 * (`demoReceiverUrl`), so that Send test and new events are delivered.
 */
export const DEMO_ENDPOINTS = [
  {
    key: 'dunning',
    name: 'Dunning emails',
    url: `https://mail.${DEMO_BUSINESS.domain}/hooks/retention`,
    events: ['recovery.opened', 'recovery.recovered', 'recovery.lost'],
    accepts: { status: 200, body: '{"queued":true}' },
  },
  {
    key: 'crm',
    name: 'CRM',
    url: `https://crm.${DEMO_BUSINESS.domain}/webhooks/retention`,
    // A CRM records what happened to each account: won back, lost, saved or canceled in the flow.
    events: ['recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost'],
    accepts: { status: 202, body: 'Accepted' },
  },
] as const;
export const DEMO_ENDPOINTS_ADDED_DAYS_AGO = 120;

/** Where the demo's admin marks campaigns recovered by hand from (a documentation address). */
export const DEMO_OPERATOR = {
  ip: '203.0.113.24',
  user_agent:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
};
