import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { description } from './support/field-errors.js';
import { EVENT_TYPE_DESCRIPTIONS } from '../src/labels.js';

/**
 * An endpoint's delivery log, in a real headless Chromium against the real API and an HTTPS
 * receiver (docs/dashboard-ui.md, "Delivery log"): its filters live in the page's address, so a
 * reload keeps them; an attempt's details tell a next attempt made (by the retry or a Resend),
 * one still to come and one overdue apart, also when a filter hides it; a Resend with exactly a
 * page of rows shown keeps every row shown, and one the filters hide adds none.
 *
 * No worker runs. The log holds exactly one page (50), newest first:
 * - `recovery.lost`: one failed attempt a minute ago, its retry due in an hour;
 * - `cancel.lost`: one failed attempt 30 minutes ago, its retry due 20 minutes ago and not made;
 * - `recovery.recovered`: a failed attempt 40 minutes ago, its retry made 35 minutes ago, succeeded;
 * - `recovery.opened`: 46 failed attempts from 200 minutes ago, each retried a minute later, the
 *   last one given up (no retry).
 *
 * The endpoint subscribes to those four types: the endpoints list, its page, its Edit form and
 * its log's rows say them in words, with the code where an engineer looks for it.
 *
 * A second endpoint's log holds more than three pages: one `recovery.opened` delivery of 160
 * failed attempts, a minute apart, given up. A Resend with 150 of them shown adds its attempt at
 * the top, and only it: Load more then goes on with no row twice and none missed.
 */
const world = useDashboardWorld();

const EMAIL = 'owner@acme-log.test';
const HOOK_PATH = '/hooks/acme-log';
const BUSY_PATH = '/hooks/acme-busy';
const BUSY_ATTEMPTS = 160;
/** The log's endpoint's event types, in the catalog's order, with their words (labels.ts). */
const SUBSCRIBED = [
  ['recovery.opened', 'Payment failed, recovery started'],
  ['recovery.recovered', 'Payment recovered'],
  ['recovery.lost', 'Payment lost'],
  ['cancel.lost', 'Customer canceled'],
] as const;
const MINUTE = 60_000;
let context: BrowserContext;
let page: Page;
let endpointId = '';
let workspaceId = '';
let endpointUrl = '';
let busyId = '';

interface Made {
  at: number;
  /** Its retry's time; null for none. */
  next: number | null;
  succeeded?: boolean;
}

/**
 * A delivery of an event kept out of the outbox (nothing dispatches it), with its attempts; to
 * the log's endpoint unless another is given.
 */
async function delivery(
  type: string,
  attempts: Made[],
  endpoint: { id: string; url: string } = { id: endpointId, url: endpointUrl },
): Promise<void> {
  const { db } = world.current;
  const createdAt = new Date(attempts[0]!.at);
  const event = await db.transaction(async (trx) => {
    const [row] = await trx('events')
      .insert({ workspace_id: workspaceId, type, data: { hello: 'world' }, created_at: createdAt })
      .returning(['id', 'seq']);
    await trx('event_outbox').where({ event_id: row.id }).delete();
    return row as { id: string; seq: string };
  });
  const last = attempts[attempts.length - 1]!;
  const [made] = await db('webhook_deliveries')
    .insert({
      workspace_id: workspaceId,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_seq: event.seq,
      event_type: type,
      status: last.succeeded ? 'succeeded' : last.next === null ? 'failed' : 'pending',
      attempt_count: attempts.length,
      next_attempt_at: last.next === null ? null : new Date(last.next),
      created_at: createdAt,
    })
    .returning('id');
  await db('webhook_attempts').insert(
    attempts.map(({ at, next, succeeded }, index) => ({
      delivery_id: made.id,
      endpoint_id: endpoint.id,
      event_type: type,
      attempt: index + 1,
      outcome: succeeded ? 'succeeded' : 'failed',
      http_status: succeeded ? 200 : 503,
      error: succeeded ? null : 'HTTP 503',
      duration_ms: 12,
      attempted_at: new Date(at),
      next_attempt_at: next === null ? null : new Date(next),
      url: endpoint.url,
    })),
  );
}

beforeAll(async () => {
  const { db, receiver } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'acme',
        name: 'Acme Log',
        processor: 'connected',
        users: [{ key: 'owner', email: EMAIL, role: 'owner' }],
        webhooks: [
          // The four types its log holds, for the words on the list, its page and its Edit form.
          { key: 'hook', name: 'Log CRM', url: receiver.url(HOOK_PATH), events: SUBSCRIBED.map(([type]) => type) },
          { key: 'busy', name: 'Busy CRM', url: receiver.url(BUSY_PATH) },
        ],
      },
    ],
  });
  const ids = loaded.workspaces.acme!;
  workspaceId = ids.id;
  endpointId = ids.webhooks.hook!.id;
  endpointUrl = receiver.url(HOOK_PATH);
  receiver.route(HOOK_PATH, { secret: ids.webhooks.hook!.secret, behaviour: { kind: 'status', status: 200 } });
  busyId = ids.webhooks.busy!.id;
  receiver.route(BUSY_PATH, { secret: ids.webhooks.busy!.secret, behaviour: { kind: 'status', status: 200 } });

  const now = Date.now();
  const start = now - 200 * MINUTE;
  await delivery(
    'recovery.opened',
    Array.from({ length: 46 }, (_, index) => ({
      at: start + index * MINUTE,
      next: index < 45 ? start + (index + 1) * MINUTE : null,
    })),
  );
  await delivery('recovery.recovered', [
    { at: now - 40 * MINUTE, next: now - 35 * MINUTE },
    { at: now - 35 * MINUTE, next: null, succeeded: true },
  ]);
  await delivery('cancel.lost', [{ at: now - 30 * MINUTE, next: now - 20 * MINUTE }]);
  await delivery('recovery.lost', [{ at: now - MINUTE, next: now + 60 * MINUTE }]);
  const busyStart = now - (BUSY_ATTEMPTS + 10) * MINUTE;
  await delivery(
    'recovery.opened',
    Array.from({ length: BUSY_ATTEMPTS }, (_, index) => ({
      at: busyStart + index * MINUTE,
      next: index < BUSY_ATTEMPTS - 1 ? busyStart + (index + 1) * MINUTE : null,
    })),
    { id: busyId, url: receiver.url(BUSY_PATH) },
  );

  await db('users')
    .where({ email: EMAIL })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, EMAIL);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

const log = (): Locator => page.getByRole('list', { name: 'Deliveries, newest first' });
const rows = (): Locator => log().getByRole('listitem');
/**
 * The log's row of an event type and attempt number, by its summary (the button that opens it):
 * open details name another attempt too ("Made … (attempt 2)").
 */
const row = (type: string, attempt: number): Locator =>
  rows().filter({
    has: page.getByRole('button', { name: new RegExp(`${type.replace('.', '\\.')}[^]*attempt ${attempt}(?!\\d)`) }),
  });

/** A row's details, opened: what they say of its next attempt (the UTC time for screen readers too). */
async function nextAttemptOf(entry: Locator): Promise<string> {
  const summary = entry.getByRole('button').first();
  if ((await summary.getAttribute('aria-expanded')) === 'false') await summary.click();
  const fact = entry.locator('dt', { hasText: /^(Next attempt|Retry)$/ });
  return `${await fact.innerText()}: ${await fact.locator('xpath=following-sibling::dd').innerText()}`.replace(
    /\s+/g,
    ' ',
  );
}

async function openEndpoint(search = '', id = endpointId, name = 'Log CRM'): Promise<void> {
  await page.goto(`${world.current.url}/dashboard/settings/webhooks/${id}${search}`);
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

/** The attempt numbers of the log's rows, top to bottom, from their summaries. */
async function attemptsShown(): Promise<number[]> {
  const summaries = await log()
    .getByRole('button', { name: /attempt \d+/ })
    .allInnerTexts();
  return summaries.map((text) => Number(/attempt (\d+)/.exec(text)![1]));
}

/** `from`, `from - 1`, … down to `to`. */
const countDown = (from: number, to: number): number[] =>
  Array.from({ length: from - to + 1 }, (_, index) => from - index);

const A_TIME = String.raw`\w{3} \d+, \d{4}, \d+:\d\d [AP]M \S+ \([^)]+\)`;

describe('the delivery log', () => {
  it('keeps its filters in the address: a reload shows the filtered log with the selects set', async () => {
    await openEndpoint();
    await rows().nth(49).waitFor();
    // Each outcome in words, its value the API's code (the address keeps it).
    await expect(
      page
        .getByLabel('Outcome')
        .locator('option')
        .evaluateAll((options) => options.map((option) => [option.getAttribute('value') ?? '', option.textContent])),
    ).resolves.toEqual([
      ['', 'All'],
      ['succeeded', 'Succeeded'],
      ['failed', 'Failed'],
      ['skipped', 'Skipped'],
      ['interrupted', 'Interrupted'],
    ]);
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByLabel('Event type').selectOption('recovery.lost');
    await eventually(async () => (await rows().count()) === 1);
    const address = new URL(page.url());
    expect(address.searchParams.get('log_outcome')).toBe('failed');
    expect(address.searchParams.get('log_event_type')).toBe('recovery.lost');

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Log CRM' }).waitFor();
    await row('recovery.lost', 1).waitFor();
    expect(await rows().count()).toBe(1);
    expect(await page.getByLabel('Outcome').inputValue()).toBe('failed');
    expect(await page.getByLabel('Event type').inputValue()).toBe('recovery.lost');
    // The choice reads as words, as the rows do; its value (and the address) stays the code.
    expect(await page.getByLabel('Event type').locator('option:checked').textContent()).toBe('Payment lost');

    // All again: the address drops them.
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Event type').selectOption('');
    await rows().nth(49).waitFor();
    expect(new URL(page.url()).search).toBe('');

    // A value the log does not have (an address edited by hand) is said in place of the log, the
    // select reading it, not All over the whole log (list-filters.test has the rest).
    await openEndpoint('?log_outcome=nope&log_event_type=recovery.lost');
    await page
      .getByRole('alert')
      .filter({ hasText: 'The address asks for outcome “nope”, which this log does not have.' })
      .waitFor();
    expect(await rows().count()).toBe(0);
    expect(await page.getByLabel('Outcome').inputValue()).toBe('nope');
    expect(await page.getByLabel('Event type').inputValue()).toBe('recovery.lost');
  });

  it('tells a next attempt made, one to come and one overdue apart, one hidden by a filter too', async () => {
    await openEndpoint();
    await rows().nth(49).waitFor();
    // Retried a minute later: what became of it, not a past time as if still to come.
    expect(await nextAttemptOf(row('recovery.opened', 1))).toMatch(
      new RegExp(`^Next attempt: Made ${A_TIME} \\(attempt 2\\)$`),
    );
    // Given up: none.
    expect(await nextAttemptOf(row('recovery.opened', 46))).toBe('Next attempt: None');
    // Due in an hour: the time it is due.
    expect(await nextAttemptOf(row('recovery.lost', 1))).toMatch(new RegExp(`^Next attempt: ${A_TIME}$`));
    // Due 20 minutes ago and not made (no worker runs): overdue, said so.
    expect(await nextAttemptOf(row('cancel.lost', 1))).toMatch(
      new RegExp(`^Next attempt: Was due ${A_TIME} ?, not made yet$`),
    );

    // Failed attempts only: the retry that succeeded is not in the log, and still it was made.
    await page.getByLabel('Outcome').selectOption('failed');
    await eventually(async () => (await rows().count()) === 49);
    expect(await nextAttemptOf(row('recovery.recovered', 1))).toMatch(
      new RegExp(`^Next attempt: Made ${A_TIME} \\(attempt 2\\)$`),
    );
  });

  it('keeps every row shown after a Resend with exactly a page shown', async () => {
    await openEndpoint();
    await rows().nth(49).waitFor();
    expect(await rows().count()).toBe(50);
    const given = row('recovery.opened', 46);
    await given.getByRole('button', { expanded: false }).click();
    await given.getByRole('button', { name: 'Resend' }).click();
    await given.getByText('Resent:').waitFor();
    // The resend's attempt at the top, and the oldest row still shown at the bottom.
    await row('recovery.opened', 47).waitFor();
    await eventually(async () => (await rows().count()) === 51);
    expect(await rows().first().innerText()).toMatch(/recovery\.opened[^]*attempt 47/);
    expect(await rows().last().innerText()).toMatch(/recovery\.opened[^]*attempt 1(?!\d)/);
    // Given up, then resent: its next attempt was made, by the Resend (not "None", nor "Retry").
    expect(await nextAttemptOf(given)).toMatch(new RegExp(`^Next attempt: Made ${A_TIME} \\(attempt 47\\)$`));
  });

  it('says a next attempt a Resend made before the retry was due: made, not the retry to come', async () => {
    await openEndpoint();
    const pending = row('recovery.lost', 1);
    await pending.getByRole('button', { expanded: false }).click();
    await pending.getByRole('button', { name: 'Resend' }).click();
    await pending.getByText('Resent:').waitFor();
    await row('recovery.lost', 2).waitFor();
    // Its retry was due in an hour; the Resend came first, and it is the next attempt.
    expect(await nextAttemptOf(pending)).toMatch(new RegExp(`^Next attempt: Made ${A_TIME} \\(attempt 2\\)$`));
  });

  it('adds no row for a Resend whose attempt the filters hide', async () => {
    await openEndpoint('?log_outcome=failed');
    await rows().nth(48).waitFor();
    expect(await rows().count()).toBe(49);
    const failed = row('recovery.recovered', 1);
    await failed.getByRole('button', { expanded: false }).click();
    await failed.getByRole('button', { name: 'Resend' }).click();
    // The receiver answers 200: attempt 3 succeeded, not among failed attempts.
    await failed.getByText(/Resent: HTTP 200/).waitFor();
    expect(await rows().count()).toBe(49);
    expect(await row('recovery.recovered', 3).count()).toBe(0);
  });

  it('adds only its attempt on a Resend with over 100 rows shown: Load more then goes on with none twice or missed', async () => {
    await openEndpoint('', busyId, 'Busy CRM');
    await rows().nth(49).waitFor();
    const loadMore = page.getByRole('button', { name: 'Load more' });
    await loadMore.click();
    await rows().nth(99).waitFor();
    await loadMore.click();
    await rows().nth(149).waitFor();
    expect(await attemptsShown()).toEqual(countDown(BUSY_ATTEMPTS, 11));

    // Resent from the oldest row shown: the delivery's attempt 161, at the top.
    const oldest = row('recovery.opened', 11);
    await oldest.getByRole('button', { expanded: false }).click();
    await oldest.getByRole('button', { name: 'Resend' }).click();
    await oldest.getByText('Resent:').waitFor();
    await row('recovery.opened', BUSY_ATTEMPTS + 1).waitFor();
    // One row more, first, and nothing else read: every row once, the oldest shown still last.
    const shown = await attemptsShown();
    expect(shown[0]).toBe(BUSY_ATTEMPTS + 1);
    expect(shown).toHaveLength(151);
    expect(new Set(shown).size).toBe(shown.length);
    expect(shown).toEqual(countDown(BUSY_ATTEMPTS + 1, 11));
    // The resent row stays open with its result; the attempt before the new one says it was made.
    await expect(oldest.getByText('Resent:').count()).resolves.toBe(1);
    // The new row, from the Resend's answer, has the JSON that was signed, as one read would.
    const newest = row('recovery.opened', BUSY_ATTEMPTS + 1);
    await newest.getByRole('button', { expanded: false }).click();
    await expect(newest.getByText('"hello": "world"').count()).resolves.toBe(1);
    expect(await nextAttemptOf(row('recovery.opened', BUSY_ATTEMPTS))).toMatch(
      new RegExp(`^Next attempt: Made ${A_TIME} \\(attempt ${BUSY_ATTEMPTS + 1}\\)$`),
    );

    // Load more goes on from the oldest row shown: the last ten, none twice, none missed.
    await loadMore.click();
    await rows().nth(160).waitFor();
    expect(await attemptsShown()).toEqual(countDown(BUSY_ATTEMPTS + 1, 1));
    await expect(loadMore.count()).resolves.toBe(0);
  });
});

/** How a piece of text is set, and where: to tell the code, small and monospace, under its words. */
function setAs(text: Locator) {
  return text.evaluate((element) => {
    const style = element.ownerDocument.defaultView!.getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return {
      size: parseFloat(style.fontSize),
      monospace: /monospace/.test(style.fontFamily),
      visible: element.checkVisibility(),
      top: box.top,
      bottom: box.bottom,
    };
  });
}

/** `code` is set small and monospace, on a line under `words`, both visible. */
async function expectCodeUnder(words: Locator, code: Locator): Promise<void> {
  const [above, under] = [await setAs(words), await setAs(code)];
  expect({ words: above.visible, code: under.visible }).toEqual({ words: true, code: true });
  expect({ words: above.monospace, code: under.monospace }).toEqual({ words: false, code: true });
  expect(under.size).toBeLessThan(above.size);
  expect(under.top).toBeGreaterThanOrEqual(above.bottom - 1);
}

describe("an endpoint's event types, in words (as the Security log says them)", () => {
  it('the endpoints list says how many, with their words for a screen reader and each code in the title', async () => {
    await page.goto(`${world.current.url}/dashboard/settings/webhooks`);
    const endpoint = page
      .getByRole('table', { name: 'Webhook endpoints' })
      .getByRole('row')
      .filter({ hasText: 'Log CRM' });
    const events = endpoint.getByRole('cell').nth(2);
    await events.waitFor();
    // "4 events" shown, the words after it visually hidden (read out), where one clipped line of
    // the words was cut off with no hint of how many more.
    await expect(events.textContent()).resolves.toBe(
      `${SUBSCRIBED.length} events: ${SUBSCRIBED.map(([, words]) => words).join(', ')}`,
    );
    await events.getByText(`${SUBSCRIBED.length} events`).waitFor();
    await expect(events.locator('[title]').getAttribute('title')).resolves.toBe(
      SUBSCRIBED.map(([type, words]) => `${words} (${type})`).join(', '),
    );
  });

  it("its page says them in words, each with its code beside it, and so do its Edit form's choices", async () => {
    await openEndpoint();
    const events = page
      .getByRole('term')
      .filter({ hasText: /^Events$/ })
      .locator('xpath=following-sibling::dd')
      .getByRole('listitem');
    await expect(events.allTextContents()).resolves.toEqual(SUBSCRIBED.map(([type, words]) => `${words} ${type}`));
    await expect(events.locator('code').allTextContents()).resolves.toEqual(SUBSCRIBED.map(([type]) => type));

    // The Edit form: each choice in words, its code small and monospace under them (an engineer
    // matches it in the receiver); the checkbox is still named by the code, its words and the
    // sentence of what it means its description (dashboard.md's names), and the four are ticked.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit endpoint' });
    for (const [type, words] of SUBSCRIBED) {
      const choice = dialog.getByRole('checkbox', { name: type, exact: true });
      await expect(choice.isChecked()).resolves.toBe(true);
      await expect(description(choice)).resolves.toBe(`${words} ${EVENT_TYPE_DESCRIPTIONS[type]}`);
      const label = dialog.locator('label').filter({ has: page.getByRole('checkbox', { name: type, exact: true }) });
      await expectCodeUnder(label.getByText(words, { exact: true }), label.getByText(type, { exact: true }));
    }
    await expect(dialog.getByRole('checkbox', { name: 'trial.reminder_sent', exact: true }).isChecked()).resolves.toBe(
      false,
    );
    await expectCodeUnder(
      dialog.getByText('Trial reminder sent', { exact: true }),
      dialog.getByText('trial.reminder_sent', { exact: true }),
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it("its log's rows say each event type in words, its code on a quieter line under them", async () => {
    await openEndpoint();
    await rows().nth(49).waitFor();
    // Every row's summary reads its words, then its code (not the code alone).
    const shown = await log()
      .getByRole('button', { expanded: false })
      .evaluateAll((buttons) => buttons.map((button) => button.querySelector('code')?.parentElement?.textContent));
    expect(new Set(shown)).toEqual(new Set(SUBSCRIBED.map(([type, words]) => `${words} ${type}`)));
    for (const [type, words] of SUBSCRIBED) {
      // The button is named by its content: the outcome, the words, the code, then the status.
      const summary = log()
        .getByRole('button', {
          name: new RegExp(`^(Failed|Succeeded) ${words} ${type.replace('.', '\\.')} \\d{3} attempt`),
        })
        .first();
      await expectCodeUnder(summary.getByText(words, { exact: true }), summary.getByText(type, { exact: true }));
    }
    // Its filter keeps the code in the address, as the API names it.
    await page.getByLabel('Event type').selectOption('recovery.lost');
    await eventually(() => new URL(page.url()).searchParams.get('log_event_type') === 'recovery.lost');
  });
});
