import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { SIGNATURE_HEADER } from '@retention/core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * An engineer's paths from the dashboard to what the API serves, in a real headless Chromium
 * against the real API (docs/dashboard-ui.md, "Paths to the API reference"): the API tokens and
 * Outbound webhooks pages link to the API reference, and a signing secret, shown once, says which
 * header carries the signature and links to how to verify it. A new-user walk found no such path.
 */
const world = useDashboardWorld();

const OWNER = 'owner@initech.test';
let context: BrowserContext;
let page: Page;
let endpointId = '';

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'initech',
        name: 'Initech',
        processor: 'connected',
        users: [{ key: 'owner', email: OWNER, role: 'owner' }],
        webhooks: [{ key: 'hook', name: 'Initech CRM', url: receiver.url('/hooks/initech') }],
      },
    ],
  });
  endpointId = loaded.workspaces.initech!.webhooks.hook!.id;
  await db('users')
    .where({ email: OWNER })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, OWNER);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

async function open(route: string, title: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard${route}`);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
}

/** The API reference page the API serves, as a browser would fetch it. */
async function servedReference(): Promise<string> {
  const answer = await fetch(`${world.current.url}/docs`);
  expect(answer.status).toBe(200);
  return answer.text();
}

/**
 * A link that opens in a new tab (a secret shown once must not be navigated away from), and says
 * so; its address on this origin.
 */
async function newTabHref(link: Locator): Promise<string | null> {
  await expect(link.getAttribute('target')).resolves.toBe('_blank');
  await expect(link.getAttribute('rel')).resolves.toMatch(/noopener/);
  return link.getAttribute('href');
}

const REFERENCE = { name: 'API reference (opens in a new tab)', exact: true };

describe('paths to the API reference', () => {
  it('the API tokens page links to the API reference the API serves', async () => {
    await open('/settings/tokens', 'API tokens');
    await expect(newTabHref(page.getByRole('link', REFERENCE))).resolves.toBe('/docs');
    await expect(servedReference()).resolves.toMatch(/<h2>Introduction<\/h2>/);
  });

  it('the Outbound webhooks list and an endpoint page link to its Webhooks section', async () => {
    const html = await servedReference();
    expect(html).toContain('<section id="webhooks">');
    await open('/settings/webhooks', 'Outbound webhooks');
    await expect(newTabHref(page.getByRole('link', REFERENCE))).resolves.toBe('/docs#webhooks');
    await page.getByRole('link', { name: 'Initech CRM' }).click();
    await page.getByRole('heading', { level: 1, name: 'Initech CRM' }).waitFor();
    await expect(newTabHref(page.getByRole('link', REFERENCE))).resolves.toBe('/docs#webhooks');
  });

  it('a signing secret names the header that carries the signature and links to verifying it', async () => {
    await open(`/settings/webhooks/${endpointId}`, 'Initech CRM');
    await page.getByRole('button', { name: 'Roll secret' }).click();
    const roll = page.getByRole('dialog', { name: 'Roll secret' });
    await roll.getByRole('button', { name: 'Roll secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    await shown.getByLabel('Signing secret').waitFor();
    // The header deliveries are signed in (packages/core), and the SDK's helper by its name.
    await shown.getByText(`Each delivery carries its signature in the ${SIGNATURE_HEADER} header.`).waitFor();
    await shown.getByText(/our SDK’s verifyWebhook \(@retention\/sdk\) does it/).waitFor();
    const href = await newTabHref(shown.getByRole('link', { name: 'Verifying the signature (opens in a new tab)' }));
    expect(href).toBe('/docs#webhooks-verifying-the-signature');
    // The section is there in the served reference, and says the same header and helper.
    const html = await servedReference();
    const section = html.slice(html.indexOf('id="webhooks-verifying-the-signature"'));
    expect(html).toContain('<h3 id="webhooks-verifying-the-signature">Verifying the signature</h3>');
    expect(section.slice(0, 3000)).toContain(SIGNATURE_HEADER);
    expect(section.slice(0, 3000)).toContain('verifyWebhook');
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });
  });
});

describe('the Outbound webhooks list', () => {
  it('names its count of failures "Consecutive failures", as the endpoint page does', async () => {
    await open('/settings/webhooks', 'Outbound webhooks');
    const list = page.getByRole('table', { name: 'Webhook endpoints' });
    await list.getByRole('columnheader', { name: 'Consecutive failures', exact: true }).waitFor();
    // "Failures 0" beside "Last failure Nov 9" read as a contradiction.
    await expect(list.getByRole('columnheader', { name: 'Failures', exact: true }).count()).resolves.toBe(0);
  });
});
