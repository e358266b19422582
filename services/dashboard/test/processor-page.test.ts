import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, OPERATOR, rejectProcessorKey, retryParkedEvents } from '@retention/domain';
import { inTransaction } from '@retention/db';
import { eventually } from '@retention/testkit';
import { HANDLED_EVENT_TYPES } from '@retention/processors';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from '../../worker/test/processor/stripe-kit.js';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { description, expectFieldError } from './support/field-errors.js';
import { checkPage } from './support/page-checks.js';

/**
 * The Settings, Processor page in a real headless Chromium against the real API app, PostgreSQL,
 * Redis, a worker and a local Stripe stand-in (docs/dashboard-ui.md, "Processor"): what to set up
 * in Stripe, an import watched as it runs, and what Disconnect leaves to do in Stripe.
 * The tests run in order on one signed-in page.
 */
const stripeKey = newApiKey();
/**
 * Five pages of a hundred, for the imports watched while they run (`watchedImport`). The worker
 * writes each customer in a transaction of its own: on a loaded machine a thousand took tens of
 * seconds of their own, beside Stripe's pauses.
 */
const watchedCustomers = Array.from({ length: 500 }, () => stripeCustomer());
/**
 * Three pages, answered at once, for every other import: a first page, a second for Stripe to
 * refuse or rate-limit, and a third for a resumed run to go on to.
 */
const quickCustomers = watchedCustomers.slice(0, 250);
let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await FakeStripe.start(stripeKey);
  stripe.customers = quickCustomers;
});
afterAll(() => stripe?.close());
const world = useDashboardWorld({ stripeApiBase: () => stripe.url });
let context: BrowserContext;
let page: Page;
/** The page's reads of GET /dashboard/api/processor, counted. */
let statusReads = 0;

beforeAll(async () => {
  await world.current
    .db('users')
    .where({ email: world.current.workspace.ownerEmail })
    .update({ password_hash: await hashPassword(PASSWORD) });
  await world.current.startWorker();
  ({ context, page } = await desktopPage(world.current.browser));
  page.on('request', (request) => {
    if (request.method() === 'GET' && new URL(request.url()).pathname === '/dashboard/api/processor') statusReads++;
  });
  await signInThroughForm(page, world.current.url, world.current.workspace.ownerEmail);
  await page.goto(`${world.current.url}/dashboard/settings/processor`);
  await page.getByRole('heading', { level: 1, name: 'Processor' }).waitFor();
}, 60_000);

afterAll(async () => {
  await context?.close();
});

/**
 * While `run` runs, Stripe has five hundred customers and answers each list page after `ms`: an
 * import of five pages then lasts five times that, long enough to watch the page refresh (every
 * IMPORT_REFRESH_MS, 2 s) as it goes. Every other import pages three pages at once.
 */
async function watchedImport<T>(ms: number, run: () => Promise<T>): Promise<T> {
  stripe.customers = watchedCustomers;
  stripe.pageDelayMs = ms;
  try {
    return await run();
  } finally {
    stripe.pageDelayMs = 0;
    stripe.customers = quickCustomers;
  }
}

/** The import's status as the worker left it in the database. */
async function backfillStatus(): Promise<string> {
  const { backfill_status } = await world.current
    .db('processor_connections')
    .where({ workspace_id: world.current.workspace.id })
    .first('backfill_status');
  return backfill_status as string;
}

/** The Import line's text (status, phase, counts), read off the details list. */
const importLine = () => page.getByRole('definition').filter({ hasText: 'open invoices' }).first().textContent();

async function openSettings(tab: string, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: tab }).click();
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
}

/** Makes the page hidden (another tab in front) or visible again, as the browser tells it. */
async function setHidden(hidden: boolean): Promise<void> {
  await page.evaluate(`(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${hidden ? 'hidden' : 'visible'}' });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);
}

/** The workspace's Stripe connection's id. */
async function connectionId(): Promise<string> {
  const { id } = await world.current
    .db('processor_connections')
    .where({ workspace_id: world.current.workspace.id })
    .first('id');
  return id as string;
}

/**
 * A Stripe event stored as the worker leaves one after failed attempts (docs/processor.md,
 * "Poison events"): parked, or waiting for its next attempt. Reaching that through the worker
 * takes six attempts over a minute; the page reads only the rows.
 */
async function failedEvent(fields: {
  state: 'pending' | 'parked';
  attempts: number;
  last_error: string;
  next_attempt_at?: Date;
}): Promise<ReturnType<typeof stripeEvent>> {
  const event = stripeEvent('customer.created', stripeCustomer());
  await world.current.db('processor_events').insert({
    connection_id: await connectionId(),
    workspace_id: world.current.workspace.id,
    psp_event_id: event.id,
    type: event.type,
    psp_created_at: new Date(event.created * 1000),
    payload: JSON.stringify(event),
    ...fields,
  });
  return event;
}

describe('the processor page', () => {
  it('is a guide in numbered steps a business owner follows in Stripe, linking to its webhook and API key pages', async () => {
    const form = page.getByRole('form', { name: 'Connect Stripe' });
    const steps = form.getByRole('list', { name: 'Steps to connect Stripe' });
    const items = steps.locator(':scope > li');
    await expect(items.count()).resolves.toBe(4);
    for (const [index, words] of [
      'Add an endpoint in Stripe.',
      `Select these ${HANDLED_EVENT_TYPES.length} events`,
      'Paste the signing secret.',
      'Optional: paste a restricted API key.',
    ].entries()) {
      await expect(items.nth(index).isVisible()).resolves.toBe(true);
      await expect(items.nth(index).locator('strong').first().textContent()).resolves.toBe(words);
    }
    // The steps' fields are in them: the URL in the first, the secret in the third, the key in the fourth.
    await expect(items.nth(0).getByLabel('Webhook URL for Stripe').count()).resolves.toBe(1);
    await expect(items.nth(2).getByLabel('Webhook signing secret').count()).resolves.toBe(1);
    await expect(items.nth(3).getByLabel('Restricted API key (optional)').count()).resolves.toBe(1);
    // Stripe's own pages, live and (before the mode is known) test, each in a new tab.
    for (const [name, href] of [
      ['Webhooks (opens in a new tab)', 'https://dashboard.stripe.com/webhooks'],
      ['API keys (opens in a new tab)', 'https://dashboard.stripe.com/apikeys'],
    ]) {
      const link = steps.getByRole('link', { name, exact: true });
      await expect(link.getAttribute('href')).resolves.toBe(href);
      await expect(link.getAttribute('target')).resolves.toBe('_blank');
    }
    await expect(
      steps
        .getByRole('link', { name: 'test mode (opens in a new tab)' })
        .evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
    ).resolves.toEqual(['https://dashboard.stripe.com/test/webhooks', 'https://dashboard.stripe.com/test/apikeys']);
    // The API version in a clause of its step, not a paragraph about invoice shapes.
    await expect(items.nth(0).textContent()).resolves.toContain(
      'Stripe asks for an API version: any works, so keep the one it suggests.',
    );
    await expect(page.getByText(/basil|2025-03-31/).count()).resolves.toBe(0);
    // The key's read permissions, in the step.
    await expect(items.nth(3).textContent()).resolves.toContain(
      'set these to Read and leave the rest at None: Customers, Subscriptions, Invoices, Invoice payments, Payment intents, Events.',
    );
    // No operator's wording outside the note labelled for them.
    const main = page.getByRole('main');
    const operatorNote = page.getByRole('note', { name: 'For whoever runs this service' });
    const outsideNote = await main.evaluate(
      (element, note) => element.textContent!.replace(note ?? '', ''),
      await operatorNote.textContent(),
    );
    expect(outsideNote).not.toMatch(/BASE_URL|whoever runs|brought in|operator/);
  });

  it('copies exactly the events the receiver handles with Copy event list, and lists the same', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.current.url });
    const events = page.getByRole('list', { name: 'Events to select in Stripe' });
    await expect(events.getByRole('listitem').allTextContents()).resolves.toEqual([...HANDLED_EVENT_TYPES]);
    await page.getByRole('button', { name: 'Copy event list' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Copied the ${HANDLED_EVENT_TYPES.length} events, one a line.` })
      .waitFor();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(HANDLED_EVENT_TYPES.join('\n'));
    // Each code fits its column, whatever the width: none runs on under the next column's bullet.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const overflowing = await events.evaluate((list) =>
        [...list.querySelectorAll('code')]
          .filter(
            (code) => code.getBoundingClientRect().right > code.parentElement!.getBoundingClientRect().right + 0.5,
          )
          .map((code) => code.textContent),
      );
      expect({ width, overflowing }).toEqual({ width, overflowing: [] });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('says "not connected" once: the status line, and a sentence that does not repeat it', async () => {
    const region = page.getByRole('region', { name: 'Stripe' });
    await expect(region.textContent()).resolves.toMatch(/^StripeStripe: Not connected/);
    const said = (await page.getByRole('main').textContent())!.match(/not connected/gi);
    expect(said).toEqual(['Not connected']);
    await region
      .getByText(
        "This workspace's records were added without Stripe (imported, or demo data), and outbound webhooks are sent " +
          'for them. Connect Stripe with the steps below to have them arrive from Stripe directly.',
        { exact: true },
      )
      .waitFor();
  });

  it('reads as the other Settings pages: full-width cards, the steps in body text, at 1280 and 390 px', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const layout = await page.getByRole('main').evaluate((main) => {
        const style = (element: typeof main) => main.ownerDocument.defaultView!.getComputedStyle(element);
        const heading = main.querySelector('h1')!.closest('header') ?? main.querySelector('h1')!.parentElement!;
        const step = main.querySelector('ol[aria-label="Steps to connect Stripe"] > li > p')!;
        const note = main.querySelector('[aria-label="Before you connect"]')!;
        const body = main.querySelector('section[aria-labelledby="processor-status"] > p')!;
        return {
          cards: [...main.querySelectorAll('.card')].map((card) => Math.round(card.getBoundingClientRect().width)),
          header: Math.round(heading.getBoundingClientRect().width),
          stepSize: style(step).fontSize,
          stepColor: style(step).color,
          noteSize: style(note).fontSize,
          bodySize: style(body).fontSize,
          bodyColor: style(body).color,
        };
      });
      // Each card as wide as the page's header (it was a 520 px column at 1280 px).
      expect(layout.cards.every((card) => Math.abs(card - layout.header) <= 1)).toBe(true);
      // The steps and the status sentence in the page's body text, the warning no larger.
      expect({ width, step: layout.stepSize, color: layout.stepColor, note: layout.noteSize }).toEqual({
        width,
        step: layout.bodySize,
        color: layout.bodyColor,
        note: layout.bodySize,
      });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect(checkPage(page, 'processor-steps')).resolves.toEqual([]);
  });

  it('says under the webhook URL that Stripe cannot reach this machine, and how to forward its events here', async () => {
    // The test world's BASE_URL is http://127.0.0.1:<port>, as npm start's is on a laptop.
    const url = (await page.getByLabel('Webhook URL for Stripe').textContent())!;
    expect(new URL(url).hostname).toBe('127.0.0.1');
    const note = page.getByRole('note').filter({ hasText: 'Stripe cannot reach this URL' });
    await expect(note.textContent()).resolves.toContain(`the Stripe CLI: stripe listen --forward-to ${url}`);
    // The command is code, whole in one element, as a terminal takes it.
    await expect(note.locator('code').allTextContents()).resolves.toEqual([`stripe listen --forward-to ${url}`]);
    // The URL in it breaks on a phone rather than widening the page.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await expect(
        page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
      ).resolves.toBeLessThanOrEqual(0);
      // Only the URL: `--forward-to` is on one line, not broken between its hyphens.
      const linesOfOption = await note.locator('code').evaluate((code) => {
        type TextNode = NonNullable<ReturnType<ReturnType<typeof code.ownerDocument.createTreeWalker>['nextNode']>>;
        const at = (offset: number): [TextNode, number] => {
          const walker = code.ownerDocument.createTreeWalker(code, 4 /* NodeFilter.SHOW_TEXT */);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const length = node.textContent!.length;
            if (offset <= length) return [node, offset];
            offset -= length;
          }
          throw new Error('offset past the text');
        };
        const start = code.textContent!.indexOf('--forward-to');
        const range = code.ownerDocument.createRange();
        range.setStart(...at(start));
        range.setEnd(...at(start + '--forward-to'.length));
        return new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)))
          .size;
      });
      expect(linesOfOption).toBe(1);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('masks the pasted secret and key with a Show button each, and keeps them from the password manager', async () => {
    const form = page.getByRole('form', { name: 'Connect Stripe' });
    const fields = [
      { field: form.getByLabel('Webhook signing secret'), shown: 'signing secret', value: newWebhookSecret() },
      { field: form.getByLabel('Restricted API key (optional)'), shown: 'API key', value: stripeKey },
    ];
    /** How the field draws its text: `disc` masked, `none` in clear. */
    const drawn = (field: (typeof fields)[number]['field']) =>
      field.evaluate((input) =>
        input.ownerDocument.defaultView!.getComputedStyle(input).getPropertyValue('-webkit-text-security'),
      );
    for (const { field, shown, value } of fields) {
      await field.fill(value);
      await expect(drawn(field)).resolves.toBe('disc');
      // Not a password field: Chromium offers to save one on Connect whatever its autocomplete
      // says (docs/dashboard-ui.md, "Secrets pasted into a form").
      await expect(field.getAttribute('type')).resolves.toBe('text');
      await expect(field.getAttribute('autocomplete')).resolves.toBe('off');
      await expect(field.getAttribute('spellcheck')).resolves.toBe('false');
      // Show draws it in clear, and is then Hide; the value stays as pasted.
      await form.getByRole('button', { name: `Show ${shown}`, exact: true }).click();
      await expect(drawn(field)).resolves.toBe('none');
      await form.getByRole('button', { name: `Hide ${shown}`, exact: true }).click();
      await expect(drawn(field)).resolves.toBe('disc');
      await expect(field.inputValue()).resolves.toBe(value);
    }
    // The placeholder, a shape to paste, is not masked.
    await fields[0]!.field.fill('');
    await expect(
      fields[0]!.field.evaluate((input) =>
        input.ownerDocument
          .defaultView!.getComputedStyle(input, '::placeholder')
          .getPropertyValue('-webkit-text-security'),
      ),
    ).resolves.toBe('none');
    await fields[1]!.field.fill('');
  });

  it('refuses a secret key at its field, naming the keys it takes with an ellipsis, as the spec writes them', async () => {
    const form = page.getByRole('form', { name: 'Connect Stripe' });
    const key = form.getByLabel('Restricted API key (optional)');
    await form.getByLabel('Webhook signing secret').fill(newWebhookSecret());
    await key.fill(`sk_live_${'a'.repeat(24)}`);
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    const refusal = form.getByRole('alert').filter({ hasText: /./ });
    await refusal.first().waitFor();
    const text = (await refusal.first().textContent())!;
    expect(text).toContain('a Stripe restricted key (rk_live_… or rk_test_…)');
    expect(text).toContain('a secret key (sk_…) gives full access');
    expect(text).not.toContain('...');
    await expect(description(key)).resolves.toContain(text);
    await form.getByLabel('Webhook signing secret').fill('');
    await key.fill('');
  });

  it('refuses rk_test_bogus123 at its field saying it is too short, with the shape a restricted key has', async () => {
    const form = page.getByRole('form', { name: 'Connect Stripe' });
    const key = form.getByLabel('Restricted API key (optional)');
    await form.getByLabel('Webhook signing secret').fill(newWebhookSecret());
    await key.fill('rk_test_bogus123');
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    const sentence =
      "That is too short: Stripe's restricted keys are rk_live_ or rk_test_ followed by 16 to 250 letters and " +
      'digits; copy the whole key from Stripe (Developers, API keys).';
    await expectFieldError(form, key, sentence, 'api_key');
    await expect(form.textContent()).resolves.not.toContain('must be a Stripe restricted key');
    // The key pasted into the secret's field is told so there.
    await key.fill('');
    await form.getByLabel('Webhook signing secret').fill(stripeKey);
    await form.getByRole('button', { name: 'Connect', exact: true }).click();
    await expectFieldError(
      form,
      form.getByLabel('Webhook signing secret'),
      "That is an API key, not a signing secret: Stripe's signing secrets are whsec_ followed by 16 to 200 letters " +
        "and digits, shown on the endpoint's page in Stripe (Developers, Webhooks, then the endpoint).",
      'webhook_secret',
    );
    await form.getByLabel('Webhook signing secret').fill('');
  });

  it('refreshes itself while an import runs: its counts move, and it says when it started and finished', async () => {
    // 1.2 s a page, out of step with the page's reads: six seconds of import, two or three reads
    // while it runs, each after another page.
    const seen = await watchedImport(1_200, async () => {
      await page.getByLabel('Webhook signing secret').fill(newWebhookSecret());
      await page.getByLabel('Restricted API key (optional)').fill(stripeKey);
      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await page.getByText('Connected and syncing').waitFor();

      // Read what the page shows, with no reload, until the import ends.
      const lines: string[] = [];
      const deadline = Date.now() + 60_000;
      for (;;) {
        const line = (await importLine()) ?? '';
        if (lines.at(-1) !== line) lines.push(line);
        if (line.startsWith('Finished') || Date.now() > deadline) break;
        await page.waitForTimeout(200);
      }
      return lines;
    });
    expect(seen.at(-1)).toMatch(/^Finished: 500 customers, 0 subscriptions, 0 open invoices/);
    const running = seen.filter((line) => /^Importing customers: \d+ customers/.test(line));
    // At least two different counts were shown while it ran.
    expect(new Set(running).size).toBeGreaterThanOrEqual(2);
    await page.getByText(/^Started .+, finished .+$/).waitFor();

    // Ended: the page stops asking.
    const readsAtEnd = statusReads;
    await page.waitForTimeout(5_000);
    expect(statusReads).toBe(readsAtEnd);
  }, 90_000);

  it('stops refreshing while the page is hidden, and catches up when it is shown again', async () => {
    // 1.5 s a page while hidden (seven and a half seconds of import): still running when the page
    // is shown again, so it had something to read all the while; then the rest at once.
    await watchedImport(1_500, async () => {
      await page.getByRole('button', { name: 'Import again' }).click();
      await page
        .getByText(/^(Waiting to start|Importing|Running)/)
        .first()
        .waitFor();
      await setHidden(true);
      const readsWhenHidden = statusReads;
      await page.waitForTimeout(5_000);
      expect(statusReads).toBe(readsWhenHidden);
      await expect(backfillStatus()).resolves.toMatch(/^(queued|running)$/);
      await setHidden(false);
      await page.waitForTimeout(500);
      expect(statusReads).toBeGreaterThan(readsWhenHidden);
      stripe.pageDelayMs = 0;
      await page.getByText(/^Finished: 500 customers/).waitFor({ timeout: 30_000 });
    });
  }, 60_000);

  it('changes the key without the signing secret pasted again: an empty secret field keeps the stored one', async () => {
    const connection = () =>
      world.current.db('processor_connections').where({ workspace_id: world.current.workspace.id }).first();
    const before = await connection();
    await page
      .getByText('Leave empty to keep the current signing secret (shown above); a new one replaces it.')
      .waitFor();
    await expect(page.getByLabel('Webhook signing secret').inputValue()).resolves.toBe('');
    // A test-mode connection is shown a test key's prefix to paste, not a live one's.
    expect(before.mode).toBe('test');
    await expect(page.getByLabel('Restricted API key (optional)').getAttribute('placeholder')).resolves.toBe(
      'rk_test_…',
    );
    await page.getByLabel('Restricted API key (optional)').fill(stripeKey);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page
      .getByText(/^(Waiting to start|Importing|Running)/)
      .first()
      .waitFor();
    const after = await connection();
    // The same secret kept (sealed again, so compared by its last four and the log's words).
    expect(after.webhook_secret_last4).toBe(before.webhook_secret_last4);
    expect(after.api_key_sealed).not.toBe(before.api_key_sealed);
    await page.getByText(/^Finished: 250 customers/).waitFor({ timeout: 60_000 });
  }, 90_000);

  it('logs a signing-secret rotation with both last fours, old → new', async () => {
    const connection = () =>
      world.current.db('processor_connections').where({ workspace_id: world.current.workspace.id }).first();
    const before = (await connection()).webhook_secret_last4 as string;
    const rolled = newWebhookSecret();
    await page.getByLabel('Webhook signing secret').fill(rolled);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByText(`whsec_…${rolled.slice(-4)}`).waitFor();
    await openSettings('Security log', 'Security log');
    await page
      .getByText(`Signing secret whsec_…${before} → whsec_…${rolled.slice(-4)}`)
      .first()
      .waitFor();
    await openSettings('Processor', 'Processor');
  });

  it('says when Stripe asked the import to wait (its rate limit) and until when, so it does not look hung', async () => {
    // Stripe answers the second page with 429 until the page has been seen saying so.
    let limited = 0;
    let release = false;
    stripe.override = (_request, url) => {
      if (release || url.pathname !== '/v1/customers' || url.searchParams.get('starting_after') === null) return null;
      limited += 1;
      return {
        status: 429,
        body: { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests' } },
        headers: { 'retry-after': '1' },
      };
    };
    try {
      await page.getByRole('button', { name: 'Import again' }).click();
      const waiting = page.getByText(
        // With its seconds: a wait of a second or a minute ends within the minute it names.
        /^Stripe asked us to wait \(its rate limit\) until .+ \d{1,2}:\d{2}:\d{2} (AM|PM) \S+; the import goes on by itself then\.$/,
      );
      await waiting.waitFor({ timeout: 30_000 });
      expect(limited).toBeGreaterThan(0);
      await expect(importLine()).resolves.toMatch(/^Importing customers: 100 customers/);
      // Until when: the time the worker wrote, shown in the existing <Time> (local, UTC on hover).
      const until = Date.parse((await waiting.locator('time').getAttribute('datetime'))!);
      expect(until).toBeGreaterThan(Date.now() - 10_000);
      expect(until).toBeLessThan(Date.now() + 10_000);
      release = true;
      await page.getByText(/^Finished: 250 customers/).waitFor({ timeout: 60_000 });
      await expect(waiting.count()).resolves.toBe(0);
    } finally {
      stripe.override = null;
    }
  }, 90_000);

  it('says Import again goes on from where a failed import stopped, and it does', async () => {
    // A permission taken from the key after the first page of customers: the run fails there.
    let refuse = true;
    stripe.override = (_request, url) =>
      refuse && url.pathname === '/v1/customers' && url.searchParams.get('starting_after') !== null
        ? {
            status: 403,
            body: {
              error: {
                type: 'invalid_request_error',
                message:
                  "The provided key 'rk_test_*********abcd' does not have the required permissions for this endpoint. Having the 'rak_customer_read' permission would allow this request to continue.",
              },
            },
          }
        : null;
    try {
      const button = page.getByRole('button', { name: 'Import again' });
      await expect(description(button)).resolves.toBe('');
      await button.click();
      await page.getByText(/^Failed while importing customers: 100 customers/).waitFor({ timeout: 30_000 });
      await expect(description(button)).resolves.toBe(
        'Import again goes on from where the last run stopped (customers), keeping what it imported, rather than starting over.',
      );
      await expect(checkPage(page, 'processor-import-failed')).resolves.toEqual([]);
      refuse = false;
      const asked = stripe.requests.length;
      await button.click();
      await page.getByText(/^Finished: 250 customers/).waitFor({ timeout: 60_000 });
      // It went on from its cursor: no customer listed again from the first.
      const firstCustomers = stripe.requests.slice(asked).find((request) => request.path === '/v1/customers');
      expect(firstCustomers?.query.get('starting_after')).toBeTruthy();
      // A finished run: Import again starts over, and says nothing of going on.
      await expect(description(button)).resolves.toBe('');
    } finally {
      stripe.override = null;
    }
  }, 120_000);

  it('shows the latest event error in words: the event, its type, its attempts and when it is tried again', async () => {
    const waiting = await failedEvent({
      state: 'pending',
      attempts: 2,
      next_attempt_at: new Date(Date.now() + 3_600_000),
      last_error:
        "Stripe refused the API key a permission, so the decline code could not be looked up (Stripe said: Having the 'rak_payment_intent_read' permission would allow this request to continue.). In Stripe, edit the restricted key and give it Read on what Stripe names.",
    });
    try {
      await page.reload();
      const section = page.getByRole('region', { name: 'Latest event error' });
      await section.waitFor();
      const facts = Object.fromEntries(
        await section
          .getByRole('term')
          .evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling?.textContent])),
      );
      expect(facts).toMatchObject({
        'Stripe event': waiting.id,
        Type: 'customer.created',
        Attempts: '2',
        Error: expect.stringMatching(/^Stripe refused the API key a permission, so the decline code could not/),
      });
      expect(facts.State).toMatch(/^Waiting: tried again by itself at .+$/);
      await expect(section.getByText(/1 waiting, 0 parked/).count()).resolves.toBe(1);
    } finally {
      await world.current.db('processor_events').where({ psp_event_id: waiting.id }).delete();
    }
  });

  it('retries the parked events: says how many, reads the status again, and shows an error as text', async () => {
    const markup = 'The event is malformed: <b>not bold</b> & not markup';
    const parked: Array<ReturnType<typeof stripeEvent>> = [];
    for (let i = 0; i < 2; i++) parked.push(await failedEvent({ state: 'parked', attempts: 6, last_error: markup }));
    await page.reload();
    const section = page.getByRole('region', { name: 'Latest event error' });
    await section.getByText(markup, { exact: true }).waitFor();
    await expect(section.locator('b').count()).resolves.toBe(0);
    await expect(section.textContent()).resolves.toMatch(/Parked: not tried again until it is retried/);
    await expect(section.getByText(/0 waiting, 2 parked/).count()).resolves.toBe(1);
    // No serious axe-core violation, and nothing wider than a phone (the table scrolls in its box).
    await expect(checkPage(page, 'processor-event-errors')).resolves.toEqual([]);

    const retry = page.getByRole('button', { name: 'Retry parked events' });
    await retry.click();
    await page.getByRole('status').filter({ hasText: '2 parked events requeued' }).waitFor();
    // The page reads the status again by itself until they are applied.
    await section.waitFor({ state: 'detached', timeout: 30_000 });
    await expect(retry.count()).resolves.toBe(0);
    await expect(page.getByRole('definition').filter({ hasText: 'waiting,' }).first().textContent()).resolves.toMatch(
      /\(0 waiting, 0 parked\)$/,
    );
    const applied = await world.current
      .db('processor_events')
      .whereIn(
        'psp_event_id',
        parked.map((event) => event.id),
      )
      .pluck('state');
    expect(applied).toEqual(['applied', 'applied']);

    // Retried behind the page's back (the operator's CLI): the server's refusal, in its words.
    await failedEvent({ state: 'parked', attempts: 6, last_error: 'Gone meanwhile' });
    await page.reload();
    await retry.waitFor();
    await retryParkedEvents(world.current.db, world.current.workspace.id, OPERATOR);
    await retry.click();
    await page.getByRole('alert').filter({ hasText: 'No event is parked, so there is nothing to retry' }).waitFor();
    // And reads the status again: what is no longer parked is no longer offered.
    await retry.waitFor({ state: 'detached' });
  }, 60_000);

  it('retries one parked event from its row, leaving the others parked', async () => {
    const first = await failedEvent({ state: 'parked', attempts: 6, last_error: 'Needs Read on invoices' });
    const second = await failedEvent({ state: 'parked', attempts: 6, last_error: 'Needs Read on customers' });
    try {
      await page.reload();
      const table = page.getByRole('table', { name: 'Events that could not be applied' });
      await table.waitFor();
      await table.getByRole('button', { name: `Retry ${first.id}` }).click();
      await page.getByRole('status').filter({ hasText: '1 parked event requeued' }).waitFor();
      await eventually(
        async () =>
          (await world.current.db('processor_events').where({ psp_event_id: first.id }).first('state'))?.state ===
          'applied',
        30_000,
      );
      const stillParked = await world.current.db('processor_events').where({ psp_event_id: second.id }).first('state');
      expect(stillParked?.state).toBe('parked');
      // The page reads the status again: the retried row goes, the other stays with its own Retry.
      await table.getByRole('button', { name: `Retry ${first.id}` }).waitFor({ state: 'detached', timeout: 30_000 });
      await expect(table.getByRole('button', { name: `Retry ${second.id}` }).count()).resolves.toBe(1);
    } finally {
      await world.current.db('processor_events').whereIn('psp_event_id', [first.id, second.id]).delete();
    }
  }, 60_000);

  it('says when Stripe’s deliveries are refused for a bad signature, and is no longer "syncing"', async () => {
    const url = (await page.getByLabel('Webhook URL for Stripe').textContent())!;
    // The receiver keeps a connection's secret for up to a second after the rotation.
    await page.waitForTimeout(1_100);
    // Stripe signs with a secret that is not the one given (mistyped, or an endpoint's other).
    const stripeSecret = newWebhookSecret();
    for (let i = 0; i < 3; i++) {
      expect(
        (await postToConnection(url, stripeEvent('customer.created', stripeCustomer()), stripeSecret)).status,
      ).toBe(400);
    }
    // Counted after their answers (best effort): the page is read once the count is written.
    await eventually(async () => {
      const row = await world.current
        .db('processor_refused_deliveries')
        .where({ connection_id: url.split('/').at(-1) })
        .first();
      return row?.refused === 3;
    });
    await page.reload();
    await page.getByText('Stripe: Connected, but its deliveries are refused').waitFor();
    await expect(page.getByText('Connected and syncing').count()).resolves.toBe(0);
    const note = page.getByRole('note', { name: 'Refused deliveries' });
    await expect(note.textContent()).resolves.toMatch(
      /^3 deliveries refused for a bad signature since .+, the last at .+: check the signing secret \(none was accepted since, so nothing new arrives from Stripe\)\.$/,
    );
    // The page's sentence says so too, rather than that events arrive by themselves.
    const region = page.getByRole('region', { name: 'Stripe' });
    await expect(region.getByText(/arrive by themselves/).count()).resolves.toBe(0);
    await region
      .getByText(
        "Stripe's events are not arriving: Stripe's deliveries are being refused for a bad signature. Check the signing secret: it must be the one of this endpoint in Stripe.",
      )
      .waitFor();
  });

  it('says in the Disconnect dialog that Stripe keeps sending, emails and may disable the endpoint, so disable it in Stripe too', async () => {
    await page.getByRole('button', { name: 'Disconnect' }).click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect Stripe' });
    const words = (await dialog.textContent()) ?? '';
    expect(words).toMatch(/Stripe keeps sending/);
    expect(words).toMatch(/emails your Stripe account/);
    expect(words).toMatch(/may disable the endpoint/);
    expect(words).toMatch(/disable or delete the endpoint in Stripe too/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('warns owners on every page when Stripe refused the key, linking to the Processor page; a member is not told', async () => {
    const banner = page.getByRole('alert', { name: 'Stripe refused the API key' });
    await expect(banner.count()).resolves.toBe(0);
    // Stripe answers the stored key with 401 (a lookup or the import did): the connection is disconnected.
    const { id } = await world.current
      .db('processor_connections')
      .where({ workspace_id: world.current.workspace.id })
      .first('id');
    await inTransaction(world.current.db, (trx) => rejectProcessorKey(trx, id as string));
    for (const path of ['/dashboard/', '/dashboard/campaigns']) {
      await page.goto(`${world.current.url}${path}`);
      await banner.waitFor();
      await expect(banner.textContent()).resolves.toMatch(
        /^Outbound webhooks are paused: Stripe refused this workspace’s API key .+ Connect again with a new restricted key on the Processor page\.$/,
      );
    }
    await banner.getByRole('link', { name: 'Processor page' }).click();
    await page.getByRole('heading', { level: 1, name: 'Processor' }).waitFor();
    // On the Processor page itself, the banner does not link to it: it points to the form below.
    await expect(banner.getByRole('link').count()).resolves.toBe(0);
    await expect(banner.textContent()).resolves.toMatch(/Connect again below with a new restricted key\.$/);

    // A member, who can do nothing about it, sees no banner.
    const { context: other, page: memberPage } = await desktopPage(world.current.browser);
    try {
      await world.current
        .db('users')
        .where({ email: world.current.member.email })
        .update({ password_hash: await hashPassword(PASSWORD) });
      await signInThroughForm(memberPage, world.current.url, world.current.member.email);
      await memberPage.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await expect(memberPage.getByRole('alert', { name: 'Stripe refused the API key' }).count()).resolves.toBe(0);
      // Nor can retry parked events (owners only, as POST /processor/retry).
      await memberPage.goto(`${world.current.url}/dashboard/settings/processor`);
      await memberPage.getByRole('heading', { level: 1, name: 'The processor is not shown to members' }).waitFor();
      await expect(memberPage.getByRole('button', { name: 'Retry parked events' }).count()).resolves.toBe(0);
    } finally {
      await other.close();
    }
  });
});
