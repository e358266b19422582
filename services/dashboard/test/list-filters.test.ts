import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page, Request, Route } from 'playwright-core';
import { hashPassword, loadFixtures, recordSecurityEvent } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage, screenshot } from './support/page-checks.js';

/**
 * A list's filters when they are why it shows no rows (docs/dashboard-ui.md, "A filter value a
 * list does not have" and "Clear filters"), on Campaigns, Customers, Cancel sessions, an
 * endpoint's delivery log and the Security log, in a real headless Chromium against the real API:
 * an address asking for a value the list does not have says which, as text, with Clear filters
 * and nothing asked; a value the server refuses reads the same; a failure that may pass keeps Try
 * again; filters that match nothing offer Clear filters, one of that name in view, the focus on the
 * first filter after; the Security log's Action names the actions a link chose.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@filters.test';
let context: BrowserContext;
let page: Page;
let hookId = '';
let quietId = '';
let memberId = '';

/** One delivery of `type` to the endpoint, with one attempt of `outcome`, nothing left to send. */
async function delivery(workspaceId: string, endpointId: string, type: string, outcome: 'succeeded' | 'failed') {
  const { db } = world.current;
  const [event] = await db('events').insert({ workspace_id: workspaceId, type, data: { hello: 'world' } }, [
    'id',
    'seq',
  ]);
  await db('event_outbox').where({ event_id: event.id }).delete();
  const [made] = await db('webhook_deliveries').insert(
    {
      workspace_id: workspaceId,
      endpoint_id: endpointId,
      event_id: event.id,
      event_seq: event.seq,
      event_type: type,
      status: outcome,
      attempt_count: 1,
    },
    ['id'],
  );
  await db('webhook_attempts').insert({
    delivery_id: made.id,
    endpoint_id: endpointId,
    event_type: type,
    attempt: 1,
    outcome,
    http_status: outcome === 'succeeded' ? 200 : 503,
    error: outcome === 'succeeded' ? null : 'HTTP 503',
    duration_ms: 12,
    attempted_at: new Date(),
    url: 'https://crm.filters.test/hook',
  });
}

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'filters',
        name: 'Filters',
        processor: 'connected',
        users: [
          { key: 'owner', email: EMAIL, role: 'owner' },
          { key: 'member', email: 'member@filters.test', role: 'member' },
        ],
        customers: [
          { key: 'c1', email: 'ann@filters-customers.test', tags: ['vip'], subscriptions: [{ key: 's1' }] },
          { key: 'c2', email: 'bob@filters-customers.test', subscriptions: [{ key: 's2' }] },
        ],
        campaigns: [
          { customer: 'c1', status: 'in_flight' },
          { customer: 'c2', status: 'lost' },
        ],
        cancel_sessions: [
          { customer: 'c1', outcome: 'canceled', reason_code: 'too_expensive' },
          { customer: 'c2', outcome: 'saved_discount', reason_code: 'too_expensive' },
        ],
        webhooks: [
          { key: 'hook', name: 'Filters CRM', url: 'https://crm.filters.test/hook' },
          { key: 'quiet', name: 'Quiet CRM', url: 'https://quiet.filters.test/hook' },
        ],
      },
    ],
  });
  const ids = loaded.workspaces.filters!;
  hookId = ids.webhooks.hook!.id;
  quietId = ids.webhooks.quiet!.id;
  memberId = ids.users.member!;
  const ownerId = ids.users.owner!;
  await delivery(ids.id, hookId, 'recovery.opened', 'failed');
  await delivery(ids.id, hookId, 'recovery.recovered', 'succeeded');
  const byOwner = { type: 'user' as const, user_id: ownerId, label: EMAIL };
  for (const action of ['token.created', 'token.revoked', 'team.role_changed', 'account.password_changed'] as const) {
    await recordSecurityEvent(db, { workspace_id: ids.id, action, actor: byOwner });
  }
  await db('users')
    .where({ id: ownerId })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Olive Owner' });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/** Opens a dashboard address and waits for its page's heading. */
async function open(route: string, heading: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** The note that says an address's unknown filter values. */
const unknownNote = () => page.getByRole('alert').filter({ hasText: 'The address asks for' });

/** Its sentences, one a line, once it is there. */
async function sentences(): Promise<string[]> {
  await unknownNote().waitFor();
  return unknownNote().locator('p').allTextContents();
}

/** Whether the locator's element has the focus now. */
const hasFocus = (locator: Locator) => locator.evaluate((element) => element === element.ownerDocument.activeElement);

/** The text of what the element's `aria-describedby` names. */
const description = (locator: Locator) =>
  locator.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '')
      .join(' '),
  );

/** The text of a select's chosen option. */
const chosenText = (select: Locator) =>
  select.evaluate(
    (element) =>
      (element as unknown as { selectedOptions: ArrayLike<{ textContent: string }> }).selectedOptions[0]?.textContent,
  );

/** Every request to the dashboard API's `path` (and under it) from now on, as the page made them. */
function requestsTo(path: string): { urls: string[]; stop: () => void } {
  const urls: string[] = [];
  const seen = (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname === `/dashboard/api${path}`) urls.push(url.search);
  };
  page.on('request', seen);
  return { urls, stop: () => page.off('request', seen) };
}

const clearFilters = () => page.getByRole('button', { name: 'Clear filters' });

interface ListCase {
  route: string;
  heading: string;
  /** The list's API path, which must not be asked while the address asks for an unknown value. */
  api: string;
  says: string[];
  /** The field of the first unknown value, by its label. */
  field: string;
  value: string;
  /** The first filter of the row, where Clear filters puts the focus. */
  first: () => Locator;
  /** The list, once cleared and read. */
  filled: () => Locator;
}

const LISTS: ListCase[] = [
  {
    route: '/campaigns?status=bogus&decline_category=soft',
    heading: 'Campaigns',
    api: '/campaigns',
    says: ['The address asks for status “bogus”, which this list does not have.'],
    field: 'Status',
    value: 'bogus',
    first: () => page.getByRole('searchbox', { name: 'Search by invoice id, customer email or name' }),
    filled: () => page.getByRole('table', { name: 'Recovery campaigns' }),
  },
  {
    route: '/cancel-sessions?outcome=nope&reason_code=too_expensive',
    heading: 'Cancel sessions',
    api: '/cancel_sessions',
    says: ['The address asks for outcome “nope”, which this list does not have.'],
    field: 'Outcome',
    value: 'nope',
    first: () => page.getByRole('searchbox', { name: 'Search by customer email or name' }),
    filled: () => page.getByRole('table', { name: 'Cancel sessions' }),
  },
  {
    // One action of the list unknown: it alone is named, not the 31 the log has.
    route: '/settings/security-log?action=token.created,nope',
    heading: 'Security log',
    api: '/security-log',
    says: ['The address asks for action “nope”, which this log does not have.'],
    field: 'Action',
    value: 'token.created,nope',
    first: () => page.getByRole('combobox', { name: 'Action' }),
    filled: () => page.getByRole('table', { name: 'Security log' }),
  },
  {
    route: '/settings/webhooks/HOOK?log_outcome=failed&log_event_type=recovery.nope',
    heading: 'Filters CRM',
    api: '/webhooks/HOOK/deliveries',
    says: ['The address asks for event type “recovery.nope”, which this log does not have.'],
    field: 'Event type',
    value: 'recovery.nope',
    first: () => page.getByRole('combobox', { name: 'Outcome' }),
    filled: () => page.getByRole('list', { name: 'Deliveries, newest first' }),
  },
];

describe("an address's filter value a list does not have", () => {
  it.each(LISTS.map((list) => [list.heading, list] as const))(
    '%s: says which, asks nothing, and Clear filters loads the list with the focus on the first filter',
    async (_heading, list) => {
      const asked = requestsTo(list.api.replace('HOOK', hookId));
      try {
        await open(list.route.replace('HOOK', hookId), list.heading);
        expect(await sentences()).toEqual(list.says);
        // The field reads the value asked for, not "All", and is tied to the sentence.
        const field = page.getByRole('combobox', { name: list.field });
        expect(await field.inputValue()).toBe(list.value);
        expect(await chosenText(field)).toBe(`“${list.value}” (unknown)`);
        expect(await field.getAttribute('aria-invalid')).toBe('true');
        expect(await description(field)).toContain(list.says[0]);
        // Nothing that cannot work: no Try again, no raw refusal; the list was never asked.
        await expect(page.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
        await expect(clearFilters().count()).resolves.toBe(1);
        expect(asked.urls).toEqual([]);

        await clearFilters().click();
        await list.filled().waitFor();
        expect(new URL(page.url()).search).toBe('');
        await expect(hasFocus(list.first())).resolves.toBe(true);
        await expect(unknownNote().count()).resolves.toBe(0);
        expect(asked.urls).toEqual(['']);
      } finally {
        asked.stop();
      }
    },
  );

  it('shows markup and long values as text, names a day that is not one, and fits a phone', async () => {
    const long = 'x'.repeat(500);
    await open(`/campaigns?decline_category=<b>bold</b>&from=2026-02-30&status=${long}`, 'Campaigns');
    expect(await sentences()).toEqual([
      `The address asks for status “${'x'.repeat(59)}…”, which this list does not have.`,
      'The address asks for decline category “<b>bold</b>”, which this list does not have.',
      'The address asks for the start day “2026-02-30”, which is not a date like 2026-11-24.',
    ]);
    await expect(unknownNote().locator('b').count()).resolves.toBe(0);
    const from = page.getByLabel('First failed from');
    expect(await from.getAttribute('aria-invalid')).toBe('true');
    expect(await description(from)).toContain('“2026-02-30”');
    // Nothing to export either: the export would be refused the same way.
    await expect(page.getByRole('button', { name: 'Export CSV' }).isDisabled()).resolves.toBe(true);
    expect(await checkPage(page, 'campaigns-unknown-filters')).toEqual([]);
  });

  it('says someone who is not on the team by the id the address gives', async () => {
    const stranger = randomUUID();
    await open(`/settings/security-log?actor=${stranger}`, 'Security log');
    expect(await sentences()).toEqual([
      `The address asks for changes by “${stranger}”, who is not on this workspace's team.`,
    ]);
    expect(await chosenText(page.getByRole('combobox', { name: 'Who' }))).toBe('Someone not on the team');
  });
});

describe('a parameter a list does not take, or one given twice (docs/dashboard-ui.md)', () => {
  const addressNote = () => page.getByRole('alert').filter({ hasText: 'The address' });
  const notTaken = (name: string) =>
    `The address asks for “${name}”, which is not one of this list's filters, so the list is not filtered by it.`;

  it.each([
    ['Campaigns', '/campaigns?first_failed_from=2026-01-01', 'first_failed_from', 'Recovery campaigns', 2],
    ['Customers', '/customers?email=ann%40filters-customers.test', 'email', 'Customers', 2],
    ['Cancel sessions', '/cancel-sessions?reason=bogus', 'reason', 'Cancel sessions', 2],
  ] as const)(
    '%s: names an unknown parameter, shows the list it is not filtered by, and Clear filters drops it',
    async (heading, route, name, table, rows) => {
      await open(route, heading);
      await addressNote().waitFor();
      await expect(addressNote().locator('p').allTextContents()).resolves.toEqual([notTaken(name)]);
      // The list is shown, as the sentence says: every row, the parameter taken for nothing.
      const body = page.getByRole('table', { name: table }).locator('tbody tr');
      await body.first().waitFor();
      await expect(body.count()).resolves.toBe(rows);
      await expect(clearFilters().count()).resolves.toBe(1);
      await clearFilters().click();
      await addressNote().waitFor({ state: 'detached' });
      expect(new URL(page.url()).search).toBe('');
    },
  );

  it('says a filter given twice, uses the first, and marks its field', async () => {
    await open('/campaigns?status=lost&status=in_flight', 'Campaigns');
    await addressNote().waitFor();
    const said =
      'The address gives status more than once (“lost” and “in_flight”), so only the first, “lost”, is used.';
    await expect(addressNote().locator('p').allTextContents()).resolves.toEqual([said]);
    const status = page.getByRole('combobox', { name: 'Status' });
    expect(await status.inputValue()).toBe('lost');
    expect(await status.getAttribute('aria-invalid')).toBe('true');
    expect(await description(status)).toContain(said);
    const body = page.getByRole('table', { name: 'Recovery campaigns' }).locator('tbody tr');
    await body.first().waitFor();
    await expect(body.count()).resolves.toBe(1);
    // Picking a status gives it once: the note goes, the other filters stay.
    await status.selectOption('in_flight');
    await addressNote().waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.getAll('status')).toEqual(['in_flight']);

    await open('/cancel-sessions?outcome=canceled&outcome=saved_discount&reason_code=unused&nope=1', 'Cancel sessions');
    await addressNote().waitFor();
    await expect(addressNote().locator('p').allTextContents()).resolves.toEqual([
      'The address gives outcome more than once (“canceled” and “saved_discount”), so only the first, “canceled”, is used.',
      notTaken('nope'),
    ]);
    // Nothing matches (no session was left for "unused"): one Clear filters, the note's.
    await page.getByText('No cancel sessions match.').waitFor();
    await expect(clearFilters().count()).resolves.toBe(1);
  });

  it.each([
    ['Campaigns', '/campaigns?q=ann%40filters-customers.test&status=in_flight&tz=UTC'],
    ['Campaigns', '/campaigns?from=2020-01-01&to=2099-01-01&tz=Pacific%2FAuckland'],
    ['Customers', '/customers?q=filters-customers&tag=vip'],
    ['Cancel sessions', '/cancel-sessions?outcome=canceled&reason_code=too_expensive'],
  ] as const)('%s: the parameters the app itself puts in the address pass silently (%s)', async (heading, route) => {
    await open(route, heading);
    await page.locator('table.list tbody tr').first().waitFor();
    await expect(addressNote().count()).resolves.toBe(0);
  });
});

describe('a filter value the server refuses', () => {
  it('is said as the page says one it knows of, never as the raw refusal nor with Try again', async () => {
    // Free text the page does not check: a tag with a control character.
    const refused = page.waitForResponse((response) => response.url().includes('/dashboard/api/customers?'));
    await open('/customers?tag=%01vip', 'Customers');
    expect((await refused).status()).toBe(400);
    expect(await sentences()).toEqual([
      'The address asks for the tag “\u0001vip”, which this list does not take (must not contain control characters).',
    ]);
    await expect(page.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
    await clearFilters().click();
    await page.getByRole('table', { name: 'Customers' }).waitFor();
    expect(new URL(page.url()).search).toBe('');

    // Someone not on the team, asked for before the team is read: the server refuses them, and
    // the page says it in the same words as once it knows the team.
    let releaseTeam = () => {};
    const teamHeld = new Promise<void>((resolve) => (releaseTeam = resolve));
    const holdTeam = async (route: Route) => {
      await teamHeld;
      // A request the page gave up meanwhile (it went on to another page) is handled already.
      await route.continue().catch(() => undefined);
    };
    await page.route('**/dashboard/api/team', holdTeam);
    try {
      const stranger = randomUUID();
      const refusedLog = page.waitForResponse((response) => response.url().includes('/dashboard/api/security-log?'));
      await open(`/settings/security-log?actor=${stranger}`, 'Security log');
      expect((await refusedLog).status()).toBe(400);
      expect(await sentences()).toEqual([
        `The address asks for changes by “${stranger}”, who is not on this workspace's team.`,
      ]);
      await expect(page.getByText('must be the id of a person').count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: 'Try again' }).count()).resolves.toBe(0);
    } finally {
      releaseTeam();
      await page.unroute('**/dashboard/api/team', holdTeam);
    }
  });
});

describe('a failure that may pass', () => {
  it('keeps Try again, filters or not, and Try again then reads the list', async () => {
    let failing = true;
    const fail = async (route: Route) => {
      if (!failing) return route.continue();
      return route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ error: { type: 'database_error', message: 'The database is not answering.' } }),
      });
    };
    await page.route('**/dashboard/api/campaigns?*', fail);
    try {
      await open('/campaigns?status=lost', 'Campaigns');
      await page.getByRole('alert').filter({ hasText: 'The database is not answering.' }).waitFor();
      await expect(clearFilters().count()).resolves.toBe(0);
      failing = false;
      await page.getByRole('button', { name: 'Try again' }).click();
      await page.getByRole('table', { name: 'Recovery campaigns' }).waitFor();
    } finally {
      await page.unroute('**/dashboard/api/campaigns?*', fail);
    }

    // A lost connection alike, on a log.
    const abort = (route: Route) => route.abort('connectionrefused');
    await page.route('**/dashboard/api/webhooks/*/deliveries*', abort);
    await open(`/settings/webhooks/${hookId}?log_outcome=failed`, 'Filters CRM');
    await page.getByRole('alert').filter({ hasText: 'The server could not be reached.' }).waitFor();
    await expect(clearFilters().count()).resolves.toBe(0);
    await page.unroute('**/dashboard/api/webhooks/*/deliveries*', abort);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('list', { name: 'Deliveries, newest first' }).waitFor();
  });
});

describe('filters that match nothing', () => {
  const EMPTY = [
    {
      route: '/campaigns?status=abandoned',
      heading: 'Campaigns',
      says: 'No campaigns match these filters.',
      first: () => page.getByRole('searchbox', { name: 'Search by invoice id, customer email or name' }),
      filled: () => page.getByRole('table', { name: 'Recovery campaigns' }),
    },
    {
      route: '/cancel-sessions?outcome=saved_pause',
      heading: 'Cancel sessions',
      says: 'No cancel sessions match.',
      first: () => page.getByRole('searchbox', { name: 'Search by customer email or name' }),
      filled: () => page.getByRole('table', { name: 'Cancel sessions' }),
    },
    {
      route: '/customers?tag=nobody',
      heading: 'Customers',
      says: 'No customers match.',
      first: () => page.getByRole('searchbox', { name: 'Search by email or name' }),
      filled: () => page.getByRole('table', { name: 'Customers' }),
    },
    {
      route: '/settings/webhooks/HOOK?log_outcome=skipped',
      heading: 'Filters CRM',
      says: 'No deliveries match these filters.',
      first: () => page.getByRole('combobox', { name: 'Outcome' }),
      filled: () => page.getByRole('list', { name: 'Deliveries, newest first' }),
    },
  ];

  it.each(EMPTY.map((list) => [list.heading, list] as const))(
    '%s: offers Clear filters beside its sentence, which from the keyboard loads the list, the focus on the first filter',
    async (_heading, list) => {
      await open(list.route.replace('HOOK', hookId), list.heading);
      const nothing = page.getByRole('paragraph').filter({ hasText: list.says });
      await nothing.waitFor();
      await expect(clearFilters().count()).resolves.toBe(1);
      await nothing.getByRole('button', { name: 'Clear filters' }).focus();
      await page.keyboard.press('Enter');
      await list.filled().waitFor();
      expect(new URL(page.url()).search).toBe('');
      await expect(hasFocus(list.first())).resolves.toBe(true);
      await expect(clearFilters().count()).resolves.toBe(0);
    },
  );

  it('keeps an empty list without filters as it was: its sentence and no Clear filters', async () => {
    await open(`/settings/webhooks/${quietId}`, 'Quiet CRM');
    await page.getByText('No deliveries yet.', { exact: true }).waitFor();
    await expect(clearFilters().count()).resolves.toBe(0);
  });

  it('shows one Clear filters on the Security log: the filter row’s gives way to the one beside the sentence', async () => {
    const search = () => page.getByRole('search', { name: 'Filter the security log' });
    // Entries shown: the row's own.
    await open('/settings/security-log?action=token.created', 'Security log');
    await page.getByRole('table', { name: 'Security log' }).waitFor();
    await expect(clearFilters().count()).resolves.toBe(1);
    await expect(search().getByRole('button', { name: 'Clear filters' }).count()).resolves.toBe(1);

    // None match: the one beside "No entries match these filters." alone.
    await open(`/settings/security-log?action=token.revoked&actor=${memberId}`, 'Security log');
    const nothing = page.getByRole('status').filter({ hasText: 'No entries match these filters.' });
    await nothing.waitFor();
    await expect(clearFilters().count()).resolves.toBe(1);
    await expect(nothing.getByRole('button', { name: 'Clear filters' }).count()).resolves.toBe(1);

    // A value the log does not have: the note's alone.
    await open('/settings/security-log?action=nope&from=2026-11-01', 'Security log');
    await unknownNote().waitFor();
    await expect(clearFilters().count()).resolves.toBe(1);
    await expect(unknownNote().getByRole('button', { name: 'Clear filters' }).count()).resolves.toBe(1);
    await screenshot(page, 'security-log-unknown-action');
  });

  it('keeps one Clear filters on the Security log as the filters change on the page, and for days that hold none', async () => {
    const search = () => page.getByRole('search', { name: 'Filter the security log' });
    const who = () => search().getByRole('combobox', { name: 'Who' });
    const nothing = () => page.getByRole('status').filter({ hasText: 'No entries match these filters.' });
    /** Where the one Clear filters in view is: the filter row, or beside the sentence. */
    const where = async () => ({
      all: await clearFilters().count(),
      row: await search().getByRole('button', { name: 'Clear filters' }).count(),
      sentence: await nothing().getByRole('button', { name: 'Clear filters' }).count(),
    });
    await open('/settings/security-log?action=token.revoked', 'Security log');
    await page.getByRole('table', { name: 'Security log' }).waitFor();
    expect(await where()).toEqual({ all: 1, row: 1, sentence: 0 });

    // Someone who made none of them, chosen on the page: the sentence's alone, the row's gone.
    await who().selectOption({ label: 'member@filters.test' });
    await nothing().waitFor();
    expect(await where()).toEqual({ all: 1, row: 0, sentence: 1 });

    // Back to everyone, on the page: entries again, and the row's back.
    await who().selectOption({ label: 'Anyone' });
    await page.getByRole('table', { name: 'Security log' }).waitFor();
    expect(await where()).toEqual({ all: 1, row: 1, sentence: 0 });

    // Days that hold none: said under them, nothing asked, no log; the row's alone.
    await open('/settings/security-log?from=2026-11-02&to=2026-11-01', 'Security log');
    await search().getByRole('alert').filter({ hasText: 'The start day is after the end day' }).waitFor();
    await expect(page.getByRole('table', { name: 'Security log' }).count()).resolves.toBe(0);
    expect(await where()).toEqual({ all: 1, row: 1, sentence: 0 });
    await clearFilters().click();
    await page.getByRole('table', { name: 'Security log' }).waitFor();
    await expect(clearFilters().count()).resolves.toBe(0);
  });
});

describe('between Clear filters and the whole list', () => {
  /**
   * Records in the page whether any of `sentences` was rendered from now on, and whether the
   * loading state was, as the page's own MutationObserver sees them (a sentence on screen for one
   * render is a record): every node added and every text changed, and a sentence's own element
   * changed (its Clear filters dropped, the sentence left in place).
   */
  const watchFor = (sentences: string[]) =>
    page.evaluate(`(() => {
      const sentences = ${JSON.stringify(sentences)};
      const seen = (window.__rendered = { sentences: [], loading: false });
      new MutationObserver((records) => {
        for (const record of records) {
          const changed = (record.target.textContent ?? '').trim();
          const added = [...record.addedNodes].map((node) => node.textContent ?? '');
          for (const text of record.type === 'characterData' ? [...added, changed] : added) {
            for (const sentence of sentences) {
              if (text.includes(sentence) && !seen.sentences.includes(sentence)) seen.sentences.push(sentence);
            }
            if (text.includes('Loading…')) seen.loading = true;
          }
          for (const sentence of sentences) {
            if (changed.startsWith(sentence) && !seen.sentences.includes(sentence)) seen.sentences.push(sentence);
          }
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
  const rendered = () => page.evaluate<{ sentences: string[]; loading: boolean }>('window.__rendered');

  /** A list matching nothing, its "nothing" sentences (filtered and not), and its list once read. */
  const CASES = [
    {
      route: '/settings/webhooks/HOOK?log_outcome=skipped',
      heading: 'Filters CRM',
      api: '/webhooks/HOOK/deliveries',
      sentences: ['No deliveries match these filters.', 'No deliveries yet.'],
      filled: () => page.getByRole('list', { name: 'Deliveries, newest first' }),
    },
    {
      route: '/settings/security-log?action=token.revoked&actor=MEMBER',
      heading: 'Security log',
      api: '/security-log',
      sentences: ['No entries match these filters.', 'Nothing recorded yet.'],
      filled: () => page.getByRole('table', { name: 'Security log' }),
    },
    {
      route: '/campaigns?status=abandoned',
      heading: 'Campaigns',
      api: '/campaigns',
      sentences: ['No campaigns match these filters.'],
      filled: () => page.getByRole('table', { name: 'Recovery campaigns' }),
    },
    {
      route: '/customers?tag=nobody',
      heading: 'Customers',
      api: '/customers',
      sentences: ['No customers match.'],
      filled: () => page.getByRole('table', { name: 'Customers' }),
    },
    {
      route: '/cancel-sessions?outcome=saved_pause',
      heading: 'Cancel sessions',
      api: '/cancel_sessions',
      sentences: ['No cancel sessions match.'],
      filled: () => page.getByRole('table', { name: 'Cancel sessions' }),
    },
  ];

  it.each(CASES.map((list) => [list.heading, list] as const))(
    '%s: shows it loading, never a "nothing" sentence, while the unfiltered rows are on their way',
    async (_heading, list) => {
      const api = `/dashboard/api${list.api.replace('HOOK', hookId)}`;
      await open(list.route.replace('HOOK', hookId).replace('MEMBER', memberId), list.heading);
      const nothing = page.getByRole('paragraph').filter({ hasText: list.sentences[0] });
      await nothing.waitFor();
      // The whole list's first page, held back for a second and a half: the server still answers
      // it, later than a fast machine would.
      const unfiltered = (url: URL) => url.pathname === api && url.search === '';
      const slow = async (route: Route) => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await route.continue().catch(() => undefined);
      };
      await page.route(unfiltered, slow);
      try {
        await watchFor(list.sentences);
        await nothing.getByRole('button', { name: 'Clear filters' }).click();
        await list.filled().waitFor();
        expect(new URL(page.url()).search).toBe('');
        await expect(rendered()).resolves.toEqual({ sentences: [], loading: true });
      } finally {
        await page.unroute(unfiltered, slow);
      }
    },
  );
});

describe('how many rows match (docs/dashboard-ui.md, "How many match")', () => {
  /** The line above a list that says how many rows its filters match, once it is shown. */
  async function countOf(table: string): Promise<string> {
    const region = page.getByRole('region', { name: table });
    await region.waitFor();
    const line = page.locator('.list-count');
    await line.waitFor();
    const said = (await line.textContent()) ?? '';
    // The list's description, for a screen reader on the table.
    await expect(description(region)).resolves.toBe(said);
    return said;
  }

  it('says the count of the filters next to each list, one and many', async () => {
    await open('/campaigns', 'Campaigns');
    await expect(countOf('Recovery campaigns')).resolves.toBe('2 campaigns');
    await page.getByRole('combobox', { name: 'Status' }).selectOption('lost');
    await eventuallyText(() => countOf('Recovery campaigns'), '1 campaign');
    await open('/customers?tag=vip', 'Customers');
    await expect(countOf('Customers')).resolves.toBe('1 customer');
    await open('/cancel-sessions', 'Cancel sessions');
    await expect(countOf('Cancel sessions')).resolves.toBe('2 cancel sessions');
  });

  it('says "More than 1,000" past 1,000, and keeps it through Load more without asking again', async () => {
    const { db } = world.current;
    const [customer] = await db('customers').where({ email: 'ann@filters-customers.test' }).select('*');
    const [subscription] = await db('subscriptions').where({ customer_id: customer.id }).select('id');
    await db.raw(
      `INSERT INTO recovery_campaigns (workspace_id, customer_id, subscription_id, psp_invoice_id, amount_cents,
                                       currency, status, decline_code, decline_category, first_failed_at, closed_at)
       SELECT ?, ?, ?, 'in_counted_' || g, 100, 'usd', 'abandoned', 'generic_decline', 'unknown',
              timestamptz '2025-01-01T00:00:00Z' + g * interval '1 second', timestamptz '2025-02-01T00:00:00Z'
         FROM generate_series(1, 1001) AS g`,
      [customer.workspace_id, customer.id, subscription.id],
    );
    const asked = requestsTo('/campaigns');
    try {
      await open('/campaigns?status=abandoned', 'Campaigns');
      await expect(countOf('Recovery campaigns')).resolves.toBe('More than 1,000 campaigns');
      await page.getByRole('button', { name: 'Load more' }).click();
      await eventuallyText(async () => String(await page.locator('table.list tbody tr').count()), '100');
      await expect(countOf('Recovery campaigns')).resolves.toBe('More than 1,000 campaigns');
      // One first page, then Load more's: the count is the first page's, not asked again.
      expect(asked.urls).toHaveLength(2);
      expect(asked.urls[1]).toContain('cursor=');
    } finally {
      asked.stop();
      await db('recovery_campaigns').where('psp_invoice_id', 'like', 'in_counted_%').delete();
    }
  });
});

/** Waits until `read` gives `expected`, then says what it gave. */
async function eventuallyText(read: () => Promise<string>, expected: string): Promise<void> {
  let last = '';
  for (let tries = 0; tries < 50 && last !== expected; tries += 1) {
    last = await read().catch(() => '');
    if (last !== expected) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(last).toBe(expected);
}

describe("the Security log's chosen actions", () => {
  const action = () => page.getByRole('combobox', { name: 'Action' });

  it('are named in the Action select where they fit, and as a count of more with the whole list under it', async () => {
    await open('/settings/security-log?action=token.revoked,token.created', 'Security log');
    await page.getByRole('table', { name: 'Security log' }).waitFor();
    expect(await chosenText(action())).toBe('API token created, API token revoked');
    expect(await action().getAttribute('aria-describedby')).toBeNull();
    // Whole in the closed select at 1280 px: the text no wider than the select's room for it.
    const room = await action().evaluate((select) => {
      const style = select.ownerDocument.defaultView!.getComputedStyle(select);
      const canvas = select.ownerDocument.createElement('canvas').getContext('2d')!;
      canvas.font = style.font;
      const text = (select as unknown as { selectedOptions: ArrayLike<{ textContent: string }> }).selectedOptions[0]!
        .textContent;
      return (
        select.clientWidth -
        parseFloat(style.paddingLeft) -
        parseFloat(style.paddingRight) -
        canvas.measureText(text).width
      );
    });
    expect(room).toBeGreaterThan(16);

    await open(
      '/settings/security-log?action=account.password_changed,token.created,team.role_changed',
      'Security log',
    );
    await page.getByRole('table', { name: 'Security log' }).waitFor();
    expect(await chosenText(action())).toBe('API token created and 2 more');
    const whole = 'Chosen actions: API token created, Role changed, Password changed.';
    expect(await description(action())).toBe(whole);
    await page.getByText(whole, { exact: true }).waitFor();
    await screenshot(page, 'security-log-chosen-actions');
    // The address keeps the API's codes as they were given.
    expect(decodeURIComponent(new URL(page.url()).search)).toBe(
      '?action=account.password_changed,token.created,team.role_changed',
    );
    const shown = await page
      .getByRole('table', { name: 'Security log' })
      .getByRole('cell')
      .locator('code')
      .allTextContents();
    expect(shown.sort()).toEqual(['account.password_changed', 'team.role_changed', 'token.created']);
  });
});

describe('the Cancel sessions list\'s search and days (docs/dashboard-ui.md, "Cancel sessions")', () => {
  it('narrows the list to a customer typed in the search box, then to the days picked, and exports just those', async () => {
    const { db } = world.current;
    const [ann] = await db('customers').where({ email: 'ann@filters-customers.test' }).select('workspace_id');
    const [cy] = await db('customers')
      .insert({
        workspace_id: ann.workspace_id,
        psp_customer_id: 'cus_cy_sessions',
        email: 'cy@filters-customers.test',
        name: 'Cyrus Sessions',
      })
      .returning<Array<{ id: string }>>('id');
    // Noon UTC: the same day in the viewer's zone, whichever this browser has.
    for (const day of ['2026-03-02', '2026-03-05', '2026-03-09']) {
      await db('cancel_sessions').insert({
        workspace_id: ann.workspace_id,
        customer_id: cy!.id,
        outcome: 'canceled',
        reason_code: 'unused',
        monthly_mrr_cents: 1000,
        currency: 'usd',
        created_at: new Date(`${day}T12:00:00Z`),
        ended_at: new Date(`${day}T12:00:00Z`),
      });
    }
    const rows = () => page.getByRole('table', { name: 'Cancel sessions' }).locator('tbody tr');
    const shown = async () => {
      const texts = await rows().allTextContents();
      return `${texts.length}: ${texts.filter((text) => text.includes('cy@filters-customers.test')).length}`;
    };
    try {
      await open('/cancel-sessions', 'Cancel sessions');
      await eventuallyText(shown, '5: 3');
      const box = page.getByRole('searchbox', { name: 'Search by customer email or name' });
      await box.fill('cyrus sess');
      await page.getByRole('button', { name: 'Search cancel sessions' }).click();
      // Cy's three sessions only.
      await eventuallyText(shown, '3: 3');
      await page.getByLabel('Started from').fill('2026-03-03');
      await page.getByLabel('Started before').fill('2026-03-09');
      await eventuallyText(shown, '1: 1');
      // The address keeps the search, the days picked and their zone, as Campaigns' does.
      const params = new URL(page.url()).searchParams;
      expect([params.get('q'), params.get('from'), params.get('to'), params.get('tz')]).toEqual([
        'cyrus sess',
        '2026-03-03',
        '2026-03-09',
        expect.any(String),
      ]);
      // The export asks for the same rows, named after them.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Export CSV' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('cancel-sessions-search-cyrus-sess-2026-03-03-to-2026-03-09.csv');
      const lines = (await readFile(await download.path(), 'utf8')).trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toContain(',cy@filters-customers.test,');
      expect(lines[1]).toContain(',2026-03-05T12:00:00.000Z,');
      // A search under 3 characters is not applied: said at the box, the list stays as it was.
      await box.fill('cy');
      await page.keyboard.press('Enter');
      await page.getByRole('alert').filter({ hasText: 'Type at least 3 characters to search.' }).waitFor();
      expect(new URL(page.url()).searchParams.get('q')).toBe('cyrus sess');
      await expect(page.getByRole('table', { name: 'Cancel sessions' }).getByRole('row').count()).resolves.toBe(2);
    } finally {
      await db('customers').where({ id: cy!.id }).delete();
    }
  });
});
