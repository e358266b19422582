import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { createToken, hashPassword, inviteMember, OPERATOR } from '@retention/domain';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { checkPage } from './support/page-checks.js';

/**
 * A workspace admin's housekeeping in a real Chromium (docs/dashboard-ui.md, "Team"): Remove
 * names the API tokens the person leaves behind and offers to revoke them (not ticked); the
 * tokens list names a removed creator; an invitation that replaces another says so; the
 * invitation page says who is signed in before accepting swaps the browser to the invitee;
 * a page loaded before a demotion stops offering what the role cannot do after its refusal;
 * Invite says what inviting someone already in People does before sending, and after it what the
 * server found. Controls are found by role and name only.
 */
const world = useDashboardWorld();
let context: BrowserContext;
let page: Page;
const problems: string[] = [];

const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

async function person(email: string, name: string, role: 'owner' | 'admin' | 'member'): Promise<string> {
  const [row] = await world.current
    .db('users')
    .insert({
      workspace_id: world.current.workspace.id,
      email,
      role,
      name,
      password_hash: await hashPassword(PASSWORD),
    })
    .returning('id');
  return (row as { id: string }).id;
}

async function tokenBy(userId: string, email: string, name: string): Promise<void> {
  await createToken(
    world.current.db,
    { workspace_id: world.current.workspace.id, name },
    { type: 'user', user_id: userId, label: email },
  );
}

const openTeam = async () => {
  await page.goto(`${world.current.url}/dashboard/settings/team`);
  await heading('Team').waitFor();
  await page.getByRole('table', { name: 'People' }).waitFor();
};

beforeAll(async () => {
  await world.current
    .db('users')
    .where({ email: 'owner@acme.test' })
    .update({
      password_hash: await hashPassword(PASSWORD),
      name: 'Olga Owner',
    });
  ({ context, page } = await desktopPage(world.current.browser));
  await signInThroughForm(page, world.current.url, 'owner@acme.test');
});

afterAll(async () => {
  await context?.close();
});

describe('removing someone who created API tokens', () => {
  it('names their active tokens, says they keep working, and leaves Revoke unticked; the list then says “(removed)”', async () => {
    const aliceId = await person('alice@acme.test', 'Alice Admin', 'admin');
    await tokenBy(aliceId, 'alice@acme.test', 'alice-ci');
    await tokenBy(aliceId, 'alice@acme.test', 'alice-reports');
    await createToken(world.current.db, { workspace_id: world.current.workspace.id, name: 'cli-made' }, OPERATOR);
    await openTeam();
    await page
      .getByRole('row', { name: /alice@acme\.test/ })
      .getByRole('button', { name: 'Remove' })
      .click();
    const confirm = page.getByRole('dialog', { name: 'Remove from the workspace' });
    const list = confirm.getByRole('list', { name: 'API tokens Alice Admin created' });
    await list.waitFor();
    // Newest first, as the tokens page lists them.
    expect((await list.getByRole('listitem').allTextContents()).sort()).toEqual(['alice-ci', 'alice-reports']);
    await confirm
      .getByText('They created 2 active API tokens, which belong to the workspace and keep working')
      .waitFor();
    const revoke = confirm.getByRole('checkbox', { name: 'Also revoke these 2 tokens' });
    await expect(revoke.isChecked()).resolves.toBe(false);
    await confirm.getByText('Not ticked (the default): they keep working after the removal.').waitFor();
    problems.push(...(await checkPage(page, 'team-remove-with-tokens')));
    await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByRole('row', { name: /alice@acme\.test/ }).waitFor({ state: 'detached' });
    // The page says who left, and that the tokens they left keep working, in its status line.
    await expect(page.getByRole('status').filter({ hasText: 'was removed' }).textContent()).resolves.toBe(
      'Alice Admin was removed. Their 2 API tokens keep working.',
    );

    await page.goto(`${world.current.url}/dashboard/settings/tokens`);
    await heading('API tokens').waitFor();
    const row = page.getByRole('row', { name: /alice-ci/ });
    await row.getByRole('cell', { name: 'alice@acme.test (removed)' }).waitFor();
    await row.getByRole('cell', { name: 'Active', exact: true }).waitFor();
    await page
      .getByRole('row', { name: /cli-made/ })
      .getByRole('cell', { name: 'Operator CLI' })
      .waitFor();
    problems.push(...(await checkPage(page, 'tokens-creator-removed')));
  });

  it("tells a removed person's open page that they were removed, not that the session ended", async () => {
    await person('carol@acme.test', 'Carol Member', 'member');
    const carol = await desktopPage(world.current.browser);
    try {
      await signInThroughForm(carol.page, world.current.url, 'carol@acme.test');
      await openTeam();
      await page
        .getByRole('row', { name: /carol@acme\.test/ })
        .getByRole('button', { name: 'Remove' })
        .click();
      const confirm = page.getByRole('dialog', { name: 'Remove from the workspace' });
      await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
      await confirm.waitFor({ state: 'detached' });
      // Carol's page, still open on the Overview, asks for the next page.
      await carol.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
      await carol.page.getByRole('heading', { name: 'Sign in to your workspace' }).waitFor();
      await carol.page
        .getByRole('status')
        .filter({
          hasText:
            'You were removed from this workspace, so your session ended. To come back, ask one of its owners or admins to invite you again.',
        })
        .waitFor();
      await expect(carol.page.getByText(/^Your session ended/).count()).resolves.toBe(0);
    } finally {
      await carol.context.close();
    }
  });

  it('revokes them with the removal when the box is ticked', async () => {
    const bobId = await person('bob@acme.test', 'Bob Admin', 'admin');
    await tokenBy(bobId, 'bob@acme.test', 'bob-ci');
    await openTeam();
    await page
      .getByRole('row', { name: /bob@acme\.test/ })
      .getByRole('button', { name: 'Remove' })
      .click();
    const confirm = page.getByRole('dialog', { name: 'Remove from the workspace' });
    await confirm.getByRole('list', { name: 'API tokens Bob Admin created' }).getByText('bob-ci').waitFor();
    await confirm.getByRole('checkbox', { name: 'Also revoke this token' }).check();
    await confirm
      .getByText('Revoked with the removal: the next request with it is refused.', { exact: false })
      .waitFor();
    problems.push(...(await checkPage(page, 'team-remove-revoke-ticked')));
    // One token: the button agrees with the checkbox in number.
    await confirm.getByRole('button', { name: 'Remove and revoke token', exact: true }).click();
    await confirm.waitFor({ state: 'detached' });
    await expect(page.getByRole('status').filter({ hasText: 'was removed' }).textContent()).resolves.toBe(
      'Bob Admin was removed and their 1 API token was revoked.',
    );
    problems.push(...(await checkPage(page, 'team-removed-status')));

    await page.goto(`${world.current.url}/dashboard/settings/tokens`);
    const row = page.getByRole('row', { name: /bob-ci/ });
    await row.getByRole('cell', { name: 'bob@acme.test (removed)' }).waitFor();
    await row.getByText(/^Revoked/).waitFor();
  });

  it('demoting an admin to member names the tokens they created, which keep working', async () => {
    const caraId = await person('cara@acme.test', 'Cara Admin', 'admin');
    await tokenBy(caraId, 'cara@acme.test', 'cara-ci');
    await openTeam();
    await page
      .getByRole('row', { name: /cara@acme\.test/ })
      .getByLabel('Role of cara@acme.test')
      .selectOption('member');
    const confirm = page.getByRole('dialog', { name: 'Change role' });
    await confirm.getByRole('list', { name: 'API tokens Cara Admin created' }).getByText('cara-ci').waitFor();
    await confirm.getByText('The API tokens they created keep working', { exact: false }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
  });
});

describe('inviting an address with a pending invitation', () => {
  it('says the new one replaces the one sent before, whose link no longer works', async () => {
    await openTeam();
    const invite = async () => {
      await page.getByRole('button', { name: 'Invite' }).click();
      const dialog = page.getByRole('dialog', { name: 'Invite someone' });
      await dialog.getByLabel('Email').fill('dave.member@acme.test');
      await dialog.getByRole('button', { name: 'Create invitation link' }).click();
      return page.getByRole('dialog', { name: 'Invitation created' });
    };
    const first = await invite();
    await first.getByLabel('Invitation link').waitFor();
    await expect(first.getByText('This replaces the invitation').count()).resolves.toBe(0);
    await first.getByRole('button', { name: 'Done' }).click();
    await first.waitFor({ state: 'detached' });
    const second = await invite();
    await second.getByText(/^This replaces the invitation sent on .+; its link no longer works\.$/).waitFor();
    problems.push(...(await checkPage(page, 'team-invitation-replaced')));
    await second.getByRole('button', { name: 'Done' }).click();
  });
});

describe('inviting someone already listed in People', () => {
  it('says before sending what the invitation does to them, and after it what the server found', async () => {
    // An admin the operator made, who has no password yet (an invitation takes the account over),
    // and a member who signs in (the server refuses an invitation to them).
    const [ops] = await world.current
      .db('users')
      .insert({ workspace_id: world.current.workspace.id, email: 'ops.nopass@acme.test', role: 'admin', name: 'Ops' })
      .returning('id');
    const opsId = (ops as { id: string }).id;
    await person('signs.in@acme.test', 'Sig Nin', 'member');
    await openTeam();
    await page.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite someone' });
    const role = (name: string) =>
      dialog.getByRole('group', { name: 'Role' }).getByRole('radio', { name, exact: true });
    const email = dialog.getByLabel('Email');
    // In any case, as the server compares addresses; with the default role, Member.
    await email.fill('Ops.NoPass@acme.test');
    await dialog
      .getByText(
        'ops.nopass@acme.test is already on the team as Admin and has no password yet: accepting this invitation makes them a Member.',
        { exact: true },
      )
      .waitFor();
    await role('Admin').check();
    await dialog
      .getByText(
        'ops.nopass@acme.test is already on the team as Admin and has no password yet: this invitation only lets them set a password.',
        { exact: true },
      )
      .waitFor();
    await email.fill('signs.in@acme.test');
    await dialog
      .getByText('signs.in@acme.test is already on the team as Member: they cannot be invited again.', { exact: true })
      .waitFor();
    problems.push(...(await checkPage(page, 'team-invite-listed-person')));

    // Another tab makes ops a member meanwhile: the page's list is stale, and the answer says so.
    await email.fill('ops.nopass@acme.test');
    await role('Member').check();
    await dialog.getByText(/makes them a Member\.$/).waitFor();
    await world.current.db('users').where({ id: opsId }).update({ role: 'member' });
    await dialog.getByRole('button', { name: 'Create invitation link' }).click();
    const created = page.getByRole('dialog', { name: 'Invitation created' });
    await created.getByLabel('Invitation link').waitFor();
    await expect(
      created
        .getByText(
          'ops.nopass@acme.test is already on the team as Member and has no password yet: this invitation only lets them set a password.',
          { exact: true },
        )
        .isVisible(),
    ).resolves.toBe(true);
    await created.getByRole('button', { name: 'Done' }).click();
    await created.waitFor({ state: 'detached' });
  });
});

describe('an invitation opened in a browser signed in as someone else', () => {
  it('says who is signed in and that accepting signs this browser in as the invitee instead', async () => {
    const { invite_url: link } = await inviteMember(
      world.current.db,
      {
        workspace_id: world.current.workspace.id,
        email: 'erin.member@acme.test',
        role: 'member',
        inviter_role: null,
        base_url: world.current.url,
      },
      OPERATOR,
    );
    await page.goto(link);
    await heading(/^Join /).waitFor();
    const note = page.getByRole('note', { name: 'Signed in as someone else' });
    await expect(note.textContent()).resolves.toBe(
      'This browser is signed in as Olga Owner (owner@acme.test). Accepting signs Olga Owner out here and signs ' +
        'this browser in as erin.member@acme.test instead.',
    );
    problems.push(...(await checkPage(page, 'invitation-signed-in-as-other')));
    // Signed out, the same page says nothing of it.
    const stranger = await desktopPage(world.current.browser);
    await stranger.page.goto(link);
    await stranger.page.getByRole('heading', { level: 1, name: /^Join / }).waitFor();
    await stranger.page.getByRole('button', { name: 'Accept invitation' }).waitFor();
    await expect(stranger.page.getByRole('note').count()).resolves.toBe(0);
    await stranger.context.close();

    await page.getByLabel('Name').fill('Erin Member');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await heading('Overview').waitFor();
    const me = await page.evaluate(() => fetch('/dashboard/api/me').then((reply) => reply.json()));
    expect((me as { user: { email: string } }).user.email).toBe('erin.member@acme.test');
  });
});

describe('a page loaded before a demotion', () => {
  it('shows the refusal in words and stops offering what the role cannot do', async () => {
    await person('fay@acme.test', 'Fay Admin', 'admin');
    const fay = await desktopPage(world.current.browser);
    await signInThroughForm(fay.page, world.current.url, 'fay@acme.test');
    await fay.page.goto(`${world.current.url}/dashboard/settings/tokens`);
    await fay.page.getByRole('heading', { level: 1, name: 'API tokens' }).waitFor();
    await fay.page.getByRole('button', { name: 'Create token' }).waitFor();
    // An owner demotes her in another browser.
    const owner = await desktopPage(world.current.browser);
    await signInThroughForm(owner.page, world.current.url, 'owner@acme.test');
    const fayId = (await world.current.db('users').where({ email: 'fay@acme.test' }).first()).id as string;
    const demoted = await owner.context.request.patch(`${world.current.url}/dashboard/api/team/members/${fayId}`, {
      data: { role: 'member' },
      headers: { origin: world.current.url },
    });
    expect(demoted.status()).toBe(200);
    await owner.context.close();

    await fay.page.getByRole('button', { name: 'Create token' }).click();
    const dialog = fay.page.getByRole('dialog', { name: 'Create token' });
    await dialog.getByLabel('Name').fill('too-late');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    // The refusal ("Only owners and admins can manage API tokens.", dashboard API tests) brings
    // the page her role at once: a member does not see the tokens at all (their tab says so in
    // its h1), so the dialog and the list go with it; the refusal's words may be gone before a
    // slow machine looks for them, so the page's end state is what is checked here.
    await fay.page.getByRole('heading', { level: 1, name: 'The API tokens list is not shown to members' }).waitFor();
    await dialog.waitFor({ state: 'detached' });
    await eventuallyNone(fay.page, 'Create token');
    await expect(fay.page.getByRole('button', { name: 'Revoke' }).count()).resolves.toBe(0);
    await fay.context.close();
  });
});

async function eventuallyNone(target: Page, buttonName: string): Promise<void> {
  await target.getByRole('button', { name: buttonName }).waitFor({ state: 'detached' });
}

describe('an admin without a name, on a phone, without email', () => {
  it('reads “You” in their own row, and says in a row why Reset link is not offered and who can make one', async () => {
    // Nameless, as an account the operator made: their own row read "— (you)".
    await world.current.db('users').insert({
      workspace_id: world.current.workspace.id,
      email: 'ada.nameless@acme.test',
      role: 'admin',
      name: null,
      password_hash: await hashPassword(PASSWORD),
    });
    // Members now, one an admin before and one an owner before; and one only ever a member.
    for (const [email, formerRole] of [
      ['was.admin@acme.test', 'admin'],
      ['was.owner@acme.test', 'owner'],
      ['only.member@acme.test', null],
    ] as const) {
      await world.current.db('users').insert({
        workspace_id: world.current.workspace.id,
        email,
        role: 'member',
        highest_former_role: formerRole,
        name: email.split('@')[0],
        password_hash: await hashPassword(PASSWORD),
      });
    }
    const phone = await world.current.browser.newContext({ viewport: { width: 390, height: 844 } });
    const target = await phone.newPage();
    target.setDefaultTimeout(10_000);
    await signInThroughForm(target, world.current.url, 'ada.nameless@acme.test');
    await target.goto(`${world.current.url}/dashboard/settings/team`);
    const people = target.getByRole('table', { name: 'People' });
    const row = (email: string) => people.getByRole('row', { name: new RegExp(email.replaceAll('.', '\\.')) });
    await row('only.member@acme.test').getByRole('button', { name: 'Password reset link' }).waitFor();

    const own = row('ada.nameless@acme.test');
    await expect(own.getByRole('cell').first().textContent()).resolves.toBe('You');
    await expect(own.getByText('—').count()).resolves.toBe(0);

    const hints = {
      'was.admin@acme.test': 'Was an admin: only an owner can reset their password.',
      'was.owner@acme.test': "Was an owner: only this service's operator can reset their password.",
    };
    /** The hint is in the row, within the table's box, which does not scroll sideways for it. */
    const hintFits = (hint: Locator) =>
      hint.evaluate((element) => {
        const box = element.closest('.table-wrap')!;
        return (
          element.getBoundingClientRect().right <= box.getBoundingClientRect().right &&
          box.scrollWidth <= box.clientWidth
        );
      });
    for (const [email, hint] of Object.entries(hints)) {
      await expect(row(email).getByRole('button', { name: 'Password reset link' }).count()).resolves.toBe(0);
      const said = row(email).getByText(hint, { exact: true });
      await expect(said.isVisible()).resolves.toBe(true);
      // On the phone's width (the row stacked), and on a desktop's (checkPage ends at 1280 px).
      expect([email, 390, await hintFits(said)]).toEqual([email, 390, true]);
    }
    // Only where a role held before is why: not for someone only ever a member.
    await expect(
      row('only.member@acme.test')
        .getByText(/^Was an /)
        .count(),
    ).resolves.toBe(0);
    problems.push(...(await checkPage(target, 'team-former-role-hints')));
    // At 1280 px the people's table is laid out as a table, its column headers shown (a table
    // too wide for its box is stacked, its headers hidden), and each line fits its actions cell.
    const header = await people.getByRole('columnheader', { name: 'Email' }).boundingBox();
    expect(header!.height).toBeGreaterThan(10);
    for (const [email, hint] of Object.entries(hints)) {
      const said = row(email).getByText(hint);
      expect([email, 1280, await hintFits(said)]).toEqual([email, 1280, true]);
      // Two lines: wrapped at the cell's width, neither one long line nor one word a line.
      const lines = await said.evaluate((element) => {
        const lineHeight = element.ownerDocument.defaultView!.getComputedStyle(element).lineHeight;
        return element.getBoundingClientRect().height / parseFloat(lineHeight);
      });
      expect([email, Math.round(lines)]).toEqual([email, 2]);
    }
    await phone.close();
  });
});

describe('the pages above', () => {
  it('have no serious or critical axe violation and fit a 390 px screen', () => {
    expect(problems).toEqual([]);
  });
});
