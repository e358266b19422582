import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, inZonedPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { lineTexts } from './support/line-texts.js';
import { screenshot } from './support/page-checks.js';

/**
 * What a new user's walk of the dashboard found in its layout, in a real headless Chromium
 * against the real API (docs/dashboard-ui.md, "Tables at every width"): the tables of Campaigns,
 * API tokens and Outbound webhooks need no sideways scroll at 801 px (beside the side navigation)
 * nor at 1280 px, with an endpoint turned off after 10 failures and URLs that differ only after the
 * port; their statuses, switches and buttons are in sight, and an endpoint's URL is whole, wrapping
 * only after a separator, also in zones written as an offset ("GMT+1", "GMT-3:30", "GMT+5:30"),
 * where at 1280 px they stacked. On a phone, a Team row's message (a refused Reset link, "Saved:
 * …", "… was removed.") is drawn by the row and in sight ("A row action's message"), not above a
 * table whose row is a screen further down. At 320 px Team's email addresses break only after a
 * separator, never inside a word. Controls are found by role and accessible name.
 */
const world = useDashboardWorld();

const OWNER = 'owner@northwind.example';
/** The admin's address, as the demo's, which broke "ops@northwind.exampl" / "e" at 320 px. */
const ADMIN = 'ops@northwind.example';
/** A crowd, so that the last row of People is far below the top of the page on a phone. */
const MEMBERS = [
  'ana.alvarez@northwind.example',
  'bo.berg@northwind.example',
  'cy.chen@northwind.example',
  'di.diaz@northwind.example',
  'ed.evans@northwind.example',
  'fay.fischer@northwind.example',
  'gus.garcia@northwind.example',
  'hal.hughes@northwind.example',
];
/** Where the endpoints listen: three on one host and port, told apart only by their paths. */
const HOST = 'https://127.0.0.1:35521';
const URLS = {
  crm: `${HOST}/hooks/retention/crm-production`,
  erp: `${HOST}/hooks/retention/erp-production`,
  failing: `${HOST}/hooks/retention/data-warehouse`,
  long:
    'https://hooks.northwind-fulfilment.example/api/v2/webhooks/incoming/retention-events' +
    '?workspace=northwind-subscriptions&format=json',
};
/** A customer's 2,000-character cancel feedback, which made its stacked row three screens tall. */
const LONG_FEEDBACK = Array.from({ length: 100 }, (_, index) => `Reason ${index} why.`)
  .join(' ')
  .padEnd(2_000, ' more')
  .slice(0, 2_000);
/** Where a URL may end a line: after one of these (BreakableUrl). */
const URL_SEPARATORS = '/.?&=#_~-:';
/** Where an email address may end a line (BreakableEmail). */
const EMAIL_SEPARATORS = '@.+_-';
/**
 * A day of this January at 22:47 UTC, the endpoints' times: late in the day, the longest to write
 * ("11:47 PM GMT+1" in Europe/Paris), and fixed, so that their list needs the same room on every
 * run, not more at 11 PM than at 1 AM. The zoned pages' clocks stand on the 12th, so these are of
 * their year whatever the day of the run (another year's date is written without its time).
 */
const lateOnJanuary = (day: number) => new Date(Date.UTC(new Date().getUTCFullYear(), 0, day, 22, 47));

let context: BrowserContext;
let page: Page;
const ids: { members: Record<string, string> } = { members: {} };

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'nw',
        name: 'Northwind Analytics',
        processor: 'connected',
        users: [
          { key: 'owner', email: OWNER, role: 'owner' },
          { key: 'admin', email: ADMIN, role: 'admin' },
          ...MEMBERS.map((email) => ({ key: email, email, role: 'member' as const })),
        ],
        tokens: [
          { key: 'finance', name: 'Finance dashboard (read-only)' },
          { key: 'warehouse', name: 'Warehouse sync, nightly export to the data lake' },
          { key: 'old', name: 'Old laptop', revoked: true },
        ],
        customers: [
          { key: 'c1', email: 'bartholomew.fitzgerald@stark-customers.example', subscriptions: [{ key: 's1' }] },
          { key: 'c2', email: 'pepper@stark-customers.example', subscriptions: [{ key: 's2' }] },
        ],
        campaigns: [
          { key: 'k1', customer: 'c1', status: 'recovered', decline_code: 'new_account_information_available' },
          { key: 'k2', customer: 'c2', status: 'lost', decline_code: 'withdrawal_count_limit_exceeded' },
          { key: 'k3', customer: 'c1', status: 'abandoned', decline_code: 'insufficient_funds' },
          { key: 'k4', customer: 'c2', status: 'in_flight', decline_code: 'card_declined' },
        ],
        cancel_sessions: [
          { customer: 'c1', outcome: 'canceled', reason_code: 'too_expensive', feedback: LONG_FEEDBACK },
          { customer: 'c2', outcome: 'saved_discount', reason_code: 'missing_features', feedback: 'Needs exports.' },
        ],
        webhooks: [
          // Each subscribed to a few types, as the demo's are: the Events cell is then clipped at its
          // widest (13rem), where "All events" takes a third of that.
          {
            key: 'crm',
            name: 'CRM',
            url: URLS.crm,
            events: ['recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost'],
          },
          { key: 'erp', name: 'ERP', url: URLS.erp, enabled: false },
          {
            key: 'failing',
            name: 'Data warehouse',
            url: URLS.failing,
            events: ['recovery.opened', 'recovery.recovered', 'recovery.lost'],
          },
          { key: 'long', name: 'Fulfilment', url: URLS.long },
        ],
      },
    ],
  });
  const workspace = loaded.workspaces.nw!;
  ids.members = workspace.users;
  // Turned off by the worker after 10 failures in a row, as deliveries.ts does it: its alert is up.
  await db('webhook_endpoints')
    .where({ id: workspace.webhooks.failing!.id })
    .update({
      enabled: false,
      disabled_reason: 'consecutive_failures',
      disabled_at: db.raw("now() - interval '1 hour'"),
      failure_count: 10,
      last_success_at: lateOnJanuary(6),
      last_failure_at: lateOnJanuary(9),
    });
  await db('webhook_endpoints')
    .where({ id: workspace.webhooks.crm!.id })
    .update({ last_success_at: lateOnJanuary(9), last_failure_at: lateOnJanuary(7) });
  await db('api_tokens')
    .where({ id: workspace.tokens.finance!.id })
    .update({ last_used_at: db.raw("now() - interval '2 hours'") });
  await db('users')
    .where({ workspace_id: workspace.id })
    .update({ password_hash: await hashPassword(PASSWORD) });
  await db('users').where({ email: OWNER }).update({ name: 'Dana Demo' });
  await db('users').where({ email: ADMIN }).update({ name: 'Olu Ops' });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, OWNER);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

async function open(route: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard${route}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
}

/** The lines of a text that end inside a word: not after one of `separators` (the last line aside). */
const endingMidWord = (lines: string[], separators: string) =>
  lines.slice(0, -1).filter((line) => !separators.includes(line.at(-1)!));

/**
 * How a table (found by its name) sits at the current width: how much wider than its box it is
 * (the box would scroll sideways) and the page than the window, and what of each row is not in
 * sight: a status badge, a button, a switch or a time reaching out of the box or the window, or
 * cut short inside itself ("recovere"). On the suite's page unless told.
 */
async function tableFit(name: string, on: Page = page) {
  const box = on.getByRole('region', { name });
  await box.getByRole('row').nth(1).waitFor();
  return {
    // Laid out as a table (its column headers in sight) or stacked (each row a block).
    layout: await box
      .locator('thead')
      .evaluate((thead) => (thead.getBoundingClientRect().height > 1 ? 'table' : 'stacked')),
    ...(await box.evaluate((element) => {
      const view = element.ownerDocument.defaultView!;
      const edge = element.getBoundingClientRect();
      const left = Math.max(edge.left, 0);
      const right = Math.min(edge.right, view.innerWidth);
      const parts = Array.from(
        element.querySelectorAll(
          'tbody .badge, tbody button, tbody [role="switch"], tbody time',
        ) as unknown as ArrayLike<typeof element>,
      );
      return {
        tableOverflow: Math.max(0, element.scrollWidth - element.clientWidth),
        outOfSight: parts
          .filter((part) => {
            const rect = part.getBoundingClientRect();
            return rect.left < left - 0.5 || rect.right > right + 0.5 || part.scrollWidth > part.clientWidth + 1;
          })
          .map((part) => (part.textContent ?? '').trim() || (part.getAttribute('role') ?? part.tagName)),
      };
    })),
    pageOverflow: Math.max(0, await on.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')),
  };
}

describe.each([801, 1280])('at %i px', (width) => {
  /**
   * Nothing to scroll to, nothing out of sight; at 1280 px still a table (each row a line, its
   * columns under their headers), which every one of them fits there.
   */
  const FITS = {
    layout: width === 1280 ? 'table' : expect.stringMatching(/^(table|stacked)$/),
    tableOverflow: 0,
    outOfSight: [],
    pageOverflow: 0,
  };

  beforeAll(async () => {
    await page.setViewportSize({ width, height: 900 });
  });
  afterAll(async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('Campaigns: the table needs no sideways scroll, every status badge whole', async () => {
    await open('/campaigns');
    const fit = await tableFit('Recovery campaigns');
    await screenshot(page, `table-layout-campaigns-${width}`);
    expect(fit).toEqual(FITS);
    // Each status in words (labels.ts), never its code or the code humanized ("in flight").
    const statuses = await page.getByRole('table', { name: 'Recovery campaigns' }).locator('.badge').allTextContents();
    expect(statuses).toEqual(expect.arrayContaining(['Recovered', 'Lost', 'Abandoned', 'In flight']));
    expect(statuses.filter((status) => !['Recovered', 'Lost', 'Abandoned', 'In flight'].includes(status))).toEqual([]);
  });

  it('API tokens: the table needs no sideways scroll, each Revoke and status in sight', async () => {
    await open('/settings/tokens');
    const table = page.getByRole('table', { name: 'API tokens' });
    await expect(table.getByRole('button', { name: 'Revoke' }).count()).resolves.toBe(2);
    await table.getByText(/^Revoked /).waitFor();
    const fit = await tableFit('API tokens');
    await screenshot(page, `table-layout-tokens-${width}`);
    expect(fit).toEqual(FITS);
    // Every status is a badge in words, Active as much as Revoked (it was plain text beside
    // Revoked's badge), each in a colour of its own.
    const statuses = await table.getByRole('row').evaluateAll((rows) =>
      rows.slice(1).map((row) => {
        const cell = row.querySelector('td[data-label="Status"]')!;
        const badge = cell.querySelector('.badge');
        const style = badge && row.ownerDocument.defaultView!.getComputedStyle(badge);
        return {
          text: cell.textContent!.trim().replace(/ .*/, ''),
          badge: badge?.textContent === cell.textContent,
          colours: style && `${style.backgroundColor} ${style.color}`,
        };
      }),
    );
    expect(statuses.map(({ text, badge }) => ({ text, badge })).sort((a, b) => a.text.localeCompare(b.text))).toEqual([
      { text: 'Active', badge: true },
      { text: 'Active', badge: true },
      { text: 'Revoked', badge: true },
    ]);
    const colours = (text: string) => new Set(statuses.filter((s) => s.text === text).map((s) => s.colours));
    expect(colours('Active').size).toBe(1);
    expect([...colours('Active')][0]).not.toBe([...colours('Revoked')][0]);
  });

  it('Outbound webhooks, one endpoint turned off after 10 failures: no sideways scroll, every switch and Last failure in sight, each URL whole', async () => {
    await open('/settings/webhooks');
    await page.getByRole('region', { name: 'Data warehouse was turned off' }).waitFor();
    const table = page.getByRole('table', { name: 'Webhook endpoints' });
    await expect(table.getByRole('switch', { name: 'Enabled' }).count()).resolves.toBe(4);
    await table.getByText('Turned off after 10 failed deliveries in a row').waitFor();
    const fit = await tableFit('Webhook endpoints');
    await screenshot(page, `table-layout-webhooks-${width}`);
    expect(fit).toEqual(FITS);
    // Each URL is all there to read (not cut at "https://127.0.0.1:355…"), inside its cell,
    // breaking only after a separator.
    const seen: Record<string, unknown> = {};
    for (const url of Object.values(URLS)) {
      const text = table.getByText(url, { exact: true });
      const lines = await lineTexts(text);
      seen[url] = {
        text: lines.join(''),
        endingMidWord: endingMidWord(lines, URL_SEPARATORS),
        clipped: await text.evaluate((element) => {
          const cell = element.closest('td')!;
          return element.scrollWidth > element.clientWidth + 1 || cell.scrollWidth > cell.clientWidth + 1;
        }),
      };
    }
    expect(seen).toEqual(
      Object.fromEntries(Object.values(URLS).map((url) => [url, { text: url, endingMidWord: [], clipped: false }])),
    );
  });
});

describe('Outbound webhooks at 1280 px in a zone written as an offset', () => {
  /**
   * With one endpoint turned off after 10 failures, and its times on two lines, the list needed
   * 1,011 px in Europe/Paris, 1,027 in America/St_Johns and 1,035 in Asia/Kolkata, 13 to 37 px more
   * than its 998 px box, and stacked (in UTC 972: a table). Its clipped Events give way now. Each
   * zone checked by its offset in January, when the times here are (Chromium may name Asia/Kolkata
   * Asia/Calcutta).
   */
  it.each([
    ['Europe/Paris', -60, /GMT\+1$/],
    ['America/St_Johns', 210, /GMT-3:30$/],
    ['Asia/Kolkata', -330, /GMT\+5:30$/],
  ])(
    'in %s: a table, not stacked, with nothing to scroll sideways, every switch and time in sight',
    async (timezoneId, offset, zone) => {
      await inZonedPage(context, timezoneId, async (zonedPage) => {
        await zonedPage.clock.setFixedTime(lateOnJanuary(12));
        await zonedPage.goto(`${world.current.url}/dashboard/settings/webhooks`);
        await zonedPage.getByRole('region', { name: 'Data warehouse was turned off' }).waitFor();
        const table = zonedPage.getByRole('table', { name: 'Webhook endpoints' });
        await expect(table.getByRole('switch', { name: 'Enabled' }).count()).resolves.toBe(4);
        await table.getByText('Turned off after 10 failed deliveries in a row').waitFor();
        // Laid out with its fonts, and decided again after any change of size they made.
        await zonedPage.evaluate(
          'document.fonts.ready.then(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))))',
        );
        const fit = await tableFit('Webhook endpoints', zonedPage);
        // Each time as it reads: its text, and how many lines its day and its time of day take.
        const times = await table.locator('time').evaluateAll((elements) =>
          elements.map((time) => ({
            zoned: time.textContent ?? '',
            lines: Array.from(
              time.querySelectorAll('.list-time > span') as unknown as ArrayLike<typeof time>,
              (piece) => piece.getClientRects().length,
            ),
          })),
        );
        await screenshot(zonedPage, `table-layout-webhooks-${timezoneId.replace('/', '-').toLowerCase()}`);
        expect({
          offset: await zonedPage.evaluate<number>("new Date('2026-01-15T12:00:00Z').getTimezoneOffset()"),
          ...fit,
        }).toEqual({ offset, layout: 'table', tableOverflow: 0, outOfSight: [], pageOverflow: 0 });
        // The four times with a time of day, each naming the zone (the form that needs the room),
        // its day and its time of day each whole on a line.
        expect(times).toEqual(Array.from({ length: 4 }, () => ({ zoned: expect.stringMatching(zone), lines: [1, 1] })));
      });
    },
  );
});

describe('Team on a phone (390 px)', () => {
  beforeAll(async () => {
    await page.setViewportSize({ width: 390, height: 844 });
  });
  afterAll(async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  /** The dashboard API called as this owner would from another tab. */
  const fromAnotherTab = async (method: string, route: string) => {
    const cookie = (await context.cookies()).map((each) => `${each.name}=${each.value}`).join('; ');
    const reply = await fetch(`${world.current.url}/dashboard/api${route}`, {
      method,
      headers: { origin: world.current.url, cookie },
    });
    expect(reply.ok).toBe(true);
  };
  const people = () => page.getByRole('table', { name: 'People' });
  /** Whether an element is wholly inside the window, as it stands (not scrolled to). */
  const inView = (target: Locator) =>
    target.evaluate((element) => {
      const rect = element.getBoundingClientRect();
      const view = element.ownerDocument.defaultView!;
      return rect.height > 0 && rect.top >= 0 && rect.bottom <= view.innerHeight;
    });
  /** How far below a row's bottom edge a message starts (about 0 when it is drawn right under it). */
  const gapUnder = async (row: Locator, message: Locator) =>
    Math.round((await message.boundingBox())!.y - ((await row.boundingBox())!.y + (await row.boundingBox())!.height));
  /** The last person of the table: far down a phone's page. */
  async function lastRow(): Promise<{ row: Locator; email: string }> {
    await people().getByRole('row').nth(1).waitFor();
    const email = MEMBERS.at(-1)!;
    const rows = await people().getByRole('row').allTextContents();
    expect(rows.at(-1)).toContain(email);
    return { row: people().getByRole('row', { name: new RegExp(email.replaceAll('.', '\\.')) }), email };
  }

  it('a refused Reset link (the person removed meanwhile) says why by the row, in sight', async () => {
    await open('/settings/team');
    const { row, email } = await lastRow();
    const button = row.getByRole('button', { name: 'Password reset link' });
    await button.scrollIntoViewIfNeeded();
    // Removed in another tab: the server refuses the link (404).
    await fromAnotherTab('DELETE', `/team/members/${ids.members[email]!}`);
    await button.click();
    const refusal = page.getByRole('alert').filter({ hasText: 'This person is no longer in the workspace.' });
    await refusal.waitFor();
    await screenshot(page, 'table-layout-team-refused-390');
    await expect(inView(refusal)).resolves.toBe(true);
    expect(await gapUnder(row, refusal)).toBeGreaterThanOrEqual(-1);
    expect(await gapUnder(row, refusal)).toBeLessThanOrEqual(16);
  });

  it('a role change says "Saved: …" by the row, in sight, the focus back on its role', async () => {
    await open('/settings/team');
    const email = MEMBERS.at(-2)!;
    const row = people().getByRole('row', { name: new RegExp(email.replaceAll('.', '\\.')) });
    const role = row.getByLabel(`Role of ${email}`);
    await role.scrollIntoViewIfNeeded();
    await role.selectOption('admin');
    const confirm = page.getByRole('dialog', { name: 'Change role' });
    await confirm.getByRole('button', { name: 'Change role' }).click();
    await confirm.waitFor({ state: 'detached' });
    const saved = page.getByText(/^Saved: .* is now an admin\.$/);
    await saved.waitFor();
    await screenshot(page, 'table-layout-team-saved-390');
    await expect(inView(saved)).resolves.toBe(true);
    expect(await gapUnder(row, saved)).toBeGreaterThanOrEqual(-1);
    expect(await gapUnder(row, saved)).toBeLessThanOrEqual(16);
    await expect(role.evaluate((element) => element === element.ownerDocument.activeElement)).resolves.toBe(true);
  });

  it('Remove says "… was removed." where the row was, in sight', async () => {
    await open('/settings/team');
    const email = MEMBERS.at(-3)!;
    const row = people().getByRole('row', { name: new RegExp(email.replaceAll('.', '\\.')) });
    const remove = row.getByRole('button', { name: 'Remove' });
    await remove.scrollIntoViewIfNeeded();
    await remove.click();
    const confirm = page.getByRole('dialog', { name: 'Remove from the workspace' });
    await confirm.getByText('They created no active API tokens.').waitFor();
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.waitFor({ state: 'detached' });
    const removed = page.getByText(`${email} was removed.`, { exact: true });
    await removed.waitFor();
    await screenshot(page, 'table-layout-team-removed-390');
    await expect(inView(removed)).resolves.toBe(true);
  });
});

describe('Cancel sessions on a phone (390 px)', () => {
  beforeAll(async () => {
    await page.setViewportSize({ width: 390, height: 844 });
  });
  afterAll(async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('clamps a long feedback to four lines in its stacked row, the whole text on hover', async () => {
    await open('/cancel-sessions');
    const table = page.getByRole('table', { name: 'Cancel sessions' });
    await expect(table.getAttribute('class')).resolves.toContain('stacked');
    const long = table.getByTitle(LONG_FEEDBACK, { exact: true });
    const short = table.getByText('Needs exports.', { exact: true });
    const [longBox, shortBox] = await Promise.all([long.boundingBox(), short.boundingBox()]);
    const lineHeight = await short.evaluate((element) =>
      parseFloat(
        (globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }).getComputedStyle(element)
          .lineHeight,
      ),
    );
    await screenshot(page, 'table-layout-cancel-sessions-390');
    // One line for the short one; four for the long one (it would be about 50 whole).
    expect(Math.round(shortBox!.height / lineHeight)).toBe(1);
    expect(Math.round(longBox!.height / lineHeight)).toBe(4);
    // Clamped, not cut: the text is all there, for the hover and for a screen reader.
    await expect(long.textContent()).resolves.toBe(LONG_FEEDBACK);
  });
});

describe('Team at 320 px', () => {
  beforeAll(async () => {
    await page.setViewportSize({ width: 320, height: 700 });
  });
  afterAll(async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('breaks an email address only after its @ or a dot, never inside a word', async () => {
    await open('/settings/team');
    const table = page.getByRole('table', { name: 'People' });
    await table.getByRole('row').nth(1).waitFor();
    const seen: Record<string, unknown> = {};
    for (const email of [ADMIN, MEMBERS[0]!]) {
      const text = table.getByText(email, { exact: true });
      const lines = await lineTexts(text);
      seen[email] = { text: lines.join(''), endingMidWord: endingMidWord(lines, EMAIL_SEPARATORS) };
    }
    await screenshot(page, 'table-layout-team-320');
    expect(seen).toEqual({
      [ADMIN]: { text: ADMIN, endingMidWord: [] },
      [MEMBERS[0]!]: { text: MEMBERS[0], endingMidWord: [] },
    });
    // It does wrap, here: the cell is narrower than the address.
    await expect(lineTexts(table.getByText(MEMBERS[0]!, { exact: true }))).resolves.not.toHaveLength(1);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(
      0,
    );
  });
});
