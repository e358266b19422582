import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures, requestPasswordReset } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { formatUtcTime } from '../src/format.js';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { description } from './support/field-errors.js';

/**
 * Where the keyboard's focus goes, and what a screen reader is told, as a keyboard-only viewer
 * walks the dashboard (docs/dashboard-ui.md, "Accessibility"): a page change focuses the new
 * page's heading, a busy button keeps the focus, Load more puts it on the first new row, a
 * confirmation whose opener went gives it to `main`, the account menu closes as the focus leaves
 * it, and a list's outcome is said in a live region. One workspace of its own (60 campaigns, one
 * webhook endpoint) and one signed-in page, the cases in order.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@keyboard.test';
const CAMPAIGNS = 60;
const HOOK_PATH = '/keyboard-hook';
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db, receiver } = world.current;
  const start = Date.now() - 5 * 86_400_000;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'keyboard',
        name: 'Keyboard Co',
        processor: 'connected',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        customers: [{ key: 'c', email: 'kim@keyboard-customers.test', subscriptions: [{ key: 's' }] }],
        campaigns: Array.from({ length: CAMPAIGNS }, (_, index) => ({
          customer: 'c',
          psp_invoice_id: `in_kb_${String(index).padStart(3, '0')}`,
          status: 'in_flight' as const,
          first_failed_at: new Date(start + index * 60_000).toISOString(),
        })),
        webhooks: [{ key: 'hook', name: 'Receiver', url: receiver.url(HOOK_PATH) }],
      },
    ],
  });
  const { secret } = loaded.workspaces.keyboard!.webhooks.hook!;
  receiver.route(HOOK_PATH, { secret, behaviour: { kind: 'status', status: 200, body: 'ok' } });
  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Kay Board' });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

interface Focused {
  /** The focused element's tag (`BODY` when the focus fell to the page). */
  tag: string;
  /** Its accessible text: aria-label, else its text (empty for `main` and the body). */
  name: string;
}

function focused(): Promise<Focused> {
  return page.evaluate(`(() => {
    const active = document.activeElement ?? document.body;
    const text = active === document.body || active.tagName === 'MAIN' ? '' : active.textContent.trim();
    return { tag: active.tagName, name: active.getAttribute('aria-label') ?? text };
  })()`);
}

/** Expects the focus to come to (and be on) the element `expected` describes, within 10 s. */
async function expectFocusOn(expected: Focused): Promise<void> {
  let last: Focused | undefined;
  await eventually(async () => {
    last = await focused();
    return last.tag === expected.tag && last.name === expected.name;
  }).catch(() => undefined);
  expect(last).toEqual(expected);
}

/** Whether the locator's element has the focus now. */
const hasFocus = (locator: Locator) => locator.evaluate((element) => element === element.ownerDocument.activeElement);

const main = () => page.getByRole('navigation', { name: 'Main' });
const campaignRows = () =>
  page
    .getByRole('table', { name: 'Recovery campaigns' })
    .getByRole('row')
    .filter({ has: page.getByRole('cell') });
const status = (text: string) => page.getByRole('status').filter({ hasText: text });
/** Waits for a live region to say `text`, on screen or for screen readers only (a list's count). */
const announced = (text: string) => status(text).waitFor({ state: 'attached' });

/** The WCAG contrast ratio of two `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = color
      .match(/\d+(\.\d+)?/g)!
      .slice(0, 3)
      .map((part) => {
        const channel = Number(part) / 255;
        return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
      });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}
const WHITE = 'rgb(255, 255, 255)';
const PAGE_BACKGROUND = 'rgb(246, 248, 250)';

/** Opens a page through a link and waits for its heading (where the focus goes is another case's). */
async function open(link: Locator, heading: string | RegExp): Promise<void> {
  await link.click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

const settingsTab = (name: string) => page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name });

describe('keyboard focus and announcements', () => {
  it('Load more focuses the first row it brought; a list’s outcome is said in a live region', async () => {
    await open(main().getByRole('link', { name: 'Campaigns' }), 'Campaigns');
    await campaignRows().nth(49).waitFor();
    await page.getByRole('button', { name: 'Load more' }).focus();
    await page.keyboard.press('Enter');
    await campaignRows()
      .nth(CAMPAIGNS - 1)
      .waitFor();
    const firstNew = (await campaignRows().nth(50).getByRole('link').first().textContent())!;
    await expectFocusOn({ tag: 'A', name: firstNew });
    await announced(`${CAMPAIGNS} campaigns shown`);

    await page.getByLabel('Status').focus();
    await page.getByLabel('Status').selectOption('recovered');
    await status('No campaigns match these filters.').waitFor();
    // Only the query string changed: the focus stays on the filter.
    await expect(hasFocus(page.getByLabel('Status'))).resolves.toBe(true);
    await page.getByLabel('Status').selectOption('');
    await announced('50 campaigns shown, more available');
  });

  it('shows a search box’s rules under it, tied to it as its description', async () => {
    const box = page.getByRole('searchbox', { name: 'Search by invoice id, customer email or name' });
    const hint = await box.evaluate((input) => {
      const description = input.ownerDocument.getElementById(input.getAttribute('aria-describedby') ?? '');
      const box = description?.getBoundingClientRect();
      return { text: description?.textContent, width: box?.width ?? 0, height: box?.height ?? 0 };
    });
    expect(hint.text).toMatch(/at least 3 characters/i);
    expect(hint.width).toBeGreaterThan(100);
    expect(hint.height).toBeGreaterThan(10);
  });

  it('a search applied after the too-short hint says its count in the live region, once', async () => {
    // What the page's live regions say, each change of their text in turn, from a moment on.
    const startListening = () =>
      page.evaluate(`(() => {
        const said = (window.__said = []);
        const read = () =>
          [...document.querySelectorAll('[role=status]')].map((region) => region.textContent.trim()).filter(Boolean).join(' | ');
        let last = read();
        new MutationObserver(() => {
          const now = read();
          if (now !== last) said.push((last = now));
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      })()`);
    const timesSaid = async (text: string) => {
      const said = await page.evaluate<string[]>('window.__said');
      return said.filter((now, index) => now.includes(text) && !said[index - 1]?.includes(text)).length;
    };
    const searches = [
      {
        path: '/campaigns',
        box: 'Search by invoice id, customer email or name',
        count: '50 campaigns shown, more available',
      },
      { path: '/customers', box: 'Search by email or name', count: '1 customer shown' },
    ];
    for (const { path, box, count } of searches) {
      // An address with a search under 3 characters asks nothing (typed, it is not applied: the
      // list stays), and says why at the box.
      await page.goto(`${world.current.url}/dashboard${path}?q=ki`);
      const search = page.getByRole('searchbox', { name: box });
      await page.getByRole('alert').filter({ hasText: 'Type at least 3 characters to search.' }).waitFor();
      await expect(page.getByRole('table').count()).resolves.toBe(0);
      await search.focus();
      await startListening();
      await search.press('End');
      await page.keyboard.type('m');
      await page.keyboard.press('Enter');
      await announced(count);
      await page.getByRole('table').getByRole('row').nth(1).waitFor();
      // Long enough for a second saying of the same result, were there one.
      await page.waitForTimeout(500);
      await expect(timesSaid(count)).resolves.toBe(1);
    }
  });

  it('the invitation and password-reset pages start on their first field, as sign-in does', async () => {
    const { db, url, ownerInvitation } = world.current;
    const reset = await requestPasswordReset(db, EMAIL, url);
    const fresh = await desktopPage(world.current.browser);
    try {
      await fresh.page.goto(`${url}/dashboard/sign-in`);
      await fresh.page.getByRole('textbox', { name: 'Email' }).waitFor();
      await expect(hasFocus(fresh.page.getByRole('textbox', { name: 'Email' }))).resolves.toBe(true);

      await fresh.page.goto(ownerInvitation);
      await fresh.page.getByRole('button', { name: 'Accept invitation' }).waitFor();
      await expect(hasFocus(fresh.page.getByRole('textbox', { name: 'Name' }))).resolves.toBe(true);

      await fresh.page.goto(reset!.reset_url);
      await fresh.page.getByRole('button', { name: 'Set password and sign in' }).waitFor();
      // A password field has no role: it is found by its label, its accessible name.
      await expect(hasFocus(fresh.page.getByLabel('New password'))).resolves.toBe(true);
    } finally {
      await fresh.context.close();
    }
  });

  it('a confirmation whose opener goes (Mark recovered) leaves the focus on main, not the body', async () => {
    await open(main().getByRole('link', { name: 'Campaigns' }), 'Campaigns');
    await open(campaignRows().first().getByRole('link').first(), /^Invoice in_kb_/);
    await page.getByRole('button', { name: 'Mark recovered' }).focus();
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Mark recovered' });
    await confirm.getByRole('button', { name: 'Mark recovered' }).focus();
    await page.keyboard.press('Enter');
    await confirm.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Mark recovered' }).waitFor({ state: 'detached' });
    await expectFocusOn({ tag: 'MAIN', name: '' });
  });

  it('a detail page’s time is read with its UTC time after it; a list’s keeps it on hover only', async () => {
    await open(main().getByRole('link', { name: 'Campaigns' }), 'Campaigns');
    const row = campaignRows().first();
    const invoice = (await row.getByRole('link').first().textContent())!;
    const campaign = await world.current
      .db('recovery_campaigns')
      .where({ psp_invoice_id: invoice })
      .first('first_failed_at');
    const utc = formatUtcTime(new Date(campaign.first_failed_at).toISOString());
    // The list's cell: the UTC on hover (its title); read as it is shown, no stop for the keyboard.
    const cell = row.getByTitle(utc);
    await expect(cell.ariaSnapshot()).resolves.toMatch(/^- time: [^(]+$/);
    await expect(cell.getAttribute('tabindex')).resolves.toBeNull();

    await open(row.getByRole('link').first(), `Invoice ${invoice}`);
    const facts = await page.getByRole('main').ariaSnapshot();
    const firstFailed = facts.match(/- term: First failed\n\s*- definition:\n\s*- time: ([^\n]*)/)?.[1];
    // The local time as shown, then the UTC time (its text has nothing a pattern would read as syntax).
    expect(firstFailed).toMatch(new RegExp(`^\\w.* \\(${utc}\\)$`));
  });

  it('the account menu closes when the focus leaves it', async () => {
    const button = page.getByRole('button', { name: /Account menu/ });
    await button.click();
    await expect(button.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.keyboard.press('Tab'); // Account
    await page.keyboard.press('Tab'); // Sign out
    await page.keyboard.press('Tab'); // out of the menu
    await expect(button.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(page.getByRole('link', { name: 'Account', exact: true }).count()).resolves.toBe(0);
  });

  it('a page change focuses the new page’s heading: main and Settings navigation, breadcrumb, row and menu links', async () => {
    // The campaign was opened from the list: its breadcrumb goes back to it as Back does (with the
    // list's filters), so the focus is on the row that was opened, as after Back (below).
    const opened = (await page.getByRole('heading', { level: 1 }).textContent())!.replace(/^Invoice /, '');
    await page.getByRole('link', { name: 'Campaigns', exact: true }).last().click(); // the breadcrumb
    await expectFocusOn({ tag: 'A', name: opened });
    const row = campaignRows().first().getByRole('link').first();
    const invoice = (await row.textContent())!;
    await row.click();
    await expectFocusOn({ tag: 'H1', name: `Invoice ${invoice}` });

    await main().getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await settingsTab('Outbound webhooks').click();
    await expectFocusOn({ tag: 'H1', name: 'Outbound webhooks' });
    await page.getByRole('link', { name: 'Receiver' }).click();
    await expectFocusOn({ tag: 'H1', name: 'Receiver' });
    // A breadcrumb that is a link (the endpoint's, to a list without filters): the list's heading.
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Outbound webhooks' }).click();
    await expectFocusOn({ tag: 'H1', name: 'Outbound webhooks' });
    await main().getByRole('link', { name: 'Customers' }).click();
    await expectFocusOn({ tag: 'H1', name: 'Customers' });

    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await expectFocusOn({ tag: 'H1', name: 'Account' });
  });

  it('Back puts the focus on the row that was opened, else on the page’s heading', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await expectFocusOn({ tag: 'H1', name: 'Campaigns' });
    const row = campaignRows().nth(3).getByRole('link').first();
    const invoice = (await row.textContent())!;
    await row.focus();
    await page.keyboard.press('Enter');
    await expectFocusOn({ tag: 'H1', name: `Invoice ${invoice}` });
    await page.goBack();
    await expectFocusOn({ tag: 'A', name: invoice });
    // Forward to the campaign: no link on it leads to the list it came from; its heading.
    await page.goForward();
    await expectFocusOn({ tag: 'H1', name: `Invoice ${invoice}` });
  });

  it('the Enabled switch keeps the focus, so a second Space turns it back; its off track is 3:1', async () => {
    await open(main().getByRole('link', { name: 'Settings' }), /./);
    await open(settingsTab('Outbound webhooks'), 'Outbound webhooks');

    const enabled = page.getByRole('switch', { name: 'Enabled' });
    await enabled.focus();
    await page.keyboard.press('Space');
    await eventually(async () => (await enabled.getAttribute('aria-checked')) === 'false');
    const offTrack = await enabled.evaluate(
      (element) => element.ownerDocument.defaultView!.getComputedStyle(element).backgroundColor,
    );
    await page.keyboard.press('Space');
    await eventually(async () => (await enabled.getAttribute('aria-checked')) === 'true');
    await expect(hasFocus(enabled)).resolves.toBe(true);
    // Its white thumb on the off track, and the track on the card.
    expect(contrast(offTrack, WHITE)).toBeGreaterThanOrEqual(3);
  });

  it('Send test keeps the focus while it runs', async () => {
    await open(page.getByRole('link', { name: 'Receiver' }), 'Receiver');
    await page.getByRole('button', { name: 'Send test' }).focus();
    await page.keyboard.press('Enter');
    await status('Test delivery:').waitFor();
    await expectFocusOn({ tag: 'BUTTON', name: 'Send test' });
  });

  it('the delivery log’s Load more focuses the first entry it brought', async () => {
    const { db } = world.current;
    // 55 more attempts of the test's delivery, older than it: two pages of the log (50 a page).
    const test = await db('webhook_attempts').orderBy('attempted_at', 'desc').first();
    await db('webhook_attempts').insert(
      Array.from({ length: 55 }, (_, index) => ({
        delivery_id: test.delivery_id,
        endpoint_id: test.endpoint_id,
        event_type: 'ping',
        attempt: test.attempt + 1 + index,
        outcome: 'succeeded',
        http_status: 200,
        duration_ms: 5,
        attempted_at: new Date(new Date(test.attempted_at).getTime() - (index + 1) * 60_000),
        url: test.url,
      })),
    );
    await page.reload();
    const log = page.getByRole('list', { name: 'Deliveries, newest first' });
    await log.getByRole('listitem').nth(49).waitFor();
    await page.getByRole('button', { name: 'Load more' }).focus();
    await page.keyboard.press('Enter');
    await log.getByRole('listitem').nth(55).waitFor();
    const fifty = (await log.getByRole('listitem').nth(50).getByRole('button').first().textContent())!.trim();
    await expectFocusOn({ tag: 'BUTTON', name: fifty });
  });

  it('Account: Save name keeps the focus; the Name field autocompletes a name; a field’s edge is 3:1', async () => {
    await page.getByRole('button', { name: /Account menu/ }).click();
    await open(page.getByRole('link', { name: 'Account', exact: true }), 'Account');
    await page.getByRole('button', { name: 'Save name' }).focus();
    await page.keyboard.press('Enter');
    await status('Name saved.').waitFor();
    await expectFocusOn({ tag: 'BUTTON', name: 'Save name' });

    const name = page.getByRole('textbox', { name: 'Name' });
    await expect(name.getAttribute('autocomplete')).resolves.toBe('name');
    const edge = await name.evaluate(
      (element) => element.ownerDocument.defaultView!.getComputedStyle(element).borderTopColor,
    );
    expect(contrast(edge, WHITE)).toBeGreaterThanOrEqual(3);
    expect(contrast(edge, PAGE_BACKGROUND)).toBeGreaterThanOrEqual(3);
  });

  it('a name typed past its limit is said once as it crosses, the field invalid; back under, that is said too', async () => {
    // On the Account page the previous case opened. What the live regions say, each change in turn.
    await page.evaluate(`(() => {
      const said = (window.__regionSaid = []);
      const regions = (node) => {
        const element = node.nodeType === 1 ? node : node.parentElement;
        if (!element) return [];
        const inside = element.closest('[role=status]');
        return inside ? [inside] : [...element.querySelectorAll('[role=status]')];
      };
      new MutationObserver((records) => {
        const changed = new Set(records.flatMap((record) => [record.target, ...record.addedNodes].flatMap(regions)));
        for (const region of changed) {
          const text = region.textContent.trim();
          if (text) said.push(text);
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    const said = () => page.evaluate<string[]>('window.__regionSaid');
    const name = page.getByRole('textbox', { name: 'Name' });
    const OVER = 'At most 200 characters: this has 201.';
    const WITHIN = 'Within the limit of 200 characters.';

    // Typed up to the limit: nothing is said, the field is valid.
    await name.fill('n'.repeat(199));
    await name.press('End');
    await page.keyboard.type('n');
    await page.waitForTimeout(300);
    await expect(said()).resolves.toEqual([]);
    await expect(name.getAttribute('aria-invalid')).resolves.toBeNull();

    // One more crosses it: said in a polite live region, the field invalid and described by the sentence.
    await page.keyboard.type('o');
    await announced(OVER);
    await expect(name.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(description(name)).resolves.toBe(OVER);

    // Typing on while over: the sentence at the field counts on, the live region says nothing more.
    await page.keyboard.type('pq');
    await page.getByText('At most 200 characters: this has 203.').waitFor();
    await expect(description(name)).resolves.toBe('At most 200 characters: this has 203.');
    await page.waitForTimeout(300);
    await expect(said()).resolves.toEqual([OVER]);

    // Back under: the field is valid again, and that is said once.
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.waitForTimeout(300);
    await expect(said()).resolves.toEqual([OVER]);
    await page.keyboard.press('Backspace');
    await announced(WITHIN);
    await expect(name.getAttribute('aria-invalid')).resolves.toBeNull();
    await expect(name.getAttribute('aria-describedby')).resolves.toBeNull();
    await page.keyboard.press('Backspace');
    await page.waitForTimeout(300);
    await expect(said()).resolves.toEqual([OVER, WITHIN]);

    // Over again: said again.
    await page.keyboard.type('rs');
    await announced(OVER);
    await expect(said()).resolves.toEqual([OVER, WITHIN, OVER]);
    await expect(name.getAttribute('aria-invalid')).resolves.toBe('true');
    await name.fill('Kay Board');
  });

  it('an invitation names the role capitalised, as everywhere else', async () => {
    await page.goto(world.current.ownerInvitation);
    const invited = page.getByText(/^You were invited as/);
    await expect(invited.textContent()).resolves.toContain('You were invited as Owner with owner@acme.test.');
  });

  it('"Forgot your password?" focuses its page’s heading', async () => {
    await page.goto(`${world.current.url}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await expectFocusOn({ tag: 'H1', name: 'Reset your password' });
  });
});
