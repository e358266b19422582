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
  await page.getByRole('table', { name: 'Pending invitations' }).waitFor();
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
        .getByRole('table', { name: 'Pending invitations' })
        .getByRole('row', { name: /late\.joiner@acme\.test/ })
        .count(),
    ).resolves.toBe(0);
  });

  it('offers New link only where the server would make one', async () => {
    // The world's owner invitation names an address that signs in now: it cannot be renewed.
    await invite('helper@acme.test', 'member');
    await openTeam();
    const ownerRow = page.getByRole('table', { name: 'Pending invitations' }).getByRole('row', { name: /owner@acme/ });
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
      'This invitation is no longer pending: it was accepted or cancelled.',
    );
    await expect(page.getByRole('dialog').count()).resolves.toBe(0);
  });

  it('no page or dialog visited here has a serious or critical axe violation', () => {
    expect(problems).toEqual([]);
  });
});
