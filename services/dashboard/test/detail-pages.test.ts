import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword } from '@retention/domain';
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

beforeAll(async () => {
  const { db, workspace } = world.current;
  await db('users').insert({
    workspace_id: workspace.id,
    email: 'ada@acme.test',
    role: 'admin',
    name: 'Ada Admin',
    password_hash: await hashPassword(PASSWORD),
  });
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
