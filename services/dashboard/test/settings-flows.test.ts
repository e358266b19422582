import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { DEFAULT_FX_RATES_PER_USD, EVENT_TYPES } from '@retention/core';
import { OPERATOR, recordSecurityEvent, recoverCampaign, setFxRate } from '@retention/domain';
import { verifyWebhook } from '@retention/sdk';
import { eventually } from '@retention/testkit';
import {
  FakeStripe,
  newApiKey,
  newWebhookSecret,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from '../../worker/test/processor/stripe-kit.js';
import { desktopPage, PASSWORD, useDashboardWorld } from './support/dashboard-world.js';
import { description, expectFieldError, expectFieldErrorGone } from './support/field-errors.js';
import { checkPage, SCREENSHOT_DIR, screenshot } from './support/page-checks.js';

/**
 * The dashboard's settings flows in a real headless Chromium against the real API app,
 * PostgreSQL, Redis, a worker and an HTTPS receiver. Controls are found by role and name only.
 * The tests run in order and share one signed-in page, as a person would use it.
 */
// The local Stripe stand-in answers the processor page's key; started before the world reads its URL.
let stripe: FakeStripe;
const stripeKey = newApiKey();
beforeAll(async () => {
  stripe = await FakeStripe.start(stripeKey);
});
afterAll(() => stripe?.close());
const world = useDashboardWorld({ stripeApiBase: () => stripe.url });
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  ({ context, page } = await desktopPage(world.current.browser));
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.current.url });
});

afterAll(async () => {
  await context?.close();
});

const heading = (name: string) => page.getByRole('heading', { level: 1, name });

/** The server's refusal of a name of spaces (NameInput), as the field shows it. */
const NAME_REFUSED =
  'That must be 1 to 200 characters, not all spaces, without control characters or invisible formatting characters.';

/**
 * The focused element: the dialog it is in (by its title) and its name (a button's or link's
 * text or aria-label; `main` for the content region; `body` when focus fell to the page).
 */
function focusedControl(): Promise<{ inDialog: string | null; label: string }> {
  return page.evaluate(`(() => {
    const active = document.activeElement;
    const title = active?.closest('dialog')?.querySelector('h2')?.textContent ?? null;
    if (!active || active === document.body) return { inDialog: title, label: 'body' };
    if (active.tagName === 'MAIN') return { inDialog: title, label: 'main' };
    return { inDialog: title, label: active.getAttribute('aria-label') ?? active.textContent.trim() };
  })()`);
}

/**
 * What the Workspace page says of a workspace marked connected to its payment processor with no
 * Stripe connection behind it: one story, not "Not connected" beside "counts as connected". In
 * the customer's words: it said "brought in by whoever runs this service".
 */
const PROCESSOR_STORY =
  "Stripe is not connected. This workspace's records were added without Stripe (imported, or demo data), and " +
  'outbound webhooks are sent for them. Connect Stripe to have them arrive from Stripe directly.';
/**
 * The Processor page's sentence for the same, after its line "Stripe: Not connected": the same
 * story less the status, which it repeated ("Stripe: Not connected" then "Stripe is not connected.").
 */
const PROCESSOR_PAGE_STORY =
  "This workspace's records were added without Stripe (imported, or demo data), and outbound webhooks are sent " +
  'for them. Connect Stripe with the steps below to have them arrive from Stripe directly.';

/**
 * The Processor page's words before Connect, after it, once Stripe's first event came, and after
 * Disconnect, each after the status line and so without saying the status again.
 */
const CONNECT_PAUSE_WARNING =
  "Without an API key, outbound webhooks are paused from when you click Connect until Stripe's first event " +
  'arrives: events recorded in between, and deliveries waiting for a retry, are never sent. With a key (step 4), ' +
  'Stripe is connected at once and nothing pauses.';
const PENDING_STORY =
  'Outbound webhooks are paused until it arrives, and events recorded meanwhile are not sent later.';
const CONNECTED_STORY = "Stripe's events arrive by themselves and outbound webhooks are sent.";
const DISCONNECTED_STORY =
  'Outbound webhooks are paused until Stripe is connected, and events recorded meanwhile are not sent later.';
const DISCONNECT_CONSEQUENCES =
  "Disconnect Stripe? From then on, Stripe's events to this workspace's webhook URL are refused with 400. Outbound " +
  'webhooks stop: events recorded while disconnected are not sent, then or later, and deliveries waiting for a ' +
  'retry are dropped. Connecting again resumes them.';

async function openSettings(tab: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: tab }).click();
  await heading(tab).waitFor();
}

/**
 * Adds someone to the team behind the page's back (another tab, the operator), opens Team afresh
 * (Workspace first, so Team loads the new row), and gives their row, waited for, and a way to
 * take them out again.
 */
async function addToTeamAndOpen(person: { email: string; role: string; name: string; highest_former_role?: string }) {
  const [added] = await world.current
    .db('users')
    .insert({ workspace_id: world.current.workspace.id, ...person })
    .returning<Array<{ id: string }>>('id');
  await openSettings('Workspace');
  await openSettings('Team');
  const row = page.getByRole('row', { name: new RegExp(person.email.replaceAll('.', '\\.')) });
  await row.getByRole('button', { name: 'Remove' }).waitFor();
  return { row, id: added!.id, remove: () => world.current.db('users').where({ id: added!.id }).delete() };
}

describe('signing in', () => {
  it('accepts the invitation link, then is signed in with the navigation shown', async () => {
    await page.goto(world.current.ownerInvitation);
    await page.getByRole('heading', { name: /Join Acme <b>Subscriptions<\/b>/ }).waitFor();
    // A name of spaces is refused at the Name field, in words, and spends nothing.
    await page.getByLabel('Name').fill('   ');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await expectFieldError(page.getByRole('main'), page.getByLabel('Name'), NAME_REFUSED, 'name');
    // Edited, the field no longer says the refusal of what it held, before the next submit.
    await page.getByLabel('Name').fill('Olive Owner');
    await expectFieldErrorGone(page.getByRole('main'), page.getByLabel('Name'), NAME_REFUSED);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await heading('Overview').waitFor();
    const main = page.getByRole('navigation', { name: 'Main' });
    for (const name of ['Overview', 'Campaigns', 'Customers', 'Cancel sessions', 'Settings']) {
      await expect(main.getByRole('link', { name, exact: true }).isVisible()).resolves.toBe(true);
    }
    // Markup in a name is text, never HTML.
    await expect(page.locator('b').count()).resolves.toBe(0);
    // The link is spent.
    const again = await fetch(
      world.current.ownerInvitation.replace('/dashboard/invite/', '/dashboard/api/invitations/'),
    );
    expect(again.status).toBe(404);
  });

  it('signs out from the account menu, and back in with the keyboard alone', async () => {
    // Escape closes the menu and leaves the focus on its button, not on the page's body.
    await page.getByRole('button', { name: /Account menu/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'detached' });
    await expect(focusedControl()).resolves.toEqual({ inDialog: null, label: expect.stringMatching(/Account menu/) });
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // A page that needs a session sends the viewer to sign in, and back there afterwards.
    await page.goto(`${world.current.url}/dashboard/settings/team`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/team');

    // The email field has the focus on arrival; after a refusal the password field does, empty.
    const focused = (label: string) =>
      page.getByLabel(label).evaluate((element) => element === element.ownerDocument.activeElement);
    await expect(focused('Email')).resolves.toBe(true);
    await page.keyboard.type(world.current.workspace.ownerEmail);
    await page.keyboard.press('Tab');
    await page.keyboard.type('wrong password!!');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: /./ }).waitFor();
    await expect(focused('Password')).resolves.toBe(true);
    await expect(page.getByLabel('Password').inputValue()).resolves.toBe('');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await heading('Team').waitFor();
  });
});

describe('API tokens', () => {
  let token = '';

  it('refuses a name of spaces at the Name field, in words', async () => {
    await openSettings('API tokens');
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create token' });
    await dialog.getByLabel('Name').fill('   ');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await expectFieldError(dialog, dialog.getByLabel('Name'), NAME_REFUSED, 'name');
    await dialog.getByLabel('Name').fill('CI');
    await expectFieldErrorGone(dialog, dialog.getByLabel('Name'), NAME_REFUSED);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('creates a token with the keyboard alone and shows its value once, with Copy and a curl line', async () => {
    await openSettings('API tokens');
    await page.getByRole('button', { name: 'Create token' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Create token' });
    await dialog.waitFor();
    await page.keyboard.type('Reporting <script>alert(1)</script>');
    await page.keyboard.press('Enter');
    const created = page.getByRole('dialog', { name: 'Token created' });
    await created.waitFor();
    // The new content starts with the focus on its first control, not on the page's body.
    await expect(focusedControl()).resolves.toEqual({ inDialog: 'Token created', label: 'Copy' });
    // Tab goes round the dialog's controls, never through the body, and comes back to Copy.
    const lap: string[] = [];
    for (let step = 0; step < 4; step += 1) {
      await page.keyboard.press('Tab');
      const focused = await focusedControl();
      expect(focused.inDialog).toBe('Token created');
      lap.push(focused.label);
    }
    expect(lap).toEqual(['Done', 'Close', 'Copy', 'Done']);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await expect(focusedControl()).resolves.toEqual({ inDialog: 'Token created', label: 'Done' });
    token = (await created.getByLabel('Token').textContent()) ?? '';
    expect(token).toMatch(/^sk_live_[A-Za-z0-9]{32}$/);
    await expect(created.getByText(`curl ${world.current.url}/api/v1/campaigns`).isVisible()).resolves.toBe(true);
    await created.getByRole('button', { name: 'Copy' }).press('Enter');
    await created.getByText('Copied to the clipboard.').waitFor();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(token);
    await page.keyboard.press('Escape');
    await created.waitFor({ state: 'detached' });
    // Back on the button that opened it.
    await expect(focusedControl()).resolves.toEqual({ inDialog: null, label: 'Create token' });
    const row = page.getByRole('row', { name: /Reporting <script>/ });
    await expect(row.getByText(`sk_live_…${token.slice(-4)}`).isVisible()).resolves.toBe(true);
    // Last used is written at most once a minute a token: the page says so, so a token used a moment
    // ago that still reads an older time does not look broken.
    await expect(page.getByText('Last used can be up to a minute behind.').isVisible()).resolves.toBe(true);
  });

  it('the token reads /api/v1; once revoked (confirmed), its next request is 401', async () => {
    const read = () =>
      fetch(`${world.current.url}/api/v1/campaigns`, { headers: { authorization: `Bearer ${token}` } });
    expect((await read()).status).toBe(200);
    const row = page.getByRole('row', { name: /Reporting <script>/ });
    // Named "Revoke" in every row, and described by its token's name, which a screen reader says after it.
    await expect(describedAs(row.getByRole('button', { name: 'Revoke', exact: true }))).resolves.toMatch(
      /^Reporting <script>/,
    );
    await row.getByRole('button', { name: 'Revoke' }).focus();
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Revoke token' });
    await confirm.waitFor();
    // A confirmation starts on its safe answer; Tab reaches the action.
    await expect(focusedControl()).resolves.toEqual({ inDialog: 'Revoke token', label: 'Cancel' });
    await page.keyboard.press('Tab');
    await expect(focusedControl()).resolves.toEqual({ inDialog: 'Revoke token', label: 'Revoke' });
    await page.keyboard.press('Enter');
    await confirm.waitFor({ state: 'detached' });
    await row.getByText(/Revoked/).waitFor();
    // Said in the page's status line, not only by the row's badge.
    await page
      .getByRole('status')
      .filter({ hasText: 'Reporting <script>alert(1)</script> revoked: its next request to the API is refused.' })
      .waitFor();
    // The Revoke button is gone: the focus is on the page's content, not the body, and the next
    // Tab goes on from there.
    await expect(focusedControl()).resolves.toEqual({ inDialog: null, label: 'main' });
    const refused = await read();
    expect(refused.status).toBe(401);
  });
});

describe('outbound webhooks', () => {
  let secret = '';
  let firstRolled = '';
  /** The secret the latest roll made. */
  let latestSecret = '';

  /**
   * Rolls the secret with a 1 h overlap from the endpoint page; the receiver then checks the new
   * secret, returned.
   */
  async function rollWithOneHourOverlap(): Promise<string> {
    await page.getByRole('button', { name: 'Roll secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll secret' });
    await dialog.getByLabel('Overlap (hours)').fill('1');
    await dialog.getByRole('button', { name: 'Roll secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    const current = (await shown.getByLabel('Signing secret').textContent()) ?? '';
    await shown.getByRole('button', { name: 'Done' }).click();
    world.current.receiver.route(hookPath, { secret: current, behaviour: { kind: 'status', status: 200 } });
    return current;
  }
  const hookPath = '/hooks/acme';

  it('adds an endpoint: live https:// check, the server refusal at the URL field, the secret once', async () => {
    await openSettings('Outbound webhooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add endpoint' });
    // Empty, Save is enabled, as in the other forms, and says at the field what is missing
    // (the browser's required check) rather than staying disabled with no reason given.
    const valueMissing = (label: string) =>
      dialog
        .getByLabel(label)
        .evaluate((input) => (input as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing);
    const focused = (label: string) =>
      dialog.getByLabel(label).evaluate((input) => input === input.ownerDocument.activeElement);
    await expect(dialog.getByRole('button', { name: 'Save' }).isDisabled()).resolves.toBe(false);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(valueMissing('Name')).resolves.toBe(true);
    await expect(focused('Name')).resolves.toBe(true);
    await dialog.getByLabel('Name').fill('Acme CRM');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(valueMissing('URL')).resolves.toBe(true);
    await expect(focused('URL')).resolves.toBe(true);
    await expect(dialog.isVisible()).resolves.toBe(true);
    await dialog.getByLabel('URL').fill('http://example.com/hook');
    await dialog.getByText('The URL must start with https://').waitFor();
    await expect(dialog.getByRole('button', { name: 'Save' }).isDisabled()).resolves.toBe(true);
    await expect(dialog.getByRole('checkbox', { name: 'All events' }).isChecked()).resolves.toBe(true);
    // Each type is named by its code and described in the dashboard's words and by what it
    // means, in a sentence shown under the code; the words tick it too.
    const recovered = dialog.getByRole('checkbox', { name: 'recovery.recovered', exact: true });
    await expect(description(recovered)).resolves.toBe(
      'Payment recovered A recovery campaign ended with the payment received.',
    );
    await expect(
      dialog.getByText('A recovery campaign ended with the payment received.', { exact: true }).isVisible(),
    ).resolves.toBe(true);
    for (const type of EVENT_TYPES) {
      await expect(description(dialog.getByRole('checkbox', { name: type, exact: true }))).resolves.toMatch(
        /^[A-Z][a-z, ]+ [A-Z][^.]+\.$/,
      );
    }
    await dialog.getByText('Payment recovered', { exact: true }).click();
    await expect(recovered.isChecked()).resolves.toBe(true);
    const allEvents = dialog.getByRole('checkbox', { name: 'All events' });
    await expect(allEvents.isChecked()).resolves.toBe(false);
    await allEvents.check();
    await expect(recovered.isChecked()).resolves.toBe(false);
    // Unticking All events goes on to choosing types, every one of them ticked (it used to stay
    // ticked, refusing the click).
    await allEvents.uncheck();
    const typeBoxes = EVENT_TYPES.map((type) => dialog.getByRole('checkbox', { name: type, exact: true }));
    for (const box of typeBoxes) await expect(box.isChecked()).resolves.toBe(true);
    // Each box at its own size, as All events' is: beside a long sentence, one shrank to a sliver.
    const widthOf = async (box: Locator) => (await box.boundingBox())!.width;
    const allWidth = await widthOf(allEvents);
    for (const box of typeBoxes) expect(Math.abs((await widthOf(box)) - allWidth)).toBeLessThan(0.5);
    // None chosen, Save says so at the types, focuses the first, and sends nothing.
    for (const box of typeBoxes) await box.uncheck();
    await expect(allEvents.isChecked()).resolves.toBe(false);
    await dialog.getByLabel('Name').fill('Acme CRM');
    await dialog.getByLabel('URL').fill(world.current.receiver.url(hookPath));
    const endpointsNow = () =>
      world.current
        .db('webhook_endpoints')
        .where({ workspace_id: world.current.workspace.id })
        .count('* as count')
        .first();
    const before = await endpointsNow();
    await dialog.getByRole('button', { name: 'Save' }).click();
    const noneChosen = dialog
      .getByRole('alert')
      .filter({ hasText: 'Choose at least one event type, or tick All events.' });
    await noneChosen.waitFor();
    await expect(typeBoxes[0]!.evaluate((box) => box === box.ownerDocument.activeElement)).resolves.toBe(true);
    await expect(typeBoxes[0]!.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByRole('dialog', { name: 'Endpoint added' }).count()).resolves.toBe(0);
    await expect(endpointsNow()).resolves.toEqual(before);
    // Ticking a choice takes the error away.
    await allEvents.check();
    await expect(noneChosen.count()).resolves.toBe(0);
    await expect(typeBoxes[0]!.getAttribute('aria-invalid')).resolves.toBeNull();

    // The server's refusal (`url: must not contain a user name or password (user:password@ before the host)`) shows at the URL field, its reason
    // in the server's words as a sentence, without the field's name.
    await dialog.getByLabel('URL').fill('https://user:pass@example.com/hook');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expectFieldError(
      dialog,
      dialog.getByLabel('URL'),
      'That must not contain a user name or password (user:password@ before the host).',
      'url',
    );
    await expect(dialog.getByLabel('Name').getAttribute('aria-invalid')).resolves.toBeNull();
    // Editing another field leaves it; correcting the URL takes it away at once, before Save.
    await dialog.getByLabel('Name').fill('Acme CRM ');
    await expectFieldError(
      dialog,
      dialog.getByLabel('URL'),
      'That must not contain a user name or password (user:password@ before the host).',
      'url',
    );
    await dialog.getByLabel('Name').fill('Acme CRM');

    await dialog.getByLabel('URL').fill(world.current.receiver.url(hookPath));
    await expectFieldErrorGone(
      dialog,
      dialog.getByLabel('URL'),
      'That must not contain a user name or password (user:password@ before the host).',
    );
    await dialog.getByRole('button', { name: 'Save' }).click();
    const shown = page.getByRole('dialog', { name: 'Endpoint added' });
    secret = (await shown.getByLabel('Signing secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    world.current.receiver.route(hookPath, { secret, behaviour: { kind: 'status', status: 200, body: 'thanks' } });
    await shown.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row', { name: /Acme CRM/ });
    await expect(row.getByRole('switch', { name: 'Enabled' }).getAttribute('aria-checked')).resolves.toBe('true');
    // Named "Enabled" in every row, and described by its endpoint's name.
    await expect(describedAs(row.getByRole('switch', { name: 'Enabled', exact: true }))).resolves.toMatch(/^Acme CRM/);
    // Shown once: reloading the page shows it nowhere.
    await page.reload();
    await page.getByRole('row', { name: /Acme CRM/ }).waitFor();
    await expect(page.getByText(secret).count()).resolves.toBe(0);
  });

  it('Send test shows the status the receiver answered', async () => {
    await page.getByRole('link', { name: 'Acme CRM' }).click();
    await heading('Acme CRM').waitFor();
    // The breadcrumb names where it leads and where one is, with no dangling slash.
    const trail = page.getByRole('navigation', { name: 'Breadcrumb' });
    await expect(trail.textContent()).resolves.toBe('Outbound webhooks / Acme CRM');
    await expect(trail.getByRole('link', { name: 'Outbound webhooks' }).isVisible()).resolves.toBe(true);
    // "Enabled" once: the switch's name, not again as the label above it.
    await expect(page.locator('.endpoint-summary dt').allTextContents()).resolves.not.toContain('Enabled');
    await expect(page.getByRole('switch', { name: 'Enabled' }).count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText(/Test delivery:/).waitFor();
    await expect(page.getByRole('status').filter({ hasText: 'Test delivery:' }).textContent()).resolves.toMatch(
      /HTTP 200 · \d+ ms · Succeeded/,
    );
    await world.current.receiver.waitForRequests(hookPath, 1);
  });

  it("shows a domain action's delivery in the log, expands it, and resends it", async () => {
    await world.current.startWorker();
    await recoverCampaign(world.current.db, { id: world.current.workspace.campaignIds[0]!, via: 'retry' });
    const entry = page.getByRole('button', { name: /recovery\.recovered/ });
    await eventually(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await page.waitForTimeout(200);
        return (await entry.count()) > 0;
      },
      15_000,
      300,
    );
    await expect(entry.first().getAttribute('aria-expanded')).resolves.toBe('false');
    await entry.first().click();
    await expect(entry.first().getAttribute('aria-expanded')).resolves.toBe('true');
    await page.getByText('"type": "recovery.recovered"').waitFor();
    await page.getByText('thanks').first().waitFor();
    const before = world.current.receiver.requestsTo(hookPath).length;
    await page.getByRole('button', { name: 'Resend' }).click();
    await page.getByText(/Resent:/).waitFor();
    const requests = await world.current.receiver.waitForRequests(hookPath, before + 1);
    expect(requests.at(-1)!.body.type).toBe('recovery.recovered');
  });

  it('rolls the secret with an overlap: each delivery is signed with both, each verifies', async () => {
    await page.getByRole('button', { name: 'Roll secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll secret' });
    // A day's overlap unless asked otherwise: a roll clicked through keeps a live receiver working.
    await expect(dialog.getByLabel('Overlap (hours)').inputValue()).resolves.toBe('24');
    await dialog.getByLabel('Overlap (hours)').fill('1');
    await dialog.getByRole('button', { name: 'Roll secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    const rolled = (await shown.getByLabel('Signing secret').textContent()) ?? '';
    expect(rolled).toMatch(/^whsec_/);
    expect(rolled).not.toBe(secret);
    // Which secrets are accepted until when, as the roll answered.
    await shown
      .getByText(/signed with this secret, until the next roll, and with the secret it replaced, until /)
      .waitFor();
    await shown.getByRole('button', { name: 'Done' }).click();

    const before = world.current.receiver.requestsTo(hookPath).length;
    await recoverCampaign(world.current.db, { id: world.current.workspace.campaignIds[1]!, via: 'retry' });
    const requests = await world.current.receiver.waitForRequests(hookPath, before + 1);
    const delivered = requests.at(-1)!;
    const header = delivered.headers['x-service-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhook(delivered.rawBody, header, secret).type).toBe('recovery.recovered');
    expect(verifyWebhook(delivered.rawBody, header, rolled).type).toBe('recovery.recovered');
    firstRolled = rolled;
  });

  /** Send test from the page, and the request the receiver got. */
  async function sendTestRequest() {
    const before = world.current.receiver.requestsTo(hookPath).length;
    await page.getByRole('button', { name: 'Send test' }).click();
    return (await world.current.receiver.waitForRequests(hookPath, before + 1)).at(-1)!;
  }

  it('during the overlap, says until when the previous secret is accepted and rolls only once "End the overlap now" is ticked', async () => {
    await page.getByRole('button', { name: 'Roll secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll secret' });
    // One plain sentence: until when (local time, as the dashboard shows times), and that a new
    // roll must end it; never the server's ISO time nor its CLI flag.
    const note = dialog.getByText(
      /^The previous secret is still accepted until .+, so a new roll must end that now\.$/,
    );
    await note.waitFor();
    await expect(note.locator('time').getAttribute('datetime')).resolves.toMatch(/Z$/);
    await expect(note.locator('time').textContent()).resolves.not.toMatch(/Z|T\d/);
    await expect(dialog.getByText(/Rolling before then/).count()).resolves.toBe(0);
    // The roll the server would refuse cannot be sent: the button waits for the box.
    const roll = dialog.getByRole('button', { name: 'Roll secret' });
    await expect(roll.isDisabled()).resolves.toBe(true);
    await dialog.getByRole('checkbox', { name: 'End the overlap now' }).check();
    await expect(roll.isDisabled()).resolves.toBe(false);
    await dialog.getByRole('checkbox', { name: 'End the overlap now' }).uncheck();
    await expect(roll.isDisabled()).resolves.toBe(true);
    await expect(dialog.getByText(/end_overlap|409/).count()).resolves.toBe(0);
    // Cancelled: nothing changed, the receiver's original secret still verifies.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const kept = await sendTestRequest();
    const keptHeader = kept.headers['x-service-signature'] as string;
    expect(verifyWebhook(kept.rawBody, keptHeader, secret).type).toBe('ping');
    expect(verifyWebhook(kept.rawBody, keptHeader, firstRolled).type).toBe('ping');

    await page.getByRole('button', { name: 'Roll secret' }).click();
    await dialog.getByRole('checkbox', { name: 'End the overlap now' }).check();
    await dialog.getByLabel('Overlap (hours)').fill('0');
    await dialog.getByRole('button', { name: 'Roll secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    const newest = (await shown.getByLabel('Signing secret').textContent()) ?? '';
    latestSecret = newest;
    await shown
      .getByText('Deliveries are signed with this secret alone; the secrets before it are no longer accepted.')
      .waitFor();
    await shown.getByRole('button', { name: 'Done' }).click();
    world.current.receiver.route(hookPath, { secret: newest, behaviour: { kind: 'status', status: 200 } });
    const alone = await sendTestRequest();
    const aloneHeader = alone.headers['x-service-signature'] as string;
    expect(aloneHeader.match(/v1=/g)).toHaveLength(1);
    expect(verifyWebhook(alone.rawBody, aloneHeader, newest).type).toBe('ping');
    expect(() => verifyWebhook(alone.rawBody, aloneHeader, firstRolled)).toThrow();
  });

  it('ends an overlap without rolling: "End overlap now" shows only while one is open, and asks first', async () => {
    const endOverlap = page.getByRole('button', { name: 'End overlap now' });
    // The last roll had no overlap: nothing to end, no button.
    await expect(endOverlap.count()).resolves.toBe(0);
    const replaced = latestSecret;
    const current = await rollWithOneHourOverlap();

    // Cancelled: the overlap stays open, both secrets sign.
    await endOverlap.click();
    const confirm = page.getByRole('dialog', { name: 'End overlap now' });
    await confirm.getByText(/^The previous signing secret is accepted until .+\. End that now\?/).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await sendTestRequest()).headers['x-service-signature']).toMatch(/v1=.*v1=/);

    await endOverlap.click();
    await confirm.getByRole('button', { name: 'End overlap' }).click();
    await page.getByText('Overlap ended: deliveries are signed with the current secret alone.').waitFor();
    await endOverlap.waitFor({ state: 'detached' });
    // Its button is gone with the overlap: the focus is on a control that stays, not lost to the body.
    await expect(focusedControl()).resolves.toEqual({ inDialog: null, label: 'Roll secret' });
    const alone = await sendTestRequest();
    const header = alone.headers['x-service-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(1);
    expect(verifyWebhook(alone.rawBody, header, current).type).toBe('ping');
    expect(() => verifyWebhook(alone.rawBody, header, replaced)).toThrow();
  });

  it('a later roll with an overlap clears "Overlap ended", which it makes untrue', async () => {
    await rollWithOneHourOverlap();
    await page.getByRole('button', { name: 'End overlap now' }).waitFor();
    await expect(page.getByText(/signed with the current secret alone/).count()).resolves.toBe(0);
  });

  it('screenshots the endpoint page at 1280 and 390 px', async () => {
    await screenshot(page, 'endpoint-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'endpoint-390');
    // Nothing wider than the screen at 390 px but the tables' own scrolling.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});

describe('a member', () => {
  let member: BrowserContext;

  afterAll(async () => {
    await member?.close();
  });

  it('sees no admin controls, and the API refuses an admin route with 403', async () => {
    member = await world.current.browser.newContext();
    const memberPage = await member.newPage();
    memberPage.setDefaultTimeout(10_000);
    // Settings opens on the first tab a member has: API tokens is not one (member-settings.test.ts).
    await memberPage.goto(`${world.current.url}/dashboard/settings`);
    await memberPage.getByLabel('Email').fill(world.current.member.email);
    await memberPage.getByLabel('Password').fill(PASSWORD);
    await memberPage.getByRole('button', { name: 'Sign in' }).click();
    await memberPage.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    await expect(memberPage.getByRole('link', { name: 'API tokens' }).count()).resolves.toBe(0);
    await expect(memberPage.getByRole('link', { name: 'Security log' }).count()).resolves.toBe(0);

    await memberPage.getByRole('row', { name: /Acme CRM/ }).waitFor();
    await expect(memberPage.getByRole('button', { name: 'Add endpoint' }).count()).resolves.toBe(0);
    // The endpoint's state in words, not a switch that does nothing.
    await expect(memberPage.getByRole('switch').count()).resolves.toBe(0);
    await memberPage.getByRole('link', { name: 'Acme CRM' }).click();
    await memberPage.getByRole('heading', { level: 2, name: 'Delivery log' }).waitFor();
    for (const name of ['Send test', 'Roll secret', 'Delete', 'Edit']) {
      await expect(memberPage.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
    }
    await memberPage.getByRole('link', { name: 'Team' }).click();
    await memberPage.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    await memberPage.getByRole('cell', { name: 'Olive Owner' }).waitFor();
    await expect(memberPage.getByRole('button', { name: 'Invite' }).count()).resolves.toBe(0);
    await expect(memberPage.getByRole('button', { name: 'Remove' }).count()).resolves.toBe(0);

    // The Workspace page tells a member the owner's whole story of the processor (no Stripe
    // behind the flag), told who may connect it, with no link to the owners' Processor page.
    await memberPage.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Workspace' }).click();
    await memberPage.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
    await memberPage.getByText(PROCESSOR_STORY.replace('Connect Stripe', 'An owner can connect Stripe')).waitFor();
    await expect(memberPage.getByRole('link', { name: 'Processor' }).count()).resolves.toBe(0);

    // A tab this role cannot see says so (heading, tab title, a way back) rather than silently
    // showing another tab.
    for (const [route, what, who] of [
      ['tokens', 'The API tokens list', 'owners and admins'],
      ['processor', 'The processor', 'owners'],
      ['security-log', 'The security log', 'owners and admins'],
    ] as const) {
      await memberPage.goto(`${world.current.url}/dashboard/settings/${route}`);
      const title = `${what} is not shown to members`;
      await memberPage.getByRole('heading', { level: 1, name: title }).waitFor();
      await memberPage.getByText(`Only ${who} can see it.`).waitFor();
      expect(new URL(memberPage.url()).pathname).toBe(`/dashboard/settings/${route}`);
      await memberPage.waitForFunction(`document.title.startsWith(${JSON.stringify(`${title} · `)})`);
      await memberPage.getByRole('link', { name: 'Back to Settings' }).click();
      await memberPage.getByRole('heading', { level: 1, name: 'Outbound webhooks' }).waitFor();
    }

    const cookie = (await member.cookies()).map((each) => `${each.name}=${each.value}`).join('; ');
    const refused = await fetch(`${world.current.url}/dashboard/api/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: world.current.url, cookie },
      body: JSON.stringify({ name: 'sneaky' }),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('forbidden');
  });
});

describe('the team page', () => {
  it('invites someone with a role and shows the link to copy; changes a role and back', async () => {
    await openSettings('Team');
    await page.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite someone' });
    // Each role says what it may do, tied to its radio button for screen readers.
    const role = (name: string) =>
      dialog.getByRole('group', { name: 'Role' }).getByRole('radio', { name, exact: true });
    await expect(role('Member').isChecked()).resolves.toBe(true);
    await expect(description(role('Owner'))).resolves.toMatch(/^Owners can do everything, including connecting/);
    await expect(description(role('Admin'))).resolves.toMatch(/^Admins can manage API tokens, .* but not the payment/);
    await expect(description(role('Member'))).resolves.toMatch(
      /^Members can read the overview, .* but change nothing and see no API tokens or security log\.$/,
    );
    // An address the browser lets through and the server does not is refused at the Email field.
    await dialog.getByLabel('Email').fill('sam@localhost');
    await dialog.getByRole('button', { name: 'Create invitation link' }).click();
    await expectFieldError(
      dialog,
      dialog.getByLabel('Email'),
      'That must be an email address such as ann@example.com.',
      'email',
    );
    await dialog.getByLabel('Email').fill('newcomer@acme.test');
    await expectFieldErrorGone(
      dialog,
      dialog.getByLabel('Email'),
      'That must be an email address such as ann@example.com.',
    );
    await role('Admin').check();
    await dialog.getByRole('button', { name: 'Create invitation link' }).click();
    const created = page.getByRole('dialog', { name: 'Invitation created' });
    invitationLink = (await created.getByLabel('Invitation link').textContent()) ?? '';
    expect(invitationLink).toMatch(new RegExp(`^${world.current.url}/dashboard/invite/[\\w-]+$`));
    // Until when the link works, in the words New link uses, and as the row's Expires gives it.
    const sentence = created.getByText(
      /^Send this link to newcomer@acme\.test; it works once, for 7 days \(until .+\)\.$/,
    );
    const until = (await sentence.locator('time').textContent()) ?? '';
    await created.getByRole('button', { name: 'Done' }).click();
    await created.waitFor({ state: 'detached' });
    // The dialog, its form replaced by the link, still gives the focus back to its opener.
    await expect(focusedControl()).resolves.toEqual({ inDialog: null, label: 'Invite' });
    await page.getByRole('row', { name: /newcomer@acme\.test/ }).waitFor();
    await page
      .getByRole('row', { name: /newcomer@acme\.test/ })
      .getByRole('cell', { name: until, exact: true })
      .waitFor();
    // A role shown, not picked, is named as a picked one is: the invitation's, and the viewer's own.
    await page
      .getByRole('row', { name: /newcomer@acme\.test/ })
      .getByRole('cell', { name: 'Admin', exact: true })
      .waitFor();
    await page
      .getByRole('row', { name: /owner@acme\.test/ })
      .getByRole('cell', { name: 'Owner', exact: true })
      .waitFor();

    const roleOf = () => page.getByRole('row', { name: /member@acme\.test/ }).getByLabel('Role of member@acme.test');
    // The roles are named as the Invite dialog names them.
    await expect(roleOf().getByRole('option').allTextContents()).resolves.toEqual(['Owner', 'Admin', 'Member']);
    const storedRole = async () => (await world.current.db('users').where({ email: 'member@acme.test' }).first()).role;
    const confirm = page.getByRole('dialog', { name: 'Change role' });
    const status = page.getByRole('status').filter({ hasText: 'Saved' });
    // Picking a role saves nothing until the confirmation, which says what the role may do.
    await roleOf().selectOption('admin');
    await confirm.getByText('Make Mo Member an admin? Admins can manage API tokens').waitFor();
    // Without email, a raise says what it means for a forgotten password before it is saved.
    await confirm
      .getByText('if they forget their password, only an owner can make them a password reset link')
      .waitFor();
    expect(await storedRole()).toBe('member');
    // Cancel puts the select back; nothing is saved.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await expect(roleOf().inputValue()).resolves.toBe('member');
    await expect(roleOf().evaluate((element) => element === element.ownerDocument.activeElement)).resolves.toBe(true);
    await roleOf().selectOption('admin');
    await confirm.getByRole('button', { name: 'Change role' }).click();
    await status.getByText('Saved: Mo Member is now an admin.').waitFor();
    await confirm.waitFor({ state: 'detached' });
    expect(await storedRole()).toBe('admin');
    await expect(roleOf().inputValue()).resolves.toBe('admin');
    // Focus goes back to the row's role control, not the page's body.
    await expect(roleOf().evaluate((element) => element === element.ownerDocument.activeElement)).resolves.toBe(true);

    // One arrow key on the focused, closed select (a change in Chromium) only asks; Escape undoes it.
    await roleOf().focus();
    await page.keyboard.press('ArrowDown');
    await confirm.getByText('Make Mo Member a member?').waitFor();
    // A move down adds nothing of the kind.
    await expect(confirm.getByText('forget their password').count()).resolves.toBe(0);
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await expect(roleOf().inputValue()).resolves.toBe('admin');
    await page.reload();
    await heading('Team').waitFor();
    await expect(roleOf().inputValue()).resolves.toBe('admin');
    expect(await storedRole()).toBe('admin');

    await roleOf().selectOption('owner');
    await confirm
      .getByText(
        'only the person who runs this service can make them a password reset link. This stays so even if they are later made an admin',
      )
      .waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });

    await roleOf().selectOption('member');
    await confirm.getByRole('button', { name: 'Change role' }).click();
    await status.getByText('Saved: Mo Member is now a member.').waitFor();
    expect(await storedRole()).toBe('member');
  });

  it('offers no Reset link for another owner without email (the link to copy would be their account), but does for a member', async () => {
    const partner = await addToTeamAndOpen({ email: 'partner@acme.test', role: 'owner', name: 'Pat Partner' });
    await expect(partner.row.getByRole('button', { name: 'Password reset link' }).count()).resolves.toBe(0);
    const memberRow = page.getByRole('row', { name: /member@acme\.test/ });
    await expect(memberRow.getByRole('button', { name: 'Password reset link' }).count()).resolves.toBe(1);
    await partner.remove();
  });

  it('reads the team again after a refused Reset link: the row then shows the change made in another tab', async () => {
    const raised = await addToTeamAndOpen({ email: 'raised@acme.test', role: 'member', name: 'Ray Raised' });
    const { row } = raised;
    // Made an owner in another tab: this owner may no longer copy them a link.
    await world.current.db('users').where({ id: raised.id }).update({ role: 'owner' });
    await row.getByRole('button', { name: 'Password reset link' }).click();
    await page.getByText(/you may make one only for someone whose role is below yours/).waitFor();
    // The team is read again as the refusal shows, not before it: the row changes a moment later
    // (read at once, it was still "member" now and then).
    const role = row.getByRole('combobox', { name: 'Role of raised@acme.test' });
    await eventually(async () => (await role.inputValue()) === 'owner', 5_000);
    await expect(row.getByRole('button', { name: 'Password reset link' }).count()).resolves.toBe(0);
    await raised.remove();
  });

  it('marks the viewer’s own row “(you)”, and no other', async () => {
    await openSettings('Team');
    const rows = page.getByRole('row').filter({ hasText: '(you)' });
    await rows.first().waitFor();
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.first().textContent()).resolves.toContain(world.current.workspace.ownerEmail);
  });

  it('offers no Reset link for a member who was an owner before: the server would refuse it (GET /team says so)', async () => {
    const former = await addToTeamAndOpen({
      email: 'former@acme.test',
      role: 'member',
      highest_former_role: 'owner',
      name: 'Fay Former',
    });
    await expect(former.row.getByRole('button', { name: 'Password reset link' }).count()).resolves.toBe(0);
    await former.remove();
  });

  it('Cancel invitation asks to confirm first; Keep invitation keeps it', async () => {
    const invitationRow = page.getByRole('row', { name: /newcomer@acme\.test/ });
    await invitationRow.getByRole('button', { name: 'Cancel invitation' }).click();
    const confirm = page.getByRole('dialog', { name: 'Cancel invitation' });
    await confirm.getByText(/Cancel the invitation of newcomer@acme\.test\? Its link stops working/).waitFor();
    await confirm.getByRole('button', { name: 'Keep invitation' }).click();
    await confirm.waitFor({ state: 'detached' });
    // Still pending, as the server has it.
    await page.reload();
    await invitationRow.getByRole('button', { name: 'Cancel invitation' }).waitFor();
  });

  it('says, before sending, that inviting an address with a pending invitation replaces it', async () => {
    await page.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite someone' });
    const warning = dialog.getByText(
      'newcomer@acme.test already has a pending Admin invitation: creating a new link replaces it, and the old link stops working.',
    );
    await dialog.getByLabel('Email').fill('someone.else@acme.test');
    await expect(warning.count()).resolves.toBe(0);
    await dialog.getByLabel('Email').fill('Newcomer@acme.test');
    await warning.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect(focusedControl()).resolves.toEqual({ inDialog: null, label: 'Invite' });
  });

  it("centres a row's text and its buttons on the row's middle, in the people's and the invitations' tables", async () => {
    const middle = (locator: Locator) =>
      locator.evaluate((element) => {
        const box = element.getBoundingClientRect();
        return box.top + box.height / 2;
      });
    const memberRow = page.getByRole('row', { name: /member@acme\.test/ });
    const invitationRow = page.getByRole('row', { name: /newcomer@acme\.test/ });
    // The member's row is as tall as its role picker; the invitation's as its button.
    for (const [row, texts, button] of [
      [memberRow, ['Mo Member', 'member@acme.test'], 'Remove'],
      [invitationRow, ['newcomer@acme.test'], 'Cancel invitation'],
    ] as const) {
      const rowMiddle = await middle(row);
      for (const text of texts) {
        expect(Math.abs((await middle(row.getByText(text, { exact: true }))) - rowMiddle)).toBeLessThanOrEqual(2);
      }
      expect(Math.abs((await middle(row.getByRole('button', { name: button }))) - rowMiddle)).toBeLessThanOrEqual(2);
    }
  });

  /**
   * A confirmation the server refuses (the person or the invitation gone meanwhile, by this
   * owner's own hand in another tab) stays open with the server's words in it, once, its button
   * enabled again; closing it forgets them. Before, Cancel invitation showed nothing in the
   * dialog (its refusal stood on the page behind the modal), and Remove and a role change closed
   * it and showed the refusal above the table. Each case loads the page afresh, so one failing
   * leaves no dialog open over the next.
   */
  describe('a refused confirmation', () => {
    /** The API called as this person would from another tab. */
    const fromAnotherTab = async (method: string, route: string, body?: unknown) => {
      const cookie = (await context.cookies()).map((each) => `${each.name}=${each.value}`).join('; ');
      const reply = await fetch(`${world.current.url}/dashboard/api${route}`, {
        method,
        headers: { 'content-type': 'application/json', origin: world.current.url, cookie },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      expect(reply.ok).toBe(true);
    };
    /** A member of the workspace, listed on the Team page as it loads. */
    const newMember = async (email: string, name: string): Promise<string> => {
      const [row] = await world.current
        .db('users')
        .insert({ workspace_id: world.current.workspace.id, email, role: 'member', name })
        .returning('id');
      return (row as { id: string }).id;
    };
    const openTeam = async () => {
      await page.goto(`${world.current.url}/dashboard/settings/team`);
      await heading('Team').waitFor();
      await page.getByRole('table', { name: 'People' }).waitFor();
    };
    /** Every alert on the page with some text, in the dialog or behind it. */
    const alerts = () => page.getByRole('alert').filter({ hasText: /./ });
    const expectRefusedInDialog = async (dialog: Locator, refusal: string, confirmLabel: string) => {
      await dialog.getByRole('alert').getByText(refusal).waitFor();
      await expect(alerts().allTextContents()).resolves.toEqual([refusal]);
      await expect(dialog.getByRole('button', { name: confirmLabel }).isEnabled()).resolves.toBe(true);
    };

    it('Cancel invitation, the invitation cancelled meanwhile: the reason in the dialog; Keep invitation forgets it', async () => {
      await fromAnotherTab('POST', '/team/invitations', { email: 'changed.mind@acme.test', role: 'member' });
      const invitation = await world.current.db('account_links').where({ email: 'changed.mind@acme.test' }).first();
      await openTeam();
      await page
        .getByRole('row', { name: /changed\.mind@acme\.test/ })
        .getByRole('button', { name: 'Cancel invitation' })
        .click();
      const confirm = page.getByRole('dialog', { name: 'Cancel invitation' });
      await confirm.getByText(/Cancel the invitation of changed\.mind@acme\.test\?/).waitFor();
      await fromAnotherTab('DELETE', `/team/invitations/${invitation.id}`);
      await confirm.getByRole('button', { name: 'Cancel invitation' }).click();
      await expectRefusedInDialog(
        confirm,
        'This invitation is no longer pending: it was accepted or canceled.',
        'Cancel invitation',
      );
      await confirm.getByRole('button', { name: 'Keep invitation' }).click();
      await confirm.waitFor({ state: 'detached' });
      await expect(alerts().count()).resolves.toBe(0);
    });

    it('Remove, the person removed meanwhile: the reason in the dialog, not above the table; Cancel forgets it', async () => {
      const leaverId = await newMember('leaver@acme.test', 'Lee Leaver');
      await openTeam();
      await page
        .getByRole('row', { name: /leaver@acme\.test/ })
        .getByRole('button', { name: 'Remove' })
        .click();
      const confirm = page.getByRole('dialog', { name: 'Remove from the workspace' });
      await confirm.getByText('Remove Lee Leaver?', { exact: false }).waitFor();
      await fromAnotherTab('DELETE', `/team/members/${leaverId}`);
      await confirm.getByRole('button', { name: 'Remove' }).click();
      await expectRefusedInDialog(confirm, 'This person is no longer in the workspace.', 'Remove');
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await expect(alerts().count()).resolves.toBe(0);
    });

    it('a role change, the person removed meanwhile: the reason in the dialog; Cancel puts the select back and focuses it', async () => {
      const switcherId = await newMember('switcher@acme.test', 'Sid Switcher');
      await openTeam();
      const roleOf = () =>
        page.getByRole('row', { name: /switcher@acme\.test/ }).getByLabel('Role of switcher@acme.test');
      await roleOf().selectOption('admin');
      const confirm = page.getByRole('dialog', { name: 'Change role' });
      await confirm.getByText('Make Sid Switcher an admin?', { exact: false }).waitFor();
      await fromAnotherTab('DELETE', `/team/members/${switcherId}`);
      await confirm.getByRole('button', { name: 'Change role' }).click();
      await expectRefusedInDialog(confirm, 'This person is no longer in the workspace.', 'Change role');
      await expect(page.getByRole('status').filter({ hasText: 'Saved' }).count()).resolves.toBe(0);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await expect(alerts().count()).resolves.toBe(0);
      await expect(roleOf().inputValue()).resolves.toBe('member');
      await expect(roleOf().evaluate((element) => element === element.ownerDocument.activeElement)).resolves.toBe(true);
    });
  });
});

let invitationLink = '';

/**
 * Every page, signed in and not: no serious or critical axe violation; screenshots at 1280 and 390
 * px.
 */
describe('every page', () => {
  // The overview and the lists are checked in insight-pages.test.ts, with more data in them.
  const signedInPages: Array<[string, string, string]> = [
    ['/settings/tokens', 'API tokens', 'tokens'],
    ['/settings/webhooks', 'Outbound webhooks', 'webhooks'],
    ['/settings/team', 'Team', 'team'],
    ['/settings/workspace', 'Workspace', 'workspace'],
    ['/settings/security-log', 'Security log', 'security-log'],
    ['/settings/processor', 'Processor', 'processor'],
    ['/account', 'Account', 'account'],
  ];

  const scan = (target: Page, name: string) => checkPage(target, name);

  // One test a page: each runs axe and takes two full-page screenshots, a few seconds each, and
  // together they outgrew one test's time on a busy machine.
  it.each(signedInPages)('signed in: %s (%s) passes axe and fits 390 px', async (route, title, name) => {
    await page.goto(`${world.current.url}/dashboard${route}`);
    await heading(title).waitFor();
    await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
    expect(await scan(page, name)).toEqual([]);
  });

  it('signed in: an endpoint with a delivery open, and its form, pass axe and fit 390 px', async () => {
    await openSettings('Outbound webhooks');
    await page.getByRole('link', { name: 'Acme CRM' }).click();
    await page.getByRole('heading', { level: 2, name: 'Delivery log' }).waitFor();
    await page
      .getByRole('button', { name: /recovery\.recovered/ })
      .first()
      .click();
    const problems = await scan(page, 'endpoint');
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    // Edit shows the server's refusal at its field as Add does; scanned with it shown.
    await form.getByLabel('URL').fill('https://example.com/hook#part');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectFieldError(
      form,
      form.getByLabel('URL'),
      'That must not contain a #fragment, which is never sent.',
      'url',
    );
    problems.push(...(await scan(page, 'endpoint-form')));
    // Corrected, the URL is no longer said to be refused (nor marked invalid) before the next Save.
    await form.getByLabel('URL').fill('https://example.com/hook');
    await expectFieldErrorGone(form, form.getByLabel('URL'), 'That must not contain a #fragment, which is never sent.');
    await page.keyboard.press('Escape');
    expect(problems).toEqual([]);
    if (process.env.UPDATE_DOCS_SCREENSHOTS === '1') {
      if (!SCREENSHOT_DIR)
        throw new Error('UPDATE_DOCS_SCREENSHOTS=1 needs SCREENSHOT_DIR: where the screenshots are taken');
      const docs = path.resolve(import.meta.dirname, '../../../docs/screenshots');
      await mkdir(docs, { recursive: true });
      for (const file of ['endpoint-1280.png', 'tokens-390.png']) {
        await copyFile(path.join(SCREENSHOT_DIR, file), path.join(docs, `dashboard-${file}`));
      }
    }
  });

  it('signed out: sign-in, forgot password and invitation pages pass axe', async () => {
    const anonymous = await world.current.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const target = await anonymous.newPage();
      const problems: string[] = [];
      await target.goto(`${world.current.url}/dashboard/sign-in`);
      await target.getByRole('button', { name: 'Sign in' }).waitFor();
      problems.push(...(await scan(target, 'sign-in')));
      await target.getByRole('link', { name: 'Forgot your password?' }).click();
      // This service has no SMTP: the page says so before asking for an address, and whom to ask.
      await target
        .getByRole('status')
        .filter({ hasText: 'This service does not send email, so it cannot send you a link.' })
        .waitFor();
      expect(await target.getByText('Password reset link beside your name in Settings, Team').count()).toBe(1);
      expect(await target.getByRole('button', { name: 'Send reset link' }).count()).toBe(0);
      problems.push(...(await scan(target, 'forgot-password')));
      await target.goto(invitationLink);
      await target.getByRole('button', { name: 'Accept invitation' }).waitFor();
      problems.push(...(await scan(target, 'invitation')));
      expect(problems).toEqual([]);
    } finally {
      await anonymous.close();
    }
  });
});

describe('account, workspace and security log', () => {
  it('renames the workspace (owner), lists the changes in the security log, renames the account', async () => {
    // A failed load of the workspace is said, with Try again, not left as a missing sentence.
    await page.context().setOffline(true);
    await openSettings('Workspace');
    const failed = page.getByRole('alert');
    await failed.getByRole('button', { name: 'Try again' }).waitFor();
    await page.context().setOffline(false);
    await failed.getByRole('button', { name: 'Try again' }).click();
    await failed.waitFor({ state: 'detached' });
    // What the processor flag means for the owner, in the same words as the Processor page: the
    // world's workspace is marked connected with no Stripe connection behind it (as the demo's).
    const flag = page.getByText(PROCESSOR_STORY, { exact: false });
    await expect(page.getByText(/counts as connected/).count()).resolves.toBe(0);
    await expect(flag.getByRole('link', { name: 'Processor' }).getAttribute('href')).resolves.toBe(
      '/dashboard/settings/processor',
    );
    // The Display currency is a choice among the codes with an exchange rate, each named: the
    // shipped defaults and one the operator added (`fx set`), which the page offers once loaded.
    await setFxRate(world.current.db, { currency: 'xts', per_usd: '2' });
    await page.reload();
    const currency = page.getByLabel('Display currency');
    await currency.getByRole('option', { name: 'XTS', exact: false }).waitFor({ state: 'attached' });
    await expect(currency.evaluate((select) => (select as unknown as { value: string }).value)).resolves.toBe('usd');
    const offered = await currency
      .getByRole('option')
      .evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value));
    expect(offered).toEqual([...Object.keys(DEFAULT_FX_RATES_PER_USD), 'xts'].sort());
    await currency.getByRole('option', { name: 'EUR · Euro', exact: true }).waitFor({ state: 'attached' });
    const formerName = await page.getByLabel('Workspace name').inputValue();
    await currency.selectOption('eur');
    await page.getByLabel('Workspace name').fill('Acme & Co');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('banner').getByText('Acme & Co').waitFor();
    // Saved again as it is: a success, and nothing in the log (it wrote an entry naming no change).
    const savedAgain = page.waitForResponse(
      (response) => response.request().method() === 'PATCH' && response.url().endsWith('/dashboard/api/workspace'),
    );
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await savedAgain).status()).toBe(200);
    // An endpoint renamed in its Edit form: the log says from what to what.
    await openSettings('Outbound webhooks');
    await page.getByRole('link', { name: 'Acme CRM' }).click();
    await heading('Acme CRM').waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    const endpointForm = page.getByRole('dialog', { name: 'Edit endpoint' });
    await endpointForm.getByLabel('Name').fill('Acme CRM (billing)');
    await endpointForm.getByRole('button', { name: 'Save' }).click();
    await endpointForm.waitFor({ state: 'detached' });
    await heading('Acme CRM (billing)').waitFor();
    // The dialog closing is not all it says: the page's status line does.
    await page.getByRole('status').filter({ hasText: 'Endpoint saved.' }).waitFor();

    // An endpoint deleted with the operator CLI's --actor: the record names the user, and so does Who.
    const cliUser = await world.current
      .db('users')
      .where({ workspace_id: world.current.workspace.id, email: 'member@acme.test' })
      .first<{ id: string; name: string }>('id', 'name');
    await recordSecurityEvent(world.current.db, {
      workspace_id: world.current.workspace.id,
      action: 'webhook.deleted',
      actor: { ...OPERATOR, user_id: cliUser.id },
      target: { type: 'webhook_endpoint', id: cliUser.id, label: 'https://cli-actor.example/hook' },
    });

    // And one run in the name of someone removed from the team since: the entry kept their address.
    const [leaver] = await world.current
      .db('users')
      .insert({ workspace_id: world.current.workspace.id, email: 'leaver@acme.test', role: 'admin', name: 'Lee Ver' })
      .returning<Array<{ id: string }>>('id');
    await recordSecurityEvent(world.current.db, {
      workspace_id: world.current.workspace.id,
      action: 'webhook.deleted',
      actor: { ...OPERATOR, user_id: leaver!.id },
      target: { type: 'webhook_endpoint', id: leaver!.id, label: 'https://cli-leaver.example/hook' },
    });
    await world.current.db('users').where({ id: leaver!.id }).delete();

    await openSettings('Security log');
    await page
      .getByRole('row', { name: /webhook\.deleted/ })
      .filter({ hasText: 'https://cli-actor.example/hook' })
      .getByText(`${cliUser.name} via operator CLI`, { exact: true })
      .waitFor({ timeout: 5_000 });
    await page
      .getByRole('row', { name: /webhook\.deleted/ })
      .filter({ hasText: 'https://cli-leaver.example/hook' })
      .getByText('leaver@acme.test via operator CLI', { exact: true })
      .waitFor({ timeout: 5_000 });
    for (const action of ['token.created', 'token.revoked', 'workspace.updated']) {
      await page.getByRole('cell', { name: action }).first().waitFor();
    }
    // Each entry in words, the code kept under them; what it changed by the Settings pages'
    // names; a loopback address (the test's browser) named shortly, the address kept, what it
    // means in full for a screen reader.
    const created = page.getByRole('row', { name: /token\.created/ }).first();
    await created.getByText('API token created', { exact: true }).waitFor();
    await created.getByText(/^API token: /).waitFor();
    const loopback = '(::1|127\\.0\\.0\\.1|::ffff:127\\.0\\.0\\.1)';
    await created.getByText(new RegExp(`^This machine \\(${loopback}\\)$`)).waitFor();
    await created
      .getByRole('cell', { name: new RegExp(`^This machine or a proxy on it \\(${loopback}\\)$`) })
      .waitFor();
    await expect(page.getByRole('cell', { name: /^(::1|127\.0\.0\.1|::ffff:127\.0\.0\.1)$/ }).count()).resolves.toBe(0);
    await expect(page.getByText(/^api_token:/).count()).resolves.toBe(0);
    // What each change was, in words: the workspace's one save (its name and currency), the Team
    // test's role changes (member to admin, and back), by the Team page's role names.
    const workspaceRows = page.getByRole('row', { name: /workspace\.updated/ });
    await expect(workspaceRows.count()).resolves.toBe(1);
    await workspaceRows
      .getByText(`Name: ${formerName} → Acme & Co · Display currency: USD → EUR`, { exact: true })
      .waitFor();
    const roleRows = page.getByRole('row', { name: /team\.role_changed/ }).filter({ hasText: 'member@acme.test' });
    await roleRows.getByText('Admin → Member', { exact: true }).waitFor();
    await roleRows.getByText('Member → Admin', { exact: true }).waitFor();
    await page
      .getByRole('row', { name: /webhook\.updated/ })
      .getByText('Name: Acme CRM → Acme CRM (billing)', { exact: true })
      .waitFor();

    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByText('Owner', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'Account' }).click();
    await heading('Account').waitFor();
    await page.getByText('owner@acme.test · Owner', { exact: true }).waitFor();
    await page.getByLabel('Name').fill('Olive O.');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('button', { name: /Olive O\. Account menu/ }).waitFor();
    await page.getByText('Name saved.').waitFor();
    // A later outcome of another form is its own: the name's "saved" goes, not left beside it.
    await page.getByLabel('Current password').fill('not the password at all');
    await page.getByLabel('New password').fill('another long password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByLabel('Current password').and(page.locator('[aria-invalid="true"]')).waitFor();
    await expect(page.getByText('Name saved.').count()).resolves.toBe(0);
  });

  it('a note goes with the edit that makes it stale: Workspace\'s "Saved.", Account\'s "Name saved.", Invite\'s refusal', async () => {
    const said = (text: string) => page.getByRole('status').filter({ hasText: text });
    await openSettings('Workspace');
    const name = page.getByLabel('Workspace name');
    const saved = await name.inputValue();
    const saveAgain = async () => {
      await name.fill(saved);
      await page.getByRole('button', { name: 'Save' }).click();
      await said('Saved.').waitFor();
    };
    // Emptied, made too long (its own error then shows at the field), or changed and not saved:
    // "Saved." no longer describes the form, and goes.
    await saveAgain();
    await name.fill('');
    await expect(said('Saved.').count()).resolves.toBe(0);
    await saveAgain();
    await name.fill('x'.repeat(300));
    await expect(description(name)).resolves.toBe('At most 200 characters: this has 300.');
    await expect(said('Saved.').count()).resolves.toBe(0);
    await saveAgain();
    await name.press('End');
    await page.keyboard.type(' Ltd');
    await expect(said('Saved.').count()).resolves.toBe(0);
    // The Display currency is an edit of the form too.
    await saveAgain();
    const currency = page.getByLabel('Display currency');
    const shown = await currency.inputValue();
    await currency.selectOption(shown === 'gbp' ? 'usd' : 'gbp');
    await expect(said('Saved.').count()).resolves.toBe(0);
    await currency.selectOption(shown);

    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('link', { name: 'Account' }).click();
    await heading('Account').waitFor();
    const accountName = page.getByLabel('Name');
    await page.getByRole('button', { name: 'Save name' }).click();
    await said('Name saved.').waitFor();
    await accountName.fill('Someone else');
    await expect(said('Name saved.').count()).resolves.toBe(0);

    // A refusal about the form as a whole (no field of it) goes when any field changes.
    await openSettings('Team');
    await page.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite someone' });
    const refusal = dialog
      .getByRole('alert')
      .filter({ hasText: 'That is you: you are already an owner of this workspace.' });
    // One's own address is said to be one's own before sending, not "they cannot be invited
    // again"; once sent, the server's refusal alone says it, word for word.
    const ownAddress = dialog.getByText(
      'That is your own address: you are already on the team as Owner, and cannot invite yourself.',
      { exact: true },
    );
    await dialog.getByLabel('Email').fill('OWNER@acme.test');
    await ownAddress.waitFor();
    await expect(dialog.getByText(/cannot be invited again/).count()).resolves.toBe(0);
    await dialog.getByLabel('Email').fill('owner@acme.test');
    await dialog.getByRole('button', { name: 'Create invitation link' }).click();
    await refusal.waitFor();
    await expect(ownAddress.count()).resolves.toBe(0);
    await expect(dialog.getByText(/cannot be invited again/).count()).resolves.toBe(0);
    await dialog.getByLabel('Email').fill('someone.else@acme.test');
    await expect(refusal.count()).resolves.toBe(0);
    // So does one after a role is chosen.
    await dialog.getByLabel('Email').fill('owner@acme.test');
    await dialog.getByRole('button', { name: 'Create invitation link' }).click();
    await refusal.waitFor();
    await dialog.getByRole('group', { name: 'Role' }).getByRole('radio', { name: 'Admin', exact: true }).check();
    await expect(refusal.count()).resolves.toBe(0);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });
});

describe('password reset', () => {
  it('an owner makes a reset link for a member, who sets a new password with it and is signed in', async () => {
    await openSettings('Team');
    await page
      .getByRole('row', { name: /member@acme\.test/ })
      .getByRole('button', { name: 'Password reset link' })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Password reset link' });
    const link = (await dialog.getByLabel('Reset link').textContent()) ?? '';
    await dialog.getByRole('button', { name: 'Done' }).click();

    const other = await world.current.browser.newContext();
    try {
      const target = await other.newPage();
      target.setDefaultTimeout(10_000);
      await target.goto(link);
      // A password over 256 characters (the field takes it) is refused at the field, in words.
      await target.getByLabel('New password').fill('p'.repeat(257));
      await target.getByRole('button', { name: 'Set password and sign in' }).click();
      await expectFieldError(
        target.getByRole('main'),
        target.getByLabel('New password'),
        'That must be 10 to 256 characters.',
        'password',
      );
      await target.getByLabel('New password').fill('a brand new passphrase');
      await expectFieldErrorGone(
        target.getByRole('main'),
        target.getByLabel('New password'),
        'That must be 10 to 256 characters.',
      );
      await target.getByRole('button', { name: 'Set password and sign in' }).click();
      await target.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      // Spent: the same link is refused, with the server's message.
      await target.goto(link);
      await target.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
    } finally {
      await other.close();
    }
  });
});

describe('the processor page', () => {
  it('shows the URL for Stripe before connecting, connects with its secret, and reads connected once Stripe posts', async () => {
    await openSettings('Processor');
    await page.getByText('Stripe: Not connected').waitFor();
    // The world's workspace is marked connected by the operator CLI: the page says why its
    // webhooks are sent all the same, in the Workspace page's words (no "CLI", no "Status").
    const why = page.getByText(PROCESSOR_PAGE_STORY);
    await why.waitFor();
    await expect(why.textContent()).resolves.not.toMatch(/operator|CLI/);
    await expect(page.getByText(/^Status:/).count()).resolves.toBe(0);
    const webhookUrl = await page.getByLabel('Webhook URL for Stripe').textContent();
    expect(webhookUrl).toMatch(new RegExp(`^${world.current.url}/processor/stripe/[0-9a-f-]{36}$`));

    // With no secret yet, Connect is enabled as the endpoint form's Save is: pressed, it says which
    // field is missing (the browser's required check) and focuses it, and nothing is sent.
    const connectForm = page.getByRole('form', { name: 'Connect Stripe' });
    const secretField = connectForm.getByLabel('Webhook signing secret');
    await expect(secretField.inputValue()).resolves.toBe('');
    await expect(connectForm.getByRole('button', { name: 'Connect' }).isDisabled()).resolves.toBe(false);
    const connects: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().endsWith('/processor/connect')) connects.push(request.url());
    };
    page.on('request', onRequest);
    await connectForm.getByRole('button', { name: 'Connect' }).click();
    await expect(
      secretField.evaluate(
        (input) => (input as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing,
      ),
    ).resolves.toBe(true);
    await expect(secretField.evaluate((input) => input === input.ownerDocument.activeElement)).resolves.toBe(true);
    page.off('request', onRequest);
    expect(connects).toEqual([]);

    // A secret that is not one is refused at its field, in words.
    await connectForm.getByLabel('Webhook signing secret').fill('whsec_short');
    await page.getByRole('button', { name: 'Connect' }).click();
    const tooShort =
      "That is too short: Stripe's signing secrets are whsec_ followed by 16 to 200 letters and digits; " +
      "copy the whole secret from the endpoint's page in Stripe.";
    await expectFieldError(connectForm, connectForm.getByLabel('Webhook signing secret'), tooShort, 'webhook_secret');

    // Before connecting, the form says what Connect does to outbound webhooks until Stripe's
    // first event, and that what happens in between is never sent.
    await expect(connectForm.getByRole('note', { name: 'Before you connect' }).textContent()).resolves.toBe(
      CONNECT_PAUSE_WARNING,
    );

    const secret = newWebhookSecret();
    await page.getByLabel('Webhook signing secret').fill(secret);
    await expectFieldErrorGone(connectForm, connectForm.getByLabel('Webhook signing secret'), tooShort);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('Waiting for the first event from Stripe').waitFor();
    // Webhooks are paused from now until the first event: the page says so at once, not the
    // flag from before Connect ("sent meanwhile"), with no reload.
    await page.getByText(PENDING_STORY).waitFor();
    await expect(page.getByText('outbound webhooks are sent meanwhile', { exact: false }).count()).resolves.toBe(0);
    // The URL shown before connecting is the connection's URL.
    await expect(page.getByLabel('Webhook URL for Stripe').textContent()).resolves.toBe(webhookUrl);
    await expect(page.getByLabel('Webhook signing secret').inputValue()).resolves.toBe('');

    const posted = await postToConnection(webhookUrl!, stripeEvent('customer.created', stripeCustomer()), secret);
    expect(posted.status).toBe(200);
    await page.reload();
    await page.getByText('Connected and syncing').waitFor();
    await page.getByText(CONNECTED_STORY).waitFor();
    // Connected, nothing pauses: the warning is gone.
    await expect(page.getByRole('note', { name: 'Before you connect' }).count()).resolves.toBe(0);
    await page.getByText(`whsec_…${secret.slice(-4)}`).waitFor();
    // Connecting again is for rolling the secret or the key, not for a second account.
    await page
      .getByRole('form', { name: 'Connect again' })
      .getByText('the connection and its webhook URL stay the same', { exact: false })
      .waitFor();
    await expect(page.content()).resolves.not.toContain(secret);
  });

  it('connects again with a key, keeps it when the key field is left empty, and removes it once confirmed', async () => {
    const keyField = page.getByLabel('Restricted API key (optional)');
    const stored = `rk_…${stripeKey.slice(-4)}`;
    const row = () =>
      world.current.db('processor_connections').where({ workspace_id: world.current.workspace.id }).first();
    await page.getByLabel('Webhook signing secret').fill(newWebhookSecret());
    await keyField.fill(stripeKey);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByText(stored, { exact: true }).waitFor();
    const keyed = await row();
    expect(keyed.api_key_last4).toBe(stripeKey.slice(-4));

    // The form says the field is optional and that leaving it empty keeps the key shown.
    await expect(keyField.getAttribute('aria-describedby')).resolves.toBeTruthy();
    await page.getByText(`Leave empty to keep the current key (${stored})`, { exact: false }).waitFor();
    const rolled = newWebhookSecret();
    await page.getByLabel('Webhook signing secret').fill(rolled);
    await expect(keyField.inputValue()).resolves.toBe('');
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByText(`whsec_…${rolled.slice(-4)}`).waitFor();
    await page.getByText(stored, { exact: true }).waitFor();
    await page.getByText('Connected and syncing').waitFor();
    expect((await row()).api_key_sealed).toBe(keyed.api_key_sealed);

    // Removing it asks first; Cancel keeps it.
    await page.getByRole('button', { name: 'Remove API key' }).click();
    let confirm = page.getByRole('dialog', { name: 'Remove API key' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect((await row()).api_key_sealed).toBe(keyed.api_key_sealed);
    await page.getByRole('button', { name: 'Remove API key' }).click();
    confirm = page.getByRole('dialog', { name: 'Remove API key' });
    await confirm.getByRole('button', { name: 'Remove API key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByText(stored, { exact: true }).waitFor({ state: 'detached' });
    await expect(page.getByRole('button', { name: 'Remove API key' }).count()).resolves.toBe(0);
    expect((await row()).api_key_sealed).toBeNull();
    await page.getByText('Leave empty to connect without a key', { exact: false }).waitFor();

    await openSettings('Security log');
    await page.getByText('processor.key_removed').first().waitFor();
    await expect(page.content()).resolves.not.toContain(stripeKey);
  });

  it('disconnects only once confirmed, saying what it stops, and the page then tells webhooks are paused', async () => {
    const row = () =>
      world.current.db('processor_connections').where({ workspace_id: world.current.workspace.id }).first();
    await openSettings('Processor');
    await page.getByText('Connected and syncing').waitFor();
    // Cancel keeps the connection as it was.
    await page.getByRole('button', { name: 'Disconnect' }).click();
    let confirm = page.getByRole('dialog', { name: 'Disconnect Stripe' });
    await expect(confirm.getByText(DISCONNECT_CONSEQUENCES).count()).resolves.toBe(1);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect((await row()).status).toBe('connected');
    await page.getByText('Connected and syncing').waitFor();

    await page.getByRole('button', { name: 'Disconnect' }).click();
    confirm = page.getByRole('dialog', { name: 'Disconnect Stripe' });
    await confirm.getByRole('button', { name: 'Disconnect' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByText('Stripe: Disconnected').waitFor();
    await page.getByText(DISCONNECTED_STORY).waitFor();
    expect((await row()).status).toBe('disconnected');
    // The form warns again before connecting.
    await page.getByRole('note', { name: 'Before you connect' }).waitFor();
  });
});

/**
 * A text longer than its field takes (Field's `limit`, docs/dashboard-ui.md "Field errors"): the
 * field keeps all of it and says it is too long, naming the limit (and says so once in its live
 * region as the text crosses the limit: keyboard-focus.test); the browser refuses the
 * submit, focusing the field, and nothing is sent. The inputs had `maxLength`, which kept the
 * first 200 characters of a paste and saved them without a word.
 */
describe('a text longer than its field takes', () => {
  const TOO_LONG = 'At most 200 characters: this has 250.';
  const long = 'Quarterly billing reports for the finance team '.repeat(6).slice(0, 250);

  /** The field's state: its value's length, invalid, focused, the browser's message. */
  const fieldState = (field: Locator) =>
    field.evaluate((element) => {
      const input = element as unknown as { value: string; validationMessage: string };
      return {
        length: input.value.length,
        invalid: element.getAttribute('aria-invalid'),
        focused: element.ownerDocument.activeElement === element,
        validationMessage: input.validationMessage,
      };
    });

  /**
   * A field's live region (for screen readers only) holding `text`, said as the text crossed its
   * limit.
   */
  const saidInLiveRegion = (within: Page | Locator, text: string) =>
    within.getByRole('status').filter({ hasText: text });

  /** The requests to the dashboard API that change something, made while `act` runs. */
  async function changesSent(act: () => Promise<void>): Promise<string[]> {
    const sent: string[] = [];
    const listener = (request: { method(): string; url(): string }) => {
      if (request.method() !== 'GET' && request.url().includes('/dashboard/api/')) sent.push(request.url());
    };
    page.on('request', listener);
    try {
      await act();
      // Long enough for a request the submit would have made to have left.
      await page.waitForTimeout(300);
    } finally {
      page.off('request', listener);
    }
    return sent;
  }

  it('Create token: a pasted name of 250 characters is kept whole, refused at the field, and nothing is created', async () => {
    expect(long).toHaveLength(250);
    const tokens = () => world.current.db('api_tokens').count({ count: '*' }).first();
    const tokensBefore = await tokens();
    await openSettings('API tokens');
    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create token' });
    const name = dialog.getByLabel('Name');
    // Pasted, as a person would: through the clipboard, Control+V.
    await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(long)})`);
    await name.focus();
    await page.keyboard.press('Control+V');
    await expect(fieldState(name)).resolves.toMatchObject({ length: 250, invalid: 'true' });
    await expect(description(name)).resolves.toBe(`Where the token is used, e.g. “billing reports”. ${TOO_LONG}`);
    const sent = await changesSent(() => dialog.getByRole('button', { name: 'Create token' }).click());
    expect(sent).toEqual([]);
    await expect(fieldState(name)).resolves.toEqual({
      length: 250,
      invalid: 'true',
      focused: true,
      validationMessage: TOO_LONG,
    });
    // Shown once, at the field, and said once in its live region as the paste crossed the limit.
    await expect(dialog.getByText(TOO_LONG).count()).resolves.toBe(2);
    await expect(saidInLiveRegion(dialog, TOO_LONG).count()).resolves.toBe(1);
    await expect(tokens()).resolves.toEqual(tokensBefore);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('Workspace: a name of 250 characters is refused at the field and not saved; 200 emoji, one character each as the server counts, are saved', async () => {
    const workspaceName = async () =>
      ((await world.current.db('workspaces').where({ id: world.current.workspace.id }).first()) as { name: string })
        .name;
    const before = await workspaceName();
    await openSettings('Workspace');
    const name = page.getByLabel('Workspace name');
    await name.fill(long);
    await saidInLiveRegion(page, TOO_LONG).waitFor({ state: 'attached' });
    const sent = await changesSent(() => page.getByRole('button', { name: 'Save' }).click());
    expect(sent).toEqual([]);
    await expect(fieldState(name)).resolves.toEqual({
      length: 250,
      invalid: 'true',
      focused: true,
      validationMessage: TOO_LONG,
    });
    await expect(description(name)).resolves.toBe(TOO_LONG);
    await expect(page.getByRole('status').filter({ hasText: 'Saved.' }).count()).resolves.toBe(0);
    await expect(workspaceName()).resolves.toBe(before);

    // At the limit the field is quiet and the server takes it: 200 characters, each an emoji of
    // two UTF-16 units (JavaScript's length 400), as ajv and Postgres count them.
    const atLimit = '🧾'.repeat(200);
    await name.fill(atLimit);
    await expect(fieldState(name)).resolves.toMatchObject({ invalid: null, validationMessage: '' });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect(workspaceName()).resolves.toBe(atLimit);
    // One more is over, and said so in the same count.
    await name.fill(`${atLimit}🧾`);
    await saidInLiveRegion(page, 'At most 200 characters: this has 201.').waitFor({ state: 'attached' });
    await expect(description(name)).resolves.toBe('At most 200 characters: this has 201.');
    await world.current.db('workspaces').where({ id: world.current.workspace.id }).update({ name: before });
  });
});

/** The text of what describes `control` (its aria-describedby), as a screen reader says it after its name. */
function describedAs(control: Locator): Promise<string> {
  return control.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '')
      .join(' ')
      .trim(),
  );
}
