import { describe, expect, it } from '@jest/globals';
import { declineCategoryOf, EVENT_TYPES, SECURITY_ACTIONS, SECURITY_ACTOR_TYPES } from '@retention/core';
import {
  ATTEMPT_OUTCOMES,
  CAMPAIGN_STATUSES,
  CANCEL_OUTCOMES,
  CANCEL_REASON_CODES,
  DECLINE_CATEGORIES,
  DELIVERY_STATUSES,
  SUBSCRIPTION_STATUSES,
} from '@retention/core/enums';
import {
  ATTEMPT_OUTCOME_LABELS,
  CAMPAIGN_STATUS_LABELS,
  CANCEL_OUTCOME_LABELS,
  CANCEL_REASON_LABELS,
  DECLINE_CATEGORY_LABELS,
  DELIVERY_STATUS_LABELS,
  SUBSCRIPTION_STATUS_LABELS,
  backfillStatusText,
  campaignStatusLabel,
  DECLINE_CODE_LABELS,
  EVENT_TYPE_DESCRIPTIONS,
  EVENT_TYPE_LABELS,
  SECURITY_ACTION_GROUPS,
  SECURITY_ACTOR_KIND_LABELS,
  SECURITY_ACTION_LABELS,
  campaignActionLabel,
  clientAddressLabel,
  declineCodeLabel,
  eventTypeLabel,
  securityActionLabel,
  securityTargetLabel,
  securityTargetText,
} from '../src/labels.js';

/** The labels table (src/labels.ts) against the server's own sets, so a new code gets words. */
describe('labels', () => {
  it('names every event type of the catalog, and nothing else, in sentence case, none the same as another', () => {
    expect(Object.keys(EVENT_TYPE_LABELS).sort()).toEqual([...EVENT_TYPES].sort());
    // Every page that shows an event type (the webhooks pages, the timeline, the Security log)
    // shows these words: none may fall back to its code humanized ("Recovery recovered").
    const words = EVENT_TYPES.map(eventTypeLabel);
    expect(words).toEqual(EVENT_TYPES.map((type) => EVENT_TYPE_LABELS[type]));
    for (const label of words) expect(label).toMatch(/^[A-Z][a-z]*(,? [a-z]+)*$/);
    expect(new Set(words).size).toBe(words.length);
  });

  it('says what every event type of the catalog means, in a sentence, none the same as another', () => {
    expect(Object.keys(EVENT_TYPE_DESCRIPTIONS).sort()).toEqual([...EVENT_TYPES].sort());
    const sentences = Object.values(EVENT_TYPE_DESCRIPTIONS);
    for (const sentence of sentences) expect(sentence).toMatch(/^[A-Z][^.]+\.$/);
    expect(new Set(sentences).size).toBe(sentences.length);
  });

  it('names only decline codes the category table knows (a typo would never show)', () => {
    const unknown = Object.keys(DECLINE_CODE_LABELS).filter((code) => declineCategoryOf(code) === 'unknown');
    expect(unknown).toEqual([]);
  });

  it('shows a code it has no words for humanized, never blank', () => {
    expect(eventTypeLabel('ping')).toBe('Ping');
    expect(declineCodeLabel('some_new_code')).toBe('Some new code');
    expect(declineCodeLabel('insufficient_funds')).toBe('Insufficient funds');
  });

  it.each([
    ['campaign status', CAMPAIGN_STATUS_LABELS, CAMPAIGN_STATUSES],
    ['cancel outcome', CANCEL_OUTCOME_LABELS, CANCEL_OUTCOMES],
    ['cancellation reason', CANCEL_REASON_LABELS, CANCEL_REASON_CODES],
    ['decline category', DECLINE_CATEGORY_LABELS, DECLINE_CATEGORIES],
    ['subscription status', SUBSCRIPTION_STATUS_LABELS, SUBSCRIPTION_STATUSES],
    ['delivery status', DELIVERY_STATUS_LABELS, DELIVERY_STATUSES],
    ['attempt outcome', ATTEMPT_OUTCOME_LABELS, ATTEMPT_OUTCOMES],
  ] as const)('names every %s, and nothing else, in sentence case, none the same as another', (_, labels, codes) => {
    expect(Object.keys(labels).sort()).toEqual([...codes].sort());
    const words = Object.values(labels);
    for (const label of words) expect(label).toMatch(/^[A-Z][a-z]*( [a-z]+)*$/);
    expect(new Set(words).size).toBe(words.length);
  });

  it("shows a status it has no words for (a later server's) humanized with a capital, never blank", () => {
    expect(campaignStatusLabel('in_flight')).toBe('In flight');
    expect(campaignStatusLabel('on_hold')).toBe('On hold');
    expect(campaignStatusLabel('constructor')).toBe('Constructor');
  });

  it("says the Stripe import's status with where it is or stopped", () => {
    expect(backfillStatusText('idle', null)).toBe('Not started');
    expect(backfillStatusText('queued', null)).toBe('Waiting to start');
    expect(backfillStatusText('running', 'customers')).toBe('Importing customers');
    expect(backfillStatusText('running', null)).toBe('Running');
    // A finished run keeps its last phase: "succeeded (invoices)" read as if only invoices came.
    expect(backfillStatusText('succeeded', 'invoices')).toBe('Finished');
    expect(backfillStatusText('failed', 'invoices')).toBe('Failed while importing open invoices');
    expect(backfillStatusText('failed', null)).toBe('Failed');
  });

  it('names every action the security log records, and nothing else', () => {
    expect(Object.keys(SECURITY_ACTION_LABELS).sort()).toEqual([...SECURITY_ACTIONS].sort());
    expect(securityActionLabel('account.reset_link_created')).toBe('Password reset link made');
    expect(securityTargetLabel('webhook_endpoint')).toBe('Endpoint');
    // The processor connection is recorded by its provider's code; the log names the provider.
    expect(securityTargetText({ type: 'processor_connection', label: 'stripe' })).toBe('Payment processor: Stripe');
    expect(securityTargetText({ type: 'api_token', label: 'CI' })).toBe('API token: CI');
  });

  it("groups every action the security log records for its Action filter, each once, in the server's order", () => {
    expect(SECURITY_ACTION_GROUPS.flatMap((group) => group.actions)).toEqual([...SECURITY_ACTIONS]);
    // Each group is one subject (`token.`, `webhook.`, …), and "Any …" where it has more than one.
    for (const { actions, any } of SECURITY_ACTION_GROUPS) {
      expect(new Set(actions.map((action) => action.split('.')[0])).size).toBe(1);
      expect(any === null).toBe(actions.length === 1);
    }
  });

  it("offers every kind of actor the log records but a person, for its Who filter, in core's order", () => {
    expect(SECURITY_ACTOR_KIND_LABELS.map((kind) => kind.value)).toEqual(
      SECURITY_ACTOR_TYPES.filter((type) => type !== 'user'),
    );
  });

  it('shows a security action or target it has no words for as its code, never blank', () => {
    expect(securityActionLabel('webhook.future_thing')).toBe('webhook.future_thing');
    expect(securityTargetLabel('future_object')).toBe('future_object');
  });

  it("says a campaign's action taken by hand in sentence case, as its timeline shows it", () => {
    expect(campaignActionLabel('campaign.marked_lost')).toBe('Marked lost');
    expect(campaignActionLabel('campaign.marked_recovered')).toBe('Marked recovered');
  });

  it('names a loopback address shortly, what it means in full, and keeps the address; any other address as it is', () => {
    const loopback = (ip: string) => ({
      shown: `This machine (${ip})`,
      whole: `This machine or a proxy on it (${ip})`,
    });
    expect(clientAddressLabel('::1')).toEqual(loopback('::1'));
    expect(clientAddressLabel('127.0.0.1')).toEqual(loopback('127.0.0.1'));
    expect(clientAddressLabel('::ffff:127.0.0.1')).toEqual(loopback('::ffff:127.0.0.1'));
    expect(clientAddressLabel('203.0.113.9')).toEqual({ shown: '203.0.113.9', whole: '203.0.113.9' });
    expect(clientAddressLabel('1270::1')).toEqual({ shown: '1270::1', whole: '1270::1' });
  });
});
