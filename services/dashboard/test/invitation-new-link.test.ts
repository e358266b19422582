import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, inviteMember } from '@retention/domain';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage } from './support/page-checks.js';

/**
 * A pending invitation's New link, without email (docs/dashboard-ui.md, "A pending invitation's
 * new link"): the row's button makes a new link, shown once with Copy; the old link then reads
 * "not valid" and the new one signs the invitee in, in a browser of their own. Real headless
 * Chromium against the real API app, PostgreSQL and Redis; controls found by role and name only.
 * Resend, with email, is driven in account-and-endpoint-flows.test.ts.
 */
const world = useDashboardWorld();
let context: BrowserContext;
let page: Page;
const others: BrowserContext[] = [];
const problems: string[] = [];

const heading = (target: Page, name: string) => target.getByRole('heading', { level: 1, name });

async function invite(email: string, role: 'admin' | 'member'): Promise<{ id: string; url: string }> {
  const owner = await world.current.db('users').where({ email: 'owner@acme.test' }).first();
  const sent = await inviteMember(
    world.current.db,
    { workspace_id: world.current.workspace.id, email, role, inviter_role: 'owner', base_url: world.current.url },
    { type: 'user', user_id: owner.id, label: owner.email },
  );
  return { id: sent.invitation.id, url: sent.invite_url };
}

/** A browser of its own: the invitee's. */
async function freshBrowser(): Promise<Page> {
  const { context: other, page: target } = await desktopPage(world.current.browser);
  others.push(other);
  return target;
}

const openTeam = async () => {
  await page.goto(`${world.current.url}/dashboard/settings/team`);
  await heading(page, 'Team').waitFor();
  await page.getByRole('table', { name: 'Invitations' }).waitFor();
};

beforeAll(async () => {
  await world.current
    .db('users')
    .where({ email: 'owner@acme.test' })
    .update({ password_hash: await hashPassword(PASSWORD), name: 'Olga Owner' });
  ({ context, page } = await desktopPage(world.current.browser));
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.current.url });
  await signInThroughForm(page, world.current.url, 'owner@acme.test');
});

afterAll(async () => {
  await Promise.all(others.map((other) => other.close()));
  await context?.close();
});

describe('a pending invitation’s New link', () => {
  it('shows a new link once with Copy; the old link is not valid, the copied one signs the invitee in', async () => {
    const first = await invite('late.joiner@acme.test', 'admin');
    // Six days on: a day of the first link left.
    await world.current
      .db('account_links')
      .where({ id: first.id })
      .update({ expires_at: new Date(Date.now() + 24 * 3_600_000) });
    await openTeam();
    const row = page.getByRole('row', { name: /late\.joiner@acme\.test/ });
    // No email here: the action says it makes a link, not that it sends one.
    await expect(row.getByRole('button', { name: 'Resend' }).count()).resolves.toBe(0);
    await row.getByRole('button', { name: 'New link' }).click();

    const dialog = page.getByRole('dialog', { name: 'New invitation link' });
    await dialog.getByText(/^Send this link to late\.joiner@acme\.test; it works once, for 7 days \(until /).waitFor();
    await dialog.getByText('The invitation’s earlier link no longer works.').waitFor();
    problems.push(...(await checkPage(page, 'new invitation link dialog')));
    const shown = (await dialog.getByLabel('Invitation link').textContent()) ?? '';
    expect(shown).toMatch(new RegExp(`^${world.current.url}/dashboard/invite/[\\w-]{43}$`));
    expect(shown).not.toBe(first.url);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied to the clipboard.').waitFor();
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(copied).toBe(shown);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect(page.getByRole('row', { name: /late\.joiner@acme\.test/ }).count()).resolves.toBe(1);
    // The invitation now ends in seven days, not tomorrow.
    const stored = await world.current.db('account_links').where({ id: first.id }).first();
    expect(stored.expires_at.getTime()).toBeGreaterThan(Date.now() + 7 * 24 * 3_600_000 - 60_000);

    // The invitee's own browser: the old link is refused as any spent one, the copied one works.
    const invitee = await freshBrowser();
    await invitee.goto(first.url);
    await invitee.getByText('This link is not valid: it may have expired or been used already.').waitFor();
    await expect(invitee.getByRole('button', { name: 'Accept invitation' }).count()).resolves.toBe(0);
    await invitee.goto(copied);
    await invitee.getByLabel('Name').fill('Lee Joiner');
    await invitee.getByLabel('Password').fill('a long enough password');
    await invitee.getByRole('button', { name: 'Accept invitation' }).click();
    await heading(invitee, 'Overview').waitFor();

    // On the team, no longer pending.
    await openTeam();
    await page
      .getByRole('table', { name: 'People' })
      .getByRole('row', { name: /late\.joiner@acme\.test/ })
      .waitFor();
    await expect(
      page
        .getByRole('table', { name: 'Invitations' })
        .getByRole('row', { name: /late\.joiner@acme\.test/ })
        .count(),
    ).resolves.toBe(0);
  });

  it('offers New link only where the server would make one', async () => {
    // The world's owner invitation names an address that signs in now: it cannot be renewed.
    await invite('helper@acme.test', 'member');
    await openTeam();
    const ownerRow = page.getByRole('table', { name: 'Invitations' }).getByRole('row', { name: /owner@acme/ });
    await ownerRow.getByRole('button', { name: 'Cancel invitation' }).waitFor();
    await expect(ownerRow.getByRole('button', { name: 'New link' }).count()).resolves.toBe(0);
    await page
      .getByRole('row', { name: /helper@acme\.test/ })
      .getByRole('button', { name: 'New link' })
      .waitFor();
  });

  it('says a refusal under the row: the invitation cancelled meanwhile in another tab', async () => {
    const gone = await invite('changed.mind@acme.test', 'member');
    await openTeam();
    await world.current.db('account_links').where({ id: gone.id }).update({ revoked_at: new Date() });
    const row = page.getByRole('row', { name: /changed\.mind@acme\.test/ });
    await row.getByRole('button', { name: 'New link' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'This invitation is no longer pending' });
    await alert.waitFor();
    // Right under its row: the next row of the table is the note.
    const next = row.locator('xpath=following-sibling::tr[1]');
    await expect(next.getByRole('alert').textContent()).resolves.toBe(
      'This invitation is no longer pending: it was accepted or canceled.',
    );
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
  });

  it('lists an invitation expired in the last 30 days as expired, with New link and Cancel invitation', async () => {
    const lapsed = await invite('lapsed@acme.test', 'member');
    const forgotten = await invite('forgotten@acme.test', 'member');
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3_600_000);
    await world.current
      .db('account_links')
      .where({ id: lapsed.id })
      .update({ expires_at: daysAgo(2) });
    await world.current
      .db('account_links')
      .where({ id: forgotten.id })
      .update({ expires_at: daysAgo(31) });
    await openTeam();
    const invitations = page.getByRole('table', { name: 'Invitations' });
    const row = invitations.getByRole('row', { name: /lapsed@acme\.test/ });
    // Marked expired where its end is given, with what a pending invitation offers.
    await row.getByText(/^Expired /).waitFor();
    await row.getByRole('button', { name: 'Cancel invitation' }).waitFor();
    await expect(invitations.getByRole('row', { name: /forgotten@acme\.test/ }).count()).resolves.toBe(0);
    problems.push(...(await checkPage(page, 'team-expired-invitation')));
    // Invite says, before sending, that a new invitation replaces it, as for a pending one.
    await page.getByRole('button', { name: 'Invite' }).click();
    const inviting = page.getByRole('dialog', { name: 'Invite someone' });
    await inviting.getByLabel('Email').fill('lapsed@acme.test');
    await inviting
      .getByText('lapsed@acme.test already has an expired Member invitation: creating a new link replaces it.', {
        exact: true,
      })
      .waitFor();
    await inviting.getByRole('button', { name: 'Cancel' }).click();
    await inviting.waitFor({ state: 'detached' });

    await row.getByRole('button', { name: 'New link' }).click();
    const dialog = page.getByRole('dialog', { name: 'New invitation link' });
    await dialog.getByText(/^Send this link to lapsed@acme\.test; it works once, for 7 days \(until /).waitFor();
    const copied = (await dialog.getByLabel('Invitation link').textContent()) ?? '';
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Pending again: the row no longer says expired, now or once the team is read again.
    await openTeam();
    await row.getByRole('button', { name: 'New link' }).waitFor();
    await expect(row.getByText(/^Expired /).count()).resolves.toBe(0);
    // The invitee's old link stays refused; the new one works.
    const invitee = await freshBrowser();
    await invitee.goto(lapsed.url);
    await invitee.getByText('This link is not valid: it may have expired or been used already.').waitFor();
    await invitee.goto(copied);
    await invitee.getByRole('button', { name: 'Accept invitation' }).waitFor();
  });

  describe('Cancel invitation, confirmed', () => {
    /** Where the focus is: `main` (the page's content), `body` (lost), or a control's name. */
    const focused = () =>
      page.evaluate<string>(
        `(() => { const active = document.activeElement; return !active || active === document.body ? 'body' : active.tagName === 'MAIN' ? 'main' : active.getAttribute('aria-label') ?? active.textContent.trim(); })()`,
      );
    /** Cancels the row's invitation with the keyboard, and waits for the team to be read again. */
    const cancelWithKeyboard = async (email: string) => {
      // The invitation's own row (the note after a cancellation names its address too).
      const row = page
        .getByRole('row', { name: new RegExp(email.replaceAll('.', '\\.')) })
        .filter({ has: page.getByRole('button', { name: 'Cancel invitation' }) });
      await row.getByRole('button', { name: 'Cancel invitation' }).focus();
      await page.keyboard.press('Enter');
      const confirm = page.getByRole('dialog', { name: 'Cancel invitation' });
      await confirm.getByRole('button', { name: 'Keep invitation' }).waitFor();
      await page.keyboard.press('Tab');
      const readAgain = page.waitForResponse(
        (response) => response.request().method() === 'GET' && response.url().endsWith('/dashboard/api/team'),
      );
      await page.keyboard.press('Enter');
      await confirm.waitFor({ state: 'detached' });
      await row.waitFor({ state: 'detached' });
      await readAgain;
      // The read's rows are drawn.
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 50)))');
    };

    it('says which invitation was canceled where its row was, and leaves the focus on the page, not the body', async () => {
      await invite('first.goner@acme.test', 'member');
      await invite('second.goner@acme.test', 'member');
      await openTeam();
      const invitations = page.getByRole('table', { name: 'Invitations' });
      // Newest first: the second, then the first.
      const before = invitations.getByRole('row', { name: /second\.goner@acme\.test/ });
      await before.waitFor();
      await cancelWithKeyboard('first.goner@acme.test');
      const status = page.getByRole('status').filter({ hasText: 'canceled' });
      await expect(status.textContent()).resolves.toBe('Invitation to first.goner@acme.test canceled.');
      // Where the row was: right after the row before it.
      await expect(before.locator('xpath=following-sibling::tr[1]').getByRole('status').textContent()).resolves.toBe(
        'Invitation to first.goner@acme.test canceled.',
      );
      await expect(focused()).resolves.toBe('main');
      // The next Tab goes on in the page's content, not from the top of the document.
      await page.keyboard.press('Tab');
      await expect(
        page.evaluate<boolean>(`document.querySelector('main').contains(document.activeElement)`),
      ).resolves.toBe(true);
      // Gone on the server too.
      const stored = await world.current.db('account_links').where({ email: 'first.goner@acme.test' }).first();
      expect(stored.revoked_at).not.toBeNull();
    });

    it('says so too when it was the last invitation listed', async () => {
      const last = await invite('last.goner@acme.test', 'member');
      await world.current
        .db('account_links')
        .where({ workspace_id: world.current.workspace.id, kind: 'invitation' })
        .whereNot({ id: last.id })
        .whereNull('revoked_at')
        .update({ revoked_at: new Date() });
      await openTeam();
      await cancelWithKeyboard('last.goner@acme.test');
      await expect(page.getByRole('status').filter({ hasText: 'canceled' }).textContent()).resolves.toBe(
        'Invitation to last.goner@acme.test canceled.',
      );
      await expect(page.getByRole('table', { name: 'Invitations' }).getByRole('status').isVisible()).resolves.toBe(
        true,
      );
      await expect(focused()).resolves.toBe('main');
      problems.push(...(await checkPage(page, 'team-last-invitation-cancelled')));
    });
  });

  it('no page or dialog visited here has a serious or critical axe violation', () => {
    expect(problems).toEqual([]);
  });
});
