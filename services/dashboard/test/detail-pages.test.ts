import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, recordCancelSession } from '@retention/domain';
import { description } from './support/field-errors.js';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * What a demanding new reader found on the detail pages, the Account page and an unknown address,
 * in a real Chromium against the real API (docs/dashboard-ui.md): Mark recovered's confirmation
 * is not red like Mark lost's; "Page not found" leads on to the Overview, and `//` in an address
 * is the page it means; a name over its limit is said once, at the field, not again in the
 * browser's bubble; an abandoned cancel session does not say "without an answer" beside the
 * reason it shows. Controls are found by role and accessible name.
 */
const world = useDashboardWorld();
let tab: { context: BrowserContext; page: Page };
let abandonedId: string;
let customer: { id: string; email: string };

beforeAll(async () => {
  const { db, workspace } = world.current;
  await db('users').insert({
    workspace_id: workspace.id,
    email: 'ada@acme.test',
    role: 'admin',
    name: 'Ada Admin',
    password_hash: await hashPassword(PASSWORD),
  });
  customer = await db('customers')
    .where({ workspace_id: workspace.id })
    .first<{ id: string; email: string }>('id', 'email');
  const abandoned = await recordCancelSession(db, {
    workspace_id: workspace.id,
    customer_id: customer.id,
    outcome: 'abandoned',
    reason_code: 'other',
    monthly_mrr_cents: 4900,
    currency: 'usd',
  });
  abandonedId = abandoned.id;
  tab = await desktopPage(world.current.browser);
  await signInThroughForm(tab.page, world.current.url, 'ada@acme.test');
}, 60_000);

afterAll(async () => {
  await tab?.context.close();
});

const visit = (path: string) => tab.page.goto(`${world.current.url}/dashboard${path}`);

describe("a campaign's Mark recovered and Mark lost confirmations", () => {
  it('confirm Mark recovered with the primary button, and Mark lost with the red (destructive) one', async () => {
    const { page } = tab;
    await visit(`/campaigns/${world.current.workspace.campaignIds[0]!}`);
    await page.getByRole('heading', { level: 1, name: /^Invoice / }).waitFor();
    const confirmOf = async (label: string) => {
      await page.getByRole('main').getByRole('button', { name: label }).click();
      const dialog = page.getByRole('dialog', { name: label });
      const confirm = dialog.getByRole('button', { name: label });
      const look = await confirm.evaluate((button) => ({
        className: button.className,
        background: button.ownerDocument.defaultView!.getComputedStyle(button).backgroundColor,
      }));
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      return look;
    };
    const recovered = await confirmOf('Mark recovered');
    const lost = await confirmOf('Mark lost');
    expect(recovered.className.split(' ')).toContain('primary');
    expect(recovered.className.split(' ')).not.toContain('danger');
    expect(lost.className.split(' ')).toContain('danger');
    // They look different: recording a recovery is not shown as the destructive act.
    expect(recovered.background).not.toBe(lost.background);
    // Nothing was marked: the campaign is still in flight, both marks still offered.
    await page.getByRole('button', { name: 'Mark recovered' }).waitFor();
    await page.getByRole('button', { name: 'Mark lost' }).waitFor();
  });
});

describe('an address the dashboard has no page at', () => {
  it('"Page not found" has a link on to the Overview, which takes the focus to its heading', async () => {
    const { page } = tab;
    await visit('/no-such-page');
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await expect(page.getByRole('heading', { level: 1 }).count()).resolves.toBe(1);
    await page.getByRole('main').getByRole('link', { name: 'Go to the Overview' }).click();
    const overview = page.getByRole('heading', { level: 1, name: 'Overview' });
    await overview.waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/');
    await page.waitForFunction(`document.activeElement?.tagName === 'H1'`);
    await expect(overview.evaluate((heading) => heading === heading.ownerDocument.activeElement)).resolves.toBe(true);
  });

  it('reads repeated slashes as one: /dashboard//campaigns is the Campaigns list, at its one address', async () => {
    const { page } = tab;
    await visit('//campaigns');
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/campaigns');
    await expect(page.getByRole('heading', { name: 'Page not found' }).count()).resolves.toBe(0);
    // An entry the app reaches by itself (Back to it, one made by script) is read the same way,
    // and its address tidied.
    await page.evaluate(`
      window.history.pushState(null, '', '/dashboard//customers//');
      window.dispatchEvent(new PopStateEvent('popstate'));
    `);
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    await page.waitForFunction(`window.location.pathname === '/dashboard/customers/'`);
    await expect(page.getByRole('heading', { name: 'Page not found' }).count()).resolves.toBe(0);
  });
});

describe('a detail address made to name another route', () => {
  it('asks the API for that id, escaped: `..%2Fteam` is an unknown campaign, not the Team list', async () => {
    const { page } = tab;
    const asked: string[] = [];
    const record = (request: { url(): string }) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith('/dashboard/api/')) asked.push(pathname);
    };
    page.on('request', record);
    try {
      await visit('/campaigns/..%2Fteam');
      await page.getByText('There is no such campaign in this workspace.').waitFor();
    } finally {
      page.off('request', record);
    }
    expect(asked).toContain('/dashboard/api/campaigns/..%2Fteam');
    expect(asked).not.toContain('/dashboard/api/team');
  });

  it('shows "Page not found" for a malformed escape in the address, not a blank app', async () => {
    const { page } = tab;
    for (const path of ['/customers/%', '/campaigns/%E0%A4%A']) {
      await visit(path);
      await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
      await expect(page.getByRole('link', { name: 'Go to the Overview' }).count()).resolves.toBe(1);
    }
  });
});

describe('the Account page', () => {
  it("says a name over its limit once, at the field, with no browser bubble, and sends nothing; the server's refusal of an empty one too", async () => {
    const { page } = tab;
    await visit('/account');
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    const name = page.getByRole('textbox', { name: 'Name', exact: true });
    const form = page.locator('form').filter({ has: name });
    // The browser's own validation fires `invalid` at the field before it shows its bubble.
    await name.evaluate((input) => {
      input.dataset.invalids = '0';
      input.addEventListener('invalid', () => (input.dataset.invalids = String(Number(input.dataset.invalids) + 1)));
    });
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/dashboard/api/account')) sent.push(request.method());
    });
    await name.fill('N'.repeat(201));
    const sentence = 'At most 200 characters: this has 201.';
    // Said at the field (its description), and to a screen reader once, as it crossed the limit.
    await expect(description(name)).resolves.toBe(sentence);
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.waitForFunction(`document.activeElement?.tagName === 'INPUT'`);
    await expect(name.evaluate((input) => input === input.ownerDocument.activeElement)).resolves.toBe(true);
    await expect(name.evaluate((input) => input.dataset.invalids)).resolves.toBe('0');
    await expect(description(name)).resolves.toBe(sentence);
    await expect(form.locator('.field-error').allTextContents()).resolves.toEqual([sentence]);
    expect(sent).toEqual([]);

    // Empty: the server refuses it, said at the field, as the only alert; no bubble either.
    await name.fill('');
    await page.getByRole('button', { name: 'Save name' }).click();
    const alerts = form.getByRole('alert').filter({ hasText: /./ });
    await alerts.first().waitFor();
    await expect(alerts.count()).resolves.toBe(1);
    await expect(name.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(name.evaluate((input) => input.dataset.invalids)).resolves.toBe('0');
    expect(sent).toEqual(['PATCH']);

    // A name within the limit is saved as before.
    await name.fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('status').filter({ hasText: 'Name saved.' }).waitFor();
  });
});

describe('any form with a name limit (Create token)', () => {
  it("says a name over its limit once, at the field: the browser's bubble is canceled, the field has the focus, nothing is sent", async () => {
    const { page } = tab;
    await visit('/settings/tokens');
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create token' });
    const name = dialog.getByRole('textbox', { name: 'Name', exact: true });
    // Each `invalid` the browser fires, and whether the page canceled it (no bubble): read after
    // the page's own listener, which React put on the field when it was made.
    await name.evaluate((input) => {
      input.dataset.invalids = '';
      input.addEventListener('invalid', (event: { defaultPrevented: boolean }) => {
        input.dataset.invalids += event.defaultPrevented ? 'canceled ' : 'shown ';
      });
    });
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/dashboard/api/tokens') && request.method() === 'POST') sent.push(request.url());
    });
    await name.fill('T'.repeat(201));
    await dialog.getByRole('button', { name: 'Cancel' }).focus();
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await expect(name.evaluate((input) => input.dataset.invalids)).resolves.toBe('canceled ');
    await expect(name.evaluate((input) => input === input.ownerDocument.activeElement)).resolves.toBe(true);
    await expect(description(name)).resolves.toBe(
      'Where the token is used, e.g. “billing reports”. At most 200 characters: this has 201.',
    );
    expect(sent).toEqual([]);
    // Empty, the browser's own words stay: the field is required and the page has none of its own.
    await name.fill('');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await expect(name.evaluate((input) => input.dataset.invalids)).resolves.toBe('canceled shown ');
    expect(sent).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });
});

describe('an abandoned cancel session', () => {
  it('does not say the customer left "without an answer" beside the reason it shows', async () => {
    const { page } = tab;
    await visit(`/cancel-sessions/${abandonedId}`);
    await page.getByRole('heading', { level: 1, name: /^Cancel session of / }).waitFor();
    const facts = page.getByRole('region', { name: 'Session' });
    await facts
      .getByRole('definition')
      .filter({ hasText: /^Abandoned$/ })
      .waitFor();
    await facts
      .getByRole('definition')
      .filter({ hasText: /^Other$/ })
      .waitFor();
    const timeline = page.getByRole('region', { name: 'Timeline' });
    await timeline.getByText(/left the flow before accepting an offer or canceling/).waitFor();
    await expect(page.getByRole('main').textContent()).resolves.not.toMatch(/without an answer/);
  });
});

describe("a customer's page", () => {
  /** The font sizes, in px, of the texts of the page's heading (each element holding some). */
  const headingTextSizes = () =>
    tab.page.getByRole('heading', { level: 1 }).evaluate((heading) => {
      const sizes = new Set<string>();
      const walker = heading.ownerDocument.createTreeWalker(heading, 4);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        const holder = text.parentElement;
        if (holder && text.textContent?.trim())
          sizes.add(heading.ownerDocument.defaultView!.getComputedStyle(holder).fontSize);
      }
      return [...sizes];
    });

  it.each([1280, 390])(
    'at %i px titles them at the size of the other detail pages’ titles, a cancel session’s and a campaign’s',
    async (width) => {
      const { page } = tab;
      await page.setViewportSize({ width, height: 900 });
      try {
        await visit(`/cancel-sessions/${abandonedId}`);
        await page.getByRole('heading', { level: 1, name: /^Cancel session of / }).waitFor();
        const session = await headingTextSizes();
        expect(session).toHaveLength(1);
        await visit(`/campaigns/${world.current.workspace.campaignIds[0]!}`);
        await page.getByRole('heading', { level: 1, name: /^Invoice / }).waitFor();
        // Its "Invoice" (the id after it may be smaller on a phone, to fit its line whole).
        expect((await headingTextSizes())[0]).toBe(session[0]);
        // The email was set at an id's size, smaller than every other title on a phone.
        await visit(`/customers/${customer.id}`);
        await page.getByRole('heading', { level: 1, name: customer.email }).waitFor();
        await expect(headingTextSizes()).resolves.toEqual(session);
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    },
  );
});
