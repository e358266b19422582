import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { hashPassword, recordSecurityEvent, seedDemo, type DemoSeedResult } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { lineTexts } from './support/line-texts.js';
import { checkPage } from './support/page-checks.js';

/**
 * The demo `npm start` seeds, as its owner reads the Settings pages in a real headless Chromium:
 * the Tokens page and the Security log name the maker of the demo's token alike, and the log
 * records the demo's endpoints as added, each named by its name and URL.
 */
const world = useDashboardWorld();
let demo: DemoSeedResult;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { db } = world.current;
  demo = await seedDemo(db, {
    secretsKey: testSecretsKeyBytes(),
    customers: 10,
    baseUrl: world.current.url,
    actor: { type: 'system', label: 'Demo setup' },
  });
  await db('users')
    .where({ id: demo.owner.id })
    .update({ password_hash: await hashPassword(PASSWORD) });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, demo.owner.email);
}, 60_000);

afterAll(async () => {
  await context?.close();
});

async function open(route: string, title: string): Promise<void> {
  await page.goto(`${world.current.url}/dashboard${route}`);
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
}

describe("npm start's demo in the Settings pages", () => {
  it('names the demo token\'s maker "Demo setup" on the Tokens page and in the Security log', async () => {
    await open('/settings/tokens', 'API tokens');
    await page
      .getByRole('table', { name: 'API tokens' })
      .getByRole('row', { name: /demo seed/ })
      .getByRole('cell', { name: 'Demo setup', exact: true })
      .waitFor();

    await open('/settings/security-log', 'Security log');
    const log = page.getByRole('table', { name: 'Security log' });
    const created = log.getByRole('row', { name: /token\.created/ });
    await created.getByText('API token created', { exact: true }).waitFor();
    await created.getByRole('cell', { name: 'Demo setup', exact: true }).waitFor();
    await created.getByText('API token: demo seed', { exact: true }).waitFor();
  });

  it('names each of the demo’s people on the Team page, none "—"', async () => {
    await open('/settings/team', 'Team');
    const people = page.getByRole('table', { name: 'People' });
    for (const [name, email] of [
      ['Dana Moreno', 'owner@northwind.example'],
      ['Priya Shah', /^ops(\+\d+)?@northwind\.example$/],
      ['Leo Martin', 'support@northwind.example'],
    ] as const) {
      const row = people.getByRole('row').filter({ hasText: name });
      await row.getByRole('cell').getByText(email, { exact: true }).first().waitFor();
    }
    await expect(people.getByRole('cell', { name: '—', exact: true }).count()).resolves.toBe(0);
  });

  it('shows the demo endpoints as added by npm start, each by its name and URL', async () => {
    await open('/settings/security-log', 'Security log');
    const added = page.getByRole('table', { name: 'Security log' }).getByRole('row', { name: /webhook\.created/ });
    await expect(added.count()).resolves.toBe(2);
    for (const [name, url] of [
      ['Dunning emails', 'https://mail.northwind.example/hooks/retention'],
      ['CRM', 'https://crm.northwind.example/webhooks/retention'],
    ]) {
      const row = added.filter({ hasText: `Endpoint: ${name} (${url})` });
      await row.getByText('Endpoint added', { exact: true }).waitFor();
      await row.getByRole('cell', { name: 'Demo setup', exact: true }).waitFor();
      // Named once, by the target: not again as "Name: …" under it.
      await expect(row.getByText(/Name: /).count()).resolves.toBe(0);
    }
  });

  it('reads entries recorded before as they were: an endpoint by its URL, a retry that found none in words', async () => {
    await recordSecurityEvent(world.current.db, {
      workspace_id: demo.workspace.id,
      action: 'webhook.deliveries_requeued',
      actor: { type: 'user', user_id: demo.owner.id, label: demo.owner.email },
      target: { type: 'webhook_endpoint', id: randomUUID(), label: 'https://old.example/hook' },
      details: { since: '2026-11-20T10:00:00.000Z', requeued: 0 },
    });
    await open('/settings/security-log', 'Security log');
    const row = page
      .getByRole('table', { name: 'Security log' })
      .getByRole('row', { name: /webhook\.deliveries_requeued/ });
    await row.getByText('Endpoint: https://old.example/hook', { exact: true }).waitFor();
    await row.getByText(/^No failed deliveries to send again \(none failed or was skipped since Nov 20/).waitFor();
    await expect(row.getByText(/0 deliveries sent again/).count()).resolves.toBe(0);
  });

  it('links what each entry changed to its page while it is there, and leaves it text once it is gone', async () => {
    const { db } = world.current;
    const crm = await db('webhook_endpoints')
      .where({ workspace_id: demo.workspace.id, name: 'CRM' })
      .first<{ id: string }>('id');
    // A person still on the team, and one removed since (their account deleted).
    await recordSecurityEvent(db, {
      workspace_id: demo.workspace.id,
      action: 'team.role_changed',
      actor: { type: 'user', user_id: demo.owner.id, label: demo.owner.email },
      target: { type: 'user', id: demo.owner.id, label: demo.owner.email },
      details: { from: 'admin', to: 'owner' },
    });
    await recordSecurityEvent(db, {
      workspace_id: demo.workspace.id,
      action: 'team.role_changed',
      actor: { type: 'user', user_id: demo.owner.id, label: demo.owner.email },
      target: { type: 'user', id: randomUUID(), label: 'gone@northwind.example' },
      details: { from: 'member', to: 'admin' },
    });
    const campaign = await db('recovery_campaigns')
      .where({ workspace_id: demo.workspace.id })
      .orderBy('id')
      .first<{ id: string; psp_invoice_id: string }>('id', 'psp_invoice_id');
    await recordSecurityEvent(db, {
      workspace_id: demo.workspace.id,
      action: 'campaign.marked_lost',
      actor: { type: 'user', user_id: demo.owner.id, label: demo.owner.email },
      target: { type: 'campaign', id: campaign.id, label: campaign.psp_invoice_id },
    });
    await open('/settings/security-log', 'Security log');
    const log = page.getByRole('table', { name: 'Security log' });
    const href = (name: string) => log.getByRole('link', { name, exact: true }).first().getAttribute('href');
    await expect(href('API token: demo seed')).resolves.toBe('/dashboard/settings/tokens');
    await expect(href('Endpoint: CRM (https://crm.northwind.example/webhooks/retention)')).resolves.toBe(
      `/dashboard/settings/webhooks/${crm.id}`,
    );
    await expect(href(`Person: ${demo.owner.email}`)).resolves.toBe('/dashboard/settings/team');
    await expect(href(`Campaign: ${campaign.psp_invoice_id}`)).resolves.toBe(`/dashboard/campaigns/${campaign.id}`);
    // Underlined whole, as one link: a link's underline stops at an inline-block (the id, kept
    // whole on its line), and only "Campaign: " was underlined.
    const notUnderlined = await log
      .getByRole('link', { name: `Campaign: ${campaign.psp_invoice_id}`, exact: true })
      .first()
      .evaluate((link) => {
        const style = (part: typeof link) => link.ownerDocument.defaultView!.getComputedStyle(part);
        return [link, ...link.querySelectorAll('*')]
          .filter((part) => part === link || style(part).display !== 'inline')
          .filter((part) => part.textContent && !style(part).textDecorationLine.includes('underline'))
          .map((part) => part.textContent);
      });
    expect(notUnderlined).toEqual([]);
    // Gone: the endpoint of an older entry (deleted), the person removed. Plain text, no link.
    for (const text of ['Endpoint: https://old.example/hook', 'Person: gone@northwind.example']) {
      await log.getByText(text, { exact: true }).first().waitFor();
      await expect(log.getByRole('link', { name: text }).count()).resolves.toBe(0);
    }
    // A link goes to the page, as any link of the app does.
    await log.getByRole('link', { name: 'Endpoint: CRM (https://crm.northwind.example/webhooks/retention)' }).click();
    await page.getByRole('heading', { level: 1, name: 'CRM' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/settings/webhooks/${crm.id}`);
  });

  it("keeps a campaign's invoice id whole where it fits a line, while an endpoint's URL breaks after its separators", async () => {
    const invoiceId = 'in_1QxR7sLkT0aBcDeFgHiJkLmN';
    await recordSecurityEvent(world.current.db, {
      workspace_id: demo.workspace.id,
      action: 'campaign.marked_recovered',
      actor: { type: 'user', user_id: demo.owner.id, label: demo.owner.email },
      target: { type: 'campaign', id: randomUUID(), label: invoiceId },
    });
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await open('/settings/security-log', 'Security log');
      const log = page.getByRole('table', { name: 'Security log' });
      const target = log
        .getByRole('row', { name: /campaign\.marked_recovered/ })
        .getByText(`Campaign: ${invoiceId}`, { exact: true });
      const idLines = async () => (await lineTexts(target)).map((line) => line.trim());
      // The campaign is no longer there (a random id): its target is text, no link.
      await expect(log.getByRole('link', { name: `Campaign: ${invoiceId}` }).count()).resolves.toBe(0);
      // Where "Campaign:" and the id do not fit one line but the id does (a 430 px phone): the id
      // whole on the next. It was cut after `in_` ("Campaign: in_", then the rest).
      await page.setViewportSize({ width: 430, height: 932 });
      await expect(idLines()).resolves.toEqual(['Campaign:', invoiceId]);
      // Narrower than the id (390 px): cut after `in_` alone, never mid-id at the line's end.
      await page.setViewportSize({ width: 390, height: 844 });
      await expect(idLines()).resolves.toEqual(['Campaign:', 'in_', invoiceId.slice('in_'.length)]);
      // An endpoint's URL still goes on after a separator, never mid-word.
      const url = log
        .getByRole('row', { name: /webhook\.created/ })
        .first()
        .getByText(/^Endpoint: /);
      const urlLines = await lineTexts(url);
      expect(urlLines.length).toBeGreaterThan(1);
      expect(urlLines.slice(0, -1).filter((line) => !'/.-_ ('.includes(line.at(-1)!))).toEqual([]);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});

describe('filtering the Security log', () => {
  const filters = () => page.getByRole('search', { name: 'Filter the security log' });
  const actionSelect = () => filters().getByRole('combobox', { name: 'Action' });
  const whoSelect = () => filters().getByRole('combobox', { name: 'Who' });
  const log = () => page.getByRole('table', { name: 'Security log' });
  /** The action codes of the rows shown, in order. */
  const codesShown = () => log().getByRole('cell').locator('code').allTextContents();
  /** The address's query, as a reader sees it (commas written as commas). */
  const search = () => decodeURIComponent(new URL(page.url()).search);

  let admin: { id: string; name: string | null; email: string };

  // Changes made the last few hours by each kind of actor: the admin in the dashboard and, with
  // --actor, at the operator CLI; the member; the operator CLI in no one's name; the processor.
  beforeAll(async () => {
    const { db } = world.current;
    const people = await db('users')
      .where({ workspace_id: demo.workspace.id })
      .whereIn('role', ['admin', 'member'])
      .select<Array<{ id: string; name: string | null; email: string; role: string }>>('id', 'name', 'email', 'role');
    admin = people.find((person) => person.role === 'admin')!;
    const member = people.find((person) => person.role === 'member')!;
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const entries: Array<Parameters<typeof recordSecurityEvent>[1]> = [
      {
        workspace_id: demo.workspace.id,
        action: 'token.revoked',
        actor: { type: 'user', user_id: admin.id, label: admin.email },
        target: { type: 'api_token', id: randomUUID(), label: 'CI' },
        at: hoursAgo(5),
      },
      {
        workspace_id: demo.workspace.id,
        action: 'team.role_changed',
        actor: { type: 'operator', user_id: admin.id, label: 'operator CLI' },
        target: { type: 'user', id: member.id, label: member.email },
        details: { from: 'member', to: 'admin' },
        at: hoursAgo(4),
      },
      {
        workspace_id: demo.workspace.id,
        action: 'account.password_changed',
        actor: { type: 'user', user_id: member.id, label: member.email },
        target: { type: 'user', id: member.id, label: member.email },
        at: hoursAgo(3),
      },
      {
        workspace_id: demo.workspace.id,
        action: 'token.created',
        actor: { type: 'operator', label: 'operator CLI' },
        target: { type: 'api_token', id: randomUUID(), label: 'backup' },
        at: hoursAgo(2),
      },
      {
        workspace_id: demo.workspace.id,
        action: 'processor.key_rejected',
        actor: { type: 'processor', label: 'stripe' },
        target: { type: 'processor_connection', id: randomUUID(), label: 'stripe' },
        at: hoursAgo(1),
      },
    ];
    for (const entry of entries) await recordSecurityEvent(world.current.db, entry);
  });

  /** Waits for the log the last change asked for: its rows' count is said once they came. */
  async function changed(change: () => Promise<unknown>): Promise<void> {
    const answered = page.waitForResponse((response) => response.url().includes('/dashboard/api/security-log'));
    await change();
    expect((await answered).status()).toBe(200);
    await page
      .getByRole('status')
      .filter({ hasText: /entr(y|ies) shown|No entries match these filters\./ })
      // The count is said to screen readers only (visually hidden).
      .waitFor({ state: 'attached' });
  }

  it('filters by action, a group of actions, who made the change and days, all kept in the address', async () => {
    const { db } = world.current;
    await open('/settings/security-log', 'Security log');
    await changed(() => actionSelect().selectOption({ label: 'API token revoked' }));
    expect(await codesShown()).toEqual(['token.revoked']);
    expect(search()).toBe('?action=token.revoked');

    // A group: every API token change (the demo's token, and the two above).
    await changed(() => actionSelect().selectOption({ label: 'Any API token change' }));
    expect(await codesShown()).toEqual(['token.created', 'token.created', 'token.revoked']);
    expect(search()).toBe('?action=token.created,token.revoked,token.limit_changed');
    // By the operator CLI, in no one's name or someone's.
    await changed(() => whoSelect().selectOption({ label: 'Operator CLI' }));
    expect(await codesShown()).toEqual(['token.created']);

    // Every endpoint change by npm start: the two endpoints it added.
    await changed(() => actionSelect().selectOption({ label: 'Any endpoint change' }));
    await changed(() => whoSelect().selectOption({ label: 'The service itself (demo setup, migrations)' }));
    expect(await codesShown()).toEqual(['webhook.created', 'webhook.created']);
    await expect(log().getByRole('cell', { name: 'Demo setup', exact: true }).count()).resolves.toBe(2);
    expect(search()).toBe(
      '?action=webhook.created,webhook.updated,webhook.deleted,webhook.enabled,webhook.disabled,' +
        'webhook.secret_rolled,webhook.secret_overlap_ended,webhook.deliveries_requeued&actor=system',
    );

    // The day they were added, in the viewer's zone: the two again; from the next day on, none.
    const [added] = await db('security_events')
      .where({ workspace_id: demo.workspace.id, action: 'webhook.created', actor_type: 'system' })
      .pluck('created_at');
    const [day, nextDay] = await page.evaluate(
      (iso: string) => {
        const local = (at: Date) => at.toLocaleDateString('en-CA');
        const at = new Date(iso);
        return [local(at), local(new Date(at.getTime() + 86_400_000))];
      },
      (added as Date).toISOString(),
    );
    await changed(() => filters().getByLabel('Since').fill(day));
    await changed(() => filters().getByLabel('Before').fill(nextDay));
    expect(await codesShown()).toEqual(['webhook.created', 'webhook.created']);
    const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    await filters().getByText(`Days in ${zone} time.`, { exact: true }).waitFor();
    const address = new URL(page.url()).searchParams;
    expect([address.get('from'), address.get('to'), address.get('tz')]).toEqual([day, nextDay, zone]);
    // Days that hold none: said under them, and nothing is asked.
    await filters().getByLabel('Since').fill(nextDay);
    await filters().getByRole('alert').filter({ hasText: 'The end day is not included' }).waitFor();
    await expect(log().count()).resolves.toBe(0);

    // A person on the team, by name: their changes in the dashboard and at the CLI in their name.
    await changed(() => filters().getByRole('button', { name: 'Clear filters' }).click());
    await changed(() => whoSelect().selectOption({ label: admin.name ?? admin.email }));
    expect(await codesShown()).toEqual(['team.role_changed', 'token.revoked']);
    await log()
      .getByRole('cell', { name: `${admin.name ?? admin.email} via operator CLI`, exact: true })
      .waitFor();
    expect(search()).toBe(`?actor=${admin.id}`);

    // A reload shows the same filtered log, the fields as they were.
    await changed(() => actionSelect().selectOption({ label: 'API token revoked' }));
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Security log' }).waitFor();
    await log().waitFor();
    expect(await codesShown()).toEqual(['token.revoked']);
    expect(await actionSelect().inputValue()).toBe('token.revoked');
    expect(await whoSelect().inputValue()).toBe(admin.id);
  });

  it('says when no entry matches, with a way to clear the filters from the keyboard; axe-clean at 1280 and 390 px', async () => {
    await open('/settings/security-log?action=token.revoked&actor=operator', 'Security log');
    const nothing = page.getByRole('status').filter({ hasText: 'No entries match these filters.' });
    await nothing.waitFor();
    await expect(log().count()).resolves.toBe(0);
    expect(await checkPage(page, 'security-log-no-match')).toEqual([]);

    // The empty state's Clear filters, by keyboard: the whole log back, the focus on the first filter.
    const clearHere = nothing.getByRole('button', { name: 'Clear filters' });
    await clearHere.focus();
    await changed(() => page.keyboard.press('Enter'));
    expect(search()).toBe('');
    expect((await codesShown()).length).toBeGreaterThanOrEqual(8);
    await expect(actionSelect().evaluate((select) => select === select.ownerDocument.activeElement)).resolves.toBe(
      true,
    );
    expect(await actionSelect().inputValue()).toBe('');
    expect(await whoSelect().inputValue()).toBe('');
    await expect(page.getByRole('button', { name: 'Clear filters' }).count()).resolves.toBe(0);

    // Filters set from the keyboard alone, the log filtered, then scanned at both widths.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await changed(() => page.keyboard.press('ArrowDown'));
    expect(await actionSelect().inputValue()).not.toBe('');
    expect(await checkPage(page, 'security-log-filtered')).toEqual([]);
  });

  it("shows an address's action the log does not have as it is, and says so in place of the log", async () => {
    await open('/settings/security-log?action=token.deleted', 'Security log');
    const note = page.getByRole('alert').filter({ hasText: 'The address asks for' });
    await note.waitFor();
    expect(await note.locator('p').allTextContents()).toEqual([
      'The address asks for action “token.deleted”, which this log does not have.',
    ]);
    expect(await actionSelect().inputValue()).toBe('token.deleted');
    await note.getByRole('button', { name: 'Clear filters' }).click();
    await log().waitFor();
    expect(search()).toBe('');
  });
});

describe("the Security log's columns", () => {
  const log = () => page.getByRole('table', { name: 'Security log' });
  const OWNER_NAME = 'Dana Whitfield';
  /** The demo's endpoints as the log names them: whole at 1280 px, where one line cut both. */
  const DUNNING = 'Endpoint: Dunning emails (https://mail.northwind.example/hooks/retention)';
  const CRM = 'Endpoint: CRM (https://crm.northwind.example/webhooks/retention)';
  /** A target longer than two lines of What: still cut, whole in its title. */
  const LONG_URL = `https://archive.northwind.example/${'retention-events/'.repeat(12)}incoming`;
  const LONG = `Endpoint: ${LONG_URL}`;
  const FORMER = 'lee@northwind.example';
  let admin: { id: string; email: string; name: string | null };

  // The owner, named as on accepting their invitation, changes things in the dashboard from the
  // machine the service runs on (a browser at http://localhost); someone since removed did too.
  beforeAll(async () => {
    const { db } = world.current;
    await db('users').where({ id: demo.owner.id }).update({ name: OWNER_NAME });
    const owner = { type: 'user' as const, user_id: demo.owner.id, label: demo.owner.email, ip: '::1' };
    admin = await db('users')
      .where({ workspace_id: demo.workspace.id, role: 'admin' })
      .first<{ id: string; email: string; name: string | null }>('id', 'email', 'name');
    // Someone without a name (an account the operator made, who never chose one): the demo's
    // people have names now, so the admin is made nameless here.
    await db('users').where({ id: admin.id }).update({ name: null });
    admin = { ...admin, name: null };
    const endpointId = randomUUID();
    const entries: Array<Omit<Parameters<typeof recordSecurityEvent>[1], 'workspace_id'>> = [
      {
        action: 'team.invitation_link_renewed',
        actor: { type: 'user', user_id: admin.id, label: admin.email, ip: '203.0.113.9' },
        target: { type: 'invitation', id: randomUUID(), label: 'new.person@northwind.example' },
        details: { role: 'member' },
      },
      {
        action: 'token.limit_changed',
        actor: { type: 'operator', user_id: demo.owner.id, label: 'operator CLI' },
        target: { type: 'api_token', id: randomUUID(), label: 'demo seed' },
        details: { from: 60, to: 600 },
      },
      {
        action: 'webhook.secret_rolled',
        actor: owner,
        target: { type: 'webhook_endpoint', id: endpointId, label: DUNNING.replace('Endpoint: ', '') },
        details: { overlap_seconds: 86_400 },
      },
      {
        action: 'webhook.updated',
        actor: owner,
        target: { type: 'webhook_endpoint', id: endpointId, label: CRM.replace('Endpoint: ', '') },
        details: { events: { from: [], to: ['recovery.recovered', 'cancel.saved'] } },
      },
      {
        action: 'processor.mode_switched',
        actor: owner,
        target: { type: 'processor_connection', id: randomUUID(), label: 'stripe' },
        details: { provider: 'stripe', from: 'test', to: 'live', api_key_last4: '9876' },
      },
      {
        action: 'webhook.deleted',
        actor: { type: 'user', user_id: null, label: FORMER, ip: '2001:db8:85a3::8a2e:370:7334' },
        target: { type: 'webhook_endpoint', id: randomUUID(), label: LONG_URL },
      },
    ];
    for (const entry of entries) await recordSecurityEvent(db, { workspace_id: demo.workspace.id, ...entry });
  });

  afterAll(async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  /** The row of an action (by its code), and its cells When, Action, Who, What, From. */
  function row(code: string) {
    const found = log().getByRole('row', { name: new RegExp(code.replace('.', '\\.')) });
    const cell = (index: number) => found.getByRole('cell').nth(index);
    return { row: found, who: cell(2), what: cell(3), from: cell(4) };
  }

  /** An element's lines of text as laid out, without the space that ends a line. */
  const lines = async (target: Locator) => (await lineTexts(target)).map((line) => line.trim());

  /** Whether an element's text is cut (wider or taller than its box), and its title. */
  const cut = (target: Locator) =>
    target.evaluate((element) => ({
      cut: element.scrollWidth > element.clientWidth + 1 || element.scrollHeight > element.clientHeight + 1,
      title: element.getAttribute('title'),
    }));

  it('gives What most of the width at 1280 px, a target cut only past two lines, and From short', async () => {
    await open('/settings/security-log', 'Security log');
    const widths = Object.fromEntries(
      await Promise.all(
        ['When', 'Action', 'Who', 'What', 'From'].map(
          async (name) => [name, (await log().getByRole('columnheader', { name }).boundingBox())!.width] as const,
        ),
      ),
    );
    const table = (await log().boundingBox())!.width;
    // A table, not stacked (the longest action's words wrap: on one line they stacked the table),
    // What at least a quarter of it and a quarter wider than any other column, with every kind of
    // actor and address above in the log: it was 21% of it, narrower than From.
    expect(widths.What! / table).toBeGreaterThanOrEqual(0.25);
    for (const name of ['When', 'Action', 'Who', 'From']) expect(widths.What!).toBeGreaterThan(1.25 * widths[name]!);

    // The demo's endpoints whole, the URL going on after a separator; a longer target cut, whole
    // in its title.
    for (const target of [DUNNING, CRM]) {
      const shown = await log().getByText(target, { exact: true }).all();
      expect(shown.length).toBeGreaterThanOrEqual(2);
      for (const text of shown) await expect(cut(text)).resolves.toEqual({ cut: false, title: target });
    }
    const targetLines = await lineTexts(row('webhook.secret_rolled').what.getByText(DUNNING, { exact: true }));
    expect(targetLines.slice(0, -1).filter((line) => !'/.-_ ('.includes(line.at(-1)!))).toEqual([]);
    await expect(cut(row('webhook.deleted').what.getByText(LONG, { exact: true }))).resolves.toEqual({
      cut: true,
      title: LONG,
    });
    // The cut is rare: of everything in the log (the demo's entries, this file's, every kind of
    // actor and address), that target is the only text cut at 1280 px.
    const everyCut = await log().evaluate((table) =>
      Array.from(table.querySelectorAll('td [title]') as unknown as ArrayLike<typeof table>)
        .filter((text) => text.scrollWidth > text.clientWidth + 1 || text.scrollHeight > text.clientHeight + 1)
        .map((text) => text.getAttribute('title')),
    );
    expect(everyCut).toEqual([LONG]);

    // From: "This machine (::1)" on one line, what it means on hover and for a screen reader; an
    // IPv6 address whole.
    const from = row('webhook.secret_rolled').from;
    await expect(from.getByText('This machine (::1)', { exact: true }).getAttribute('title')).resolves.toBe(
      'This machine or a proxy on it (::1)',
    );
    await row('webhook.secret_rolled')
      .row.getByRole('cell', { name: 'This machine or a proxy on it (::1)', exact: true })
      .waitFor();
    expect(await lineTexts(from.getByText('This machine (::1)', { exact: true }))).toEqual(['This machine (::1)']);
    expect((await lineTexts(row('webhook.deleted').from)).join('')).toBe('2001:db8:85a3::8a2e:370:7334');
    expect(await checkPage(page, 'security-log-columns')).toEqual([]);
  });

  it('names a person as the Who filter does: their name, the email under it; the email alone without a name', async () => {
    await open('/settings/security-log', 'Security log');
    const who = row('webhook.secret_rolled').who;
    // The filter offers the owner by name, and the cell says the same, their email under it, smaller.
    await page
      .getByRole('search', { name: 'Filter the security log' })
      .getByRole('combobox', { name: 'Who' })
      .getByRole('option', { name: OWNER_NAME, exact: true })
      .waitFor({ state: 'attached' });
    expect(await lines(who)).toEqual([OWNER_NAME, demo.owner.email]);
    const size = (text: string) =>
      who
        .getByText(text, { exact: true })
        .evaluate((element) => parseFloat(element.ownerDocument.defaultView!.getComputedStyle(element).fontSize));
    expect(await size(demo.owner.email)).toBeLessThan(await size(OWNER_NAME));
    // The CLI run in their name: the same name, "via operator CLI" under it.
    expect(await lines(row('token.limit_changed').who)).toEqual([OWNER_NAME, 'via operator CLI']);
    await row('token.limit_changed')
      .row.getByRole('cell', { name: `${OWNER_NAME} via operator CLI`, exact: true })
      .waitFor();
    // The admin has no name (made so above): their email; someone removed: the email the entry kept;
    // the service itself by its label, as before.
    expect(admin.name).toBeNull();
    expect(await lines(row('team.invitation_link_renewed').who)).toEqual([admin.email]);
    expect(await lines(row('webhook.deleted').who)).toEqual([FORMER]);
    await expect(row('webhook.created').who.first().textContent()).resolves.toBe('Demo setup');
  });

  it.each([801, 390])('fits %i px, nothing scrolling sideways, every cell in sight', async (width) => {
    await page.setViewportSize({ width, height: 900 });
    await open('/settings/security-log', 'Security log');
    await log().getByRole('row').nth(1).waitFor();
    const box = page.getByRole('region', { name: 'Security log' });
    const laidOut = await box.evaluate((element) => {
      const edge = element.getBoundingClientRect();
      const cells = Array.from(element.querySelectorAll('td') as unknown as ArrayLike<typeof element>);
      return {
        page: element.ownerDocument.documentElement.scrollWidth - element.ownerDocument.defaultView!.innerWidth,
        box: element.scrollWidth - element.clientWidth,
        outside: cells
          .filter(
            (cell) => cell.getBoundingClientRect().left < edge.left || cell.getBoundingClientRect().right > edge.right,
          )
          .map((cell) => cell.textContent),
      };
    });
    expect(laidOut).toEqual({ page: 0, box: 0, outside: [] });
    // Stacked, a long target wraps whole rather than being cut.
    const wrapped = await lineTexts(row('webhook.deleted').what.getByText(LONG, { exact: true }));
    expect(wrapped.length).toBeGreaterThan(1);
    expect(wrapped.join('')).toBe(LONG);
  });
});
