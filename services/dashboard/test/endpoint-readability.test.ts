import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { lineTexts } from './support/line-texts.js';

/**
 * What a new user read wrong on the webhook pages, in a real headless Chromium against the real
 * API and an HTTPS receiver (docs/dashboard-ui.md, "An endpoint read at a glance"): a test ping's
 * log entry said "Not kept for a test ping." and "Empty" in dark code blocks, as if that were the
 * payload; "Last success: Never" stood beside a Succeeded ping; the endpoints list broke a URL
 * inside its address ("https://127.0.0.<br>1:44901/…") and cut its events off with "…"; the
 * Delivery log's title sat lower than its filters. Found by role and accessible name.
 */
const world = useDashboardWorld();

const OWNER = 'owner@stark.test';
const PING_PATH = '/demo/dunning';
const MANY_PATH = '/hooks/many';
let context: BrowserContext;
let page: Page;
let pingId = '';

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'stark',
        name: 'Stark Streaming',
        processor: 'connected',
        users: [{ key: 'owner', email: OWNER, role: 'owner', name: 'Tony Owner' }],
        webhooks: [
          { key: 'ping', name: 'Dunning emails', url: receiver.url(PING_PATH), events: ['recovery.opened'] },
          {
            key: 'many',
            name: 'CRM',
            url: receiver.url(MANY_PATH),
            events: ['recovery.opened', 'recovery.recovered', 'recovery.lost'],
          },
        ],
      },
    ],
  });
  const ids = loaded.workspaces.stark!;
  pingId = ids.webhooks.ping!.id;
  receiver.route(PING_PATH, { secret: ids.webhooks.ping!.secret, behaviour: { kind: 'status', status: 200 } });
  await db('users')
    .where({ email: OWNER })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, OWNER);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/** A fact of the endpoint's summary, by its term. */
const fact = (term: string) =>
  page
    .getByRole('term')
    .filter({ hasText: new RegExp(`^${term}$`) })
    .locator('xpath=following-sibling::dd');

describe('a successful test ping on the endpoint’s page', () => {
  it('its log entry says in plain notes, not code blocks, that no body was kept and the answer was empty', async () => {
    await page.goto(`${world.current.url}/dashboard/settings/webhooks/${pingId}`);
    await page.getByRole('heading', { level: 1, name: 'Dunning emails' }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').filter({ hasText: 'Test delivery:' }).filter({ hasText: 'Succeeded' }).waitFor();
    const log = page.getByRole('list', { name: 'Deliveries, newest first' });
    const entry = log.getByRole('button', { name: /Succeeded.*ping/ });
    await entry.waitFor();
    await entry.click();

    const notKept = page.getByText('Not kept for a test ping.', { exact: true });
    const empty = page.getByText('The response had an empty body.', { exact: true });
    for (const note of [notKept, empty]) {
      await note.waitFor();
      await expect(note.evaluate((element) => element.tagName)).resolves.toBe('P');
      await expect(note.evaluate((element) => element.closest('pre') === null)).resolves.toBe(true);
    }
    // No code block in the entry: there is nothing to show in one.
    await expect(log.locator('pre').count()).resolves.toBe(0);
  });

  it('the facts count deliveries of events only, and say that test pings are not counted', async () => {
    await expect(fact('Last delivery success').textContent()).resolves.toBe('Never');
    await expect(fact('Last delivery failure').textContent()).resolves.toBe('Never');
    await page
      .getByText('Deliveries of events only: test pings show in the log below but are not counted here.')
      .waitFor();
    // The test's own outcome says so too.
    await expect(page.getByRole('status').filter({ hasText: 'Test delivery:' }).textContent()).resolves.toContain(
      "A test does not count toward the endpoint's failures or its last delivery success",
    );
  });

  it('the Delivery log title is in line with its filters', async () => {
    const title = page.getByRole('heading', { level: 2, name: 'Delivery log' });
    const outcome = page.getByRole('combobox', { name: 'Outcome' });
    const middle = async (target: typeof title) => {
      const box = (await target.boundingBox())!;
      return box.y + box.height / 2;
    };
    const [titleMiddle, selectMiddle] = [await middle(title), await middle(outcome)];
    expect(Math.abs(titleMiddle - selectMiddle)).toBeLessThanOrEqual(3);
  });
});

describe('the endpoints list', () => {
  it.each([1280, 390])(
    'at %i px keeps an endpoint’s address whole on its first line and sums up its events as "3 events"',
    async (width) => {
      await page.setViewportSize({ width, height: 900 });
      try {
        await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
        const table = page.getByRole('table', { name: 'Webhook endpoints' });
        await table.waitFor();
        const pingUrl = world.current.receiver.url(PING_PATH);
        const origin = `${new URL(pingUrl).origin}/`;
        const url = table.getByText(pingUrl, { exact: true });
        const lines = await lineTexts(url);
        expect(lines.join('')).toBe(pingUrl);
        // Any break comes after the address (the receiver's `localhost:PORT`), never inside it.
        expect(lines[0]!.length).toBeGreaterThanOrEqual(origin.length);

        const many = table.getByRole('row', { name: /CRM/ });
        const summary = many.getByText(/^3 events/);
        await summary.waitFor();
        await expect(summary.getAttribute('title')).resolves.toBe(
          'Payment failed, recovery started (recovery.opened), Payment recovered (recovery.recovered), Payment lost (recovery.lost)',
        );
        // Read whole by a screen reader: the count, then each type.
        await expect(
          many
            .getByRole('cell', {
              name: /^3 events\s*: Payment failed, recovery started, Payment recovered, Payment lost$/,
            })
            .count(),
        ).resolves.toBe(1);
        // Not cut off: the summary fits its cell.
        await expect(summary.evaluate((element) => element.scrollWidth <= element.clientWidth + 1)).resolves.toBe(true);
        // One type is named, as before.
        await table
          .getByRole('row', { name: /Dunning emails/ })
          .getByText('Payment failed, recovery started')
          .waitFor();
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    },
  );
});
