import { describe, expect, it } from '@jest/globals';
import { RECOVERED_VIA, SECURITY_ACTIONS, type SecurityAction } from '@retention/core';
import { RECOVERED_VIA_LABELS } from '../src/labels.js';
import { STRIPE_STATUS_TEXT } from '../src/pages/settings/processor-story.js';
import { securityDetailsText } from '../src/security-details.js';

/**
 * Every action's details as the domain functions record them (recordSecurityEvent in
 * packages/domain), and the words the Security log shows for them.
 */
const RECORDED: Record<SecurityAction, [Record<string, unknown> | null, (string | RegExp)[]]> = {
  'token.created': [{ hint: 'a1b2', rate_limit_per_minute: 600 }, ['Ends in …a1b2', 'Limit: 600 requests a minute']],
  'token.revoked': [{ hint: 'a1b2' }, ['Ends in …a1b2']],
  'token.limit_changed': [{ from: 600, to: 1200 }, [/^Limit: 600 → 1.200 requests a minute$/]],
  'webhook.created': [
    { name: 'Billing', events: ['recovery.recovered', 'cancel.saved'] },
    ['Name: Billing', 'Events: Payment recovered; Cancellation saved'],
  ],
  'webhook.updated': [
    {
      name: { from: 'Billing', to: 'Billing 2' },
      url: { from: 'https://hooks.example/old', to: 'https://hooks.example/new' },
      events: { from: ['recovery.recovered', 'cancel.saved'], to: [] },
    },
    [
      'Name: Billing → Billing 2',
      'URL: https://hooks.example/old → https://hooks.example/new',
      'Events: Payment recovered; Cancellation saved → All events',
    ],
  ],
  'webhook.deleted': [{ name: 'Billing' }, ['Name: Billing']],
  'webhook.enabled': [{}, []],
  'webhook.disabled': [null, []],
  'webhook.secret_rolled': [
    { overlap_seconds: 86_400, ended_overlap_until: '2026-11-20T10:00:00.000Z' },
    ['Previous secret accepted for 1 day more', /^An earlier overlap, due to end Nov 20.*, ended early$/],
  ],
  'webhook.secret_overlap_ended': [
    { ended_overlap_until: '2026-11-20T10:00:00.000Z' },
    [/^Previous secret was to be accepted until Nov 20/],
  ],
  'webhook.deliveries_requeued': [
    { since: '2026-11-20T10:00:00.000Z', requeued: 3 },
    [/^Failed or skipped since Nov 20/, '3 deliveries sent again'],
  ],
  'team.invited': [{ role: 'admin' }, ['As Admin']],
  'team.invitation_revoked': [
    { reason: 'inviter_removed', invited_by: 'ann@acme.test' },
    ['The inviter was removed', 'Invited by: ann@acme.test'],
  ],
  'team.invitation_link_renewed': [{ role: 'member' }, ['As Member']],
  'team.joined': [{ role: 'member', invitation_id: 'b6f3c1d2-0000-4000-8000-000000000000' }, ['As Member']],
  'team.role_changed': [{ from: 'member', to: 'admin' }, ['Member → Admin']],
  'team.removed': [{ role: 'owner' }, ['Was Owner']],
  'account.password_changed': [{ other_sessions_ended: 1 }, ['1 other session ended']],
  'account.reset_link_created': [{ step: 'link_created' }, []],
  'account.reset_link_revoked': [
    { reason: 'creator_role_changed', created_by: 'ann@acme.test' },
    ["Its maker's role changed", 'Made by: ann@acme.test'],
  ],
  'account.password_reset': [
    { sessions_ended: 2, link_made_by: 'ann@example.com' },
    ['2 sessions ended', 'Link made by: ann@example.com'],
  ],
  'account.signed_out_everywhere': [{ sessions_ended: 1 }, ['1 session ended']],
  'account.session_revoked': [
    { session_id: '00000000-0000-4000-8000-000000000000', device: 'Firefox on Windows', ip_address: '203.0.113.9' },
    ['Device: Firefox on Windows', 'IP address: 203.0.113.9'],
  ],
  'workspace.updated': [
    { name: { from: 'Acme', to: 'Acme & Co' }, display_currency: { from: 'usd', to: 'eur' } },
    ['Name: Acme → Acme & Co', 'Display currency: USD → EUR'],
  ],
  'processor.connected': [
    {
      provider: 'stripe',
      status: 'pending',
      previous_status: null,
      webhook_secret_last4: 'wxyz',
      api_key_last4: '9876',
      api_key: 'given',
    },
    ['Waiting for the first event from Stripe', 'Signing secret whsec_…wxyz', 'New API key rk_…9876'],
  ],
  'processor.disconnected': [{ provider: 'stripe', reason: 'owner' }, []],
  'processor.key_rejected': [{ provider: 'stripe', api_key_last4: '9876' }, ['API key rk_…9876']],
  'processor.key_removed': [{ provider: 'stripe', api_key_last4: '9876' }, ['API key rk_…9876']],
  'processor.mode_switched': [
    { provider: 'stripe', from: 'test', to: 'live', api_key_last4: '9876' },
    ['Test mode → Live mode', 'New API key rk_…9876'],
  ],
  'processor.events_retried': [
    { provider: 'stripe', count: 2, event_ids: ['evt_1A', 'evt_2B'] },
    ['2 events retried', 'Events: evt_1A, evt_2B'],
  ],
  'campaign.marked_recovered': [{ recovered_via: 'manual' }, []],
  'campaign.marked_lost': [null, []],
};

describe('security log details in words', () => {
  it.each(SECURITY_ACTIONS.map((action) => [action, ...RECORDED[action]] as const))('%s', (action, details, words) => {
    const shown = securityDetailsText(action, details);
    expect(shown).toHaveLength(words.length);
    words.forEach((expected, index) =>
      typeof expected === 'string' ? expect(shown[index]).toBe(expected) : expect(shown[index]).toMatch(expected),
    );
  });

  it('the inbox\'s "connected by its first signed event" and a reconnection keeping its key', () => {
    expect(
      securityDetailsText('processor.connected', {
        provider: 'stripe',
        status: 'connected',
        proof: 'first signed event',
      }),
    ).toEqual(['Connected and syncing', 'Confirmed by its first signed event']);
    expect(
      securityDetailsText('processor.connected', {
        status: 'connected',
        previous_status: 'connected',
        api_key_last4: '9876',
        api_key: 'kept',
      }),
    ).toEqual(['Connected and syncing', 'Before: Connected and syncing', 'API key kept (rk_…9876)']);
  });

  it('a signing-secret rotation with both last fours, old → new', () => {
    expect(
      securityDetailsText('processor.connected', {
        status: 'connected',
        previous_status: 'connected',
        previous_webhook_secret_last4: 'abcd',
        webhook_secret_last4: 'wxyz',
      }),
    ).toEqual(['Connected and syncing', 'Before: Connected and syncing', 'Signing secret whsec_…abcd → whsec_…wxyz']);
    // A first connection has no secret before it; a record from before both were kept, the new one only.
    expect(
      securityDetailsText('processor.connected', { previous_webhook_secret_last4: null, webhook_secret_last4: 'wxyz' }),
    ).toEqual(['Signing secret whsec_…wxyz']);
  });

  it("names a Stripe connection's status as the Processor page does, and the workspace's flag in its own words", () => {
    // The same statuses, one table (processor-story.ts's STRIPE_STATUS_TEXT): the log cannot drift from the page.
    for (const status of ['pending', 'connected', 'disconnected'] as const) {
      expect(securityDetailsText('processor.connected', { status })).toEqual([STRIPE_STATUS_TEXT[status]]);
      expect(securityDetailsText('processor.connected', { previous_status: status })).toEqual([
        `Before: ${STRIPE_STATUS_TEXT[status]}`,
      ]);
    }
    // The workspace's flag says whether webhooks are sent, not that Stripe syncs (the CLI sets it with no Stripe).
    expect(securityDetailsText('workspace.updated', { processor: { from: 'connected', to: 'disconnected' } })).toEqual([
      'Processor: Connected → Disconnected',
    ]);
    expect(securityDetailsText('workspace.updated', { processor: { from: 'disconnected', to: 'connected' } })).toEqual([
      'Processor: Disconnected → Connected',
    ]);
  });

  it("names how a campaign was recovered in the campaign page's words (labels.ts), a manual one by the action alone", () => {
    for (const via of RECOVERED_VIA.filter((code) => code !== 'manual')) {
      expect(securityDetailsText('campaign.marked_recovered', { recovered_via: via })).toEqual([
        `Recovered via: ${RECOVERED_VIA_LABELS[via]}`,
      ]);
    }
    expect(securityDetailsText('campaign.marked_recovered', { recovered_via: 'customer_update' })).toEqual([
      'Recovered via: Card update',
    ]);
    expect(securityDetailsText('campaign.marked_recovered', { recovered_via: 'manual' })).toEqual([]);
    // A way a later server records: its code as words, never blank.
    expect(securityDetailsText('campaign.marked_recovered', { recovered_via: 'bank_transfer' })).toEqual([
      'Recovered via: Bank transfer',
    ]);
  });

  it('says nothing of sessions when a change ended none, and the count when it ended some', () => {
    // "0 other sessions ended" under a password change read as a count of nothing.
    expect(securityDetailsText('account.password_changed', { other_sessions_ended: 0 })).toEqual([]);
    expect(securityDetailsText('account.password_reset', { sessions_ended: 0 })).toEqual([]);
    expect(securityDetailsText('account.signed_out_everywhere', { sessions_ended: 0 })).toEqual([]);
    expect(securityDetailsText('account.password_changed', { other_sessions_ended: 3 })).toEqual([
      '3 other sessions ended',
    ]);
    expect(securityDetailsText('account.password_reset', { sessions_ended: 1 })).toEqual(['1 session ended']);
  });

  it("names a reset link's maker: the one on the Team page by address, the operator CLI's as the operator CLI", () => {
    expect(securityDetailsText('account.password_reset', { sessions_ended: 1, link_made_by: 'ann@acme.test' })).toEqual(
      ['1 session ended', 'Link made by: ann@acme.test'],
    );
    // `user reset-link` (migration 0036 records it), named as the log names the operator CLI as
    // an actor.
    expect(securityDetailsText('account.password_reset', { sessions_ended: 1, link_made_by: 'operator CLI' })).toEqual([
      '1 session ended',
      'Link made by: operator CLI',
    ]);
    // One its holder asked for (Forgot password): no maker.
    expect(securityDetailsText('account.password_reset', { sessions_ended: 1 })).toEqual(['1 session ended']);
  });

  it('parts an endpoint’s events by semicolons: a label may hold a comma', () => {
    expect(
      securityDetailsText('webhook.created', { name: 'CRM', events: ['recovery.opened', 'recovery.recovered'] }),
    ).toContain('Events: Payment failed, recovery started; Payment recovered');
  });

  it('says why a link went with no one asking, migration 0035 included', () => {
    expect(
      securityDetailsText('account.reset_link_revoked', { reason: 'former_role_rule', created_by: 'ann@acme.test' }),
    ).toEqual(['Its maker did not outrank every role the account has held', 'Made by: ann@acme.test']);
  });

  it('says a retry that found none (recorded before such retries stopped being logged) as none, not as a count of nothing', () => {
    expect(
      securityDetailsText('webhook.deliveries_requeued', { since: '2026-11-20T10:00:00.000Z', requeued: 0 }),
    ).toEqual([
      expect.stringMatching(/^No failed deliveries to send again \(none failed or was skipped since Nov 20.*\)$/),
    ]);
    expect(
      securityDetailsText('webhook.deliveries_requeued', { since: '2026-11-20T10:00:00.000Z', requeued: 1 }),
    ).toEqual([expect.stringMatching(/^Failed or skipped since Nov 20/), '1 delivery sent again']);
  });

  it("names an endpoint once: its name is not repeated when the target already says it, as an older entry's URL does not", () => {
    const named = { label: 'Billing (https://hooks.example/in)' };
    const events = ['recovery.recovered'];
    expect(securityDetailsText('webhook.created', { name: 'Billing', events }, named)).toEqual([
      'Events: Payment recovered',
    ]);
    expect(securityDetailsText('webhook.deleted', { name: 'Billing' }, named)).toEqual([]);
    // An entry written before endpoints were named in the target: its URL alone, the name below it.
    const byUrl = { label: 'https://hooks.example/in' };
    expect(securityDetailsText('webhook.created', { name: 'Billing', events }, byUrl)).toEqual([
      'Name: Billing',
      'Events: Payment recovered',
    ]);
    expect(securityDetailsText('webhook.deleted', { name: 'Billing' }, byUrl)).toEqual(['Name: Billing']);
    // A name that begins another endpoint's: still said.
    expect(securityDetailsText('webhook.deleted', { name: 'Bill' }, named)).toEqual(['Name: Bill']);
  });

  it('reads an endpoint edit recorded before from/to (its new values alone) as it did', () => {
    expect(
      securityDetailsText('webhook.updated', {
        name: 'Billing 2',
        url: 'https://hooks.example/new',
        events: ['recovery.recovered'],
      }),
    ).toEqual(['New name: Billing 2', 'New URL: https://hooks.example/new', 'New events: Payment recovered']);
    expect(securityDetailsText('webhook.updated', { events: [] })).toEqual(['New events: All events']);
    // One field changed: that field alone; a list of events before it was "all".
    expect(securityDetailsText('webhook.updated', { events: { from: [], to: ['recovery.lost'] } })).toEqual([
      'Events: All events → Payment lost',
    ]);
  });

  it('shows a detail it does not know as "Key: value", whatever its shape, and never one named as a secret', () => {
    expect(
      securityDetailsText('webhook.updated', {
        retries: 3,
        flags: ['a', 'b'],
        limits: { from: 1, to: 2 },
        nested: { deep: { deeper: { deepest: { gone: 1 } } } },
        secret: 'whsec_shouldnotshow',
        api_key: 'rk_live_shouldnotshow',
        token_hint: 'abcd',
        odd: null,
      }),
    ).toEqual([
      'Retries: 3',
      'Flags: a, b',
      'Limits: 1 → 2',
      'Nested: Deep: Deeper: Deepest: …',
      'Token hint: abcd',
      'Odd: —',
    ]);
    // An action it does not know: every detail that way; a shape it does not expect: no crash.
    expect(securityDetailsText('future.thing', { what: '<b>bold</b>' })).toEqual(['What: <b>bold</b>']);
    expect(securityDetailsText('team.role_changed', { from: { odd: true }, to: 7 })).toEqual(['Odd: yes → 7']);
    expect(securityDetailsText('workspace.updated', { name: 'just a string' })).toEqual(['Name: just a string']);
    expect(securityDetailsText('token.created', 'not an object')).toEqual([]);
    expect(securityDetailsText('token.created', [1, 2])).toEqual([]);
    expect(securityDetailsText('team.invited', { role: 'auditor' })).toEqual(['As auditor']);
    expect(securityDetailsText('webhook.created', { name: 'x'.repeat(500) })[0]).toHaveLength(200 + 'Name: '.length);
  });
});
