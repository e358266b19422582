import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { MAX_WEBHOOK_ENDPOINTS, TOO_MANY_WEBHOOK_ENDPOINTS } from '@retention/core/webhook-endpoints';
import { createEndpoint, deleteEndpoint, recoverCampaign } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { startSmtpStandIn, type ReceivedMail, type SmtpStandIn } from '@retention/testkit/smtp';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';
import { description, expectFieldError, expectFieldErrorGone } from './support/field-errors.js';
import { checkPage, seriousViolations } from './support/page-checks.js';

/**
 * The account and endpoint flows settings-flows.test.ts does not drive: password change, sign
 * out everywhere, the emailed password reset, the auto-disable banner, Retry failed since…,
 * Delete endpoint and Remove member. Real headless Chromium against the real API app,
 * PostgreSQL, Redis, a worker, an HTTPS receiver and an in-process SMTP server (smtp-server).
 * Controls are found by role and accessible name only. The tests run in order and share one
 * signed-in owner page; other people and devices are browser contexts of their own.
 */
let smtp: SmtpStandIn;

// Registered before the world's own beforeAll, so the SMTP server listens when the world starts.
beforeAll(async () => {
  smtp = await startSmtpStandIn();
});

const world = useDashboardWorld({ smtpUrl: () => smtp.url });

const NEW_PASSWORD = 'a fresh and longer passphrase';
const MEMBER_PASSWORD = 'the member chose this one';
const OWNER = 'owner@acme.test';
const MEMBER = 'member@acme.test';

let context: BrowserContext;
/** The owner's second device, signed in during the password change. */
let laptop: Page;
/** The member's device, signed in by the emailed reset link. */
let memberDevice: Page;
let page: Page;
const others: BrowserContext[] = [];

beforeAll(async () => {
  ({ context, page } = await desktopPage(world.current.browser));
});

afterAll(async () => {
  await Promise.all(others.map((other) => other.close()));
  await context?.close();
  await smtp?.close();
});

const heading = (target: Page, name: string) => target.getByRole('heading', { level: 1, name });

/** A page in a browser context of its own: another device. */
async function anotherDevice(): Promise<Page> {
  const { context: other, page: target } = await desktopPage(world.current.browser);
  others.push(other);
  return target;
}

/** The session cookie of a page's context, for calling the API as that page would. */
async function cookieOf(target: Page): Promise<string> {
  return (await target.context().cookies()).map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
}

async function meStatus(cookie: string): Promise<number> {
  return (await fetch(`${world.current.url}/dashboard/api/me`, { headers: { cookie } })).status;
}

/**
 * The answer to a sign-in through the API (counts against the account's sign-in window, as any
 * attempt).
 */
async function signInStatus(email: string, password: string): Promise<number> {
  const reply = await fetch(`${world.current.url}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: world.current.url },
    body: JSON.stringify({ email, password }),
  });
  return reply.status;
}

/**
 * After navigating on a page whose session ended: the sign-in form, remembering where it was
 * headed.
 */
async function expectSentToSignIn(target: Page, next: string): Promise<void> {
  await target.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(new URL(target.url()).searchParams.get('next')).toBe(next);
}

async function openAccount(): Promise<void> {
  await page.getByRole('button', { name: /Account menu/ }).click();
  await page.getByRole('link', { name: 'Account' }).click();
  await heading(page, 'Account').waitFor();
}

async function openSettings(tab: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: tab }).click();
  await heading(page, tab).waitFor();
}

const problems: string[] = [];

describe('the account page', () => {
  it('the owner accepts the invitation and is signed in', async () => {
    await page.goto(world.current.ownerInvitation);
    await page.getByLabel('Name').fill('Olive Owner');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await heading(page, 'Overview').waitFor();
  });

  it('changes the password: the old one no longer signs in, the new one does, other sessions end', async () => {
    laptop = await anotherDevice();
    await signInThroughForm(laptop, world.current.url, OWNER);
    const laptopCookie = await cookieOf(laptop);
    expect(await meStatus(laptopCookie)).toBe(200);

    await openAccount();
    // A wrong current password is refused at the field it is about, as a person reads it (the
    // API's message is `current_password: is not your current password`, its field in `param`),
    // and changes nothing.
    const current = page.getByLabel('Current password');
    await current.fill('not my password at all');
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: /./ });
    await refusal.waitFor();
    await expect(refusal.allTextContents()).resolves.toEqual(['That is not your current password.']);
    await expect(current.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(description(current)).resolves.toBe('That is not your current password.');
    await expect(page.getByLabel('New password').getAttribute('aria-invalid')).resolves.toBeNull();
    await expect(page.getByText('current_password').count()).resolves.toBe(0);
    problems.push(...(await seriousViolations(page, 'account with a wrong current password')));
    expect(await meStatus(laptopCookie)).toBe(200);

    // Edited, the field no longer says the refusal of what it held, before the next submit.
    await page.getByLabel('Current password').fill(PASSWORD);
    await expectFieldErrorGone(page.getByRole('main'), current, 'That is not your current password.');
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    // With no second field to type it again in, the new password can be read back before it is kept.
    const newPassword = page.getByLabel('New password');
    await expect(newPassword.getAttribute('type')).resolves.toBe('password');
    await page.getByRole('button', { name: 'Show password' }).click();
    await expect(newPassword.getAttribute('type')).resolves.toBe('text');
    await expect(newPassword.inputValue()).resolves.toBe(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Hide password' }).click();
    await expect(newPassword.getAttribute('type')).resolves.toBe('password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed. Your other sessions have ended.' }).waitFor();
    await expect(page.getByRole('alert').filter({ hasText: /./ }).count()).resolves.toBe(0);
    await expect(page.getByLabel('Current password').inputValue()).resolves.toBe('');
    await expect(page.getByLabel('Current password').getAttribute('aria-invalid')).resolves.toBeNull();
    problems.push(...(await seriousViolations(page, 'account after a password change')));

    // This session lives on; the laptop's ended: its open page asks to sign in again in place
    // (the next describe), and a page loaded now sends it to sign in.
    await page.reload();
    await heading(page, 'Account').waitFor();
    expect(await meStatus(laptopCookie)).toBe(401);
    await laptop.goto(`${world.current.url}/dashboard/campaigns`);
    await expectSentToSignIn(laptop, '/campaigns');

    // An address the server cannot take (over 320 characters, which the browser lets through) is
    // refused at the Email field, in words, which keeps the focus and the password typed.
    const email = laptop.getByLabel('Email');
    await email.fill(`${'o'.repeat(311)}@acme.test`);
    await laptop.getByLabel('Password').fill(PASSWORD);
    await laptop.getByRole('button', { name: 'Sign in' }).click();
    await expectFieldError(laptop.getByRole('main'), email, 'That must be an email address.', 'email');
    await expect(email.evaluate((element) => element === element.ownerDocument.activeElement)).resolves.toBe(true);
    await expect(laptop.getByLabel('Password').inputValue()).resolves.toBe(PASSWORD);

    // The old password is refused there; the new one signs in, back where it was headed.
    await laptop.getByLabel('Email').fill(OWNER);
    await expectFieldErrorGone(laptop.getByRole('main'), email, 'That must be an email address.');
    await laptop.getByLabel('Password').fill(PASSWORD);
    await laptop.getByRole('button', { name: 'Sign in' }).click();
    await laptop.getByRole('alert').filter({ hasText: /./ }).waitFor();
    await expect(laptop.getByRole('button', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await signInThroughForm(laptop, world.current.url, OWNER, { password: NEW_PASSWORD, landing: 'Campaigns' });
  });

  it('"Sign out everywhere" ends this session and the other device\'s', async () => {
    const laptopCookie = await cookieOf(laptop);
    const hereCookie = await cookieOf(page);
    expect(await meStatus(laptopCookie)).toBe(200);

    // It asks first: Cancel ends nothing.
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    const confirm = page.getByRole('dialog', { name: 'Sign out everywhere' });
    await confirm.getByText(/Every session of yours ends, on every device, this one too/).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await meStatus(hereCookie)).toBe(200);
    expect(await meStatus(laptopCookie)).toBe(200);

    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await confirm.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The sign-in page says why this tab is there.
    await page
      .getByRole('status')
      .filter({ hasText: 'You are signed out on every device, this one included.' })
      .waitFor();
    // Submitted, only the outcome of that submit shows: a wrong password's refusal, not the note
    // of how the tab got here above it; reloaded, the note does not come back either. (The
    // member's address: the owner's sign-ins from here are near their limit per 15 minutes.)
    await page.getByLabel('Email').fill(MEMBER);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /./ }).waitFor();
    await expect(page.getByText('You are signed out on every device, this one included.').count()).resolves.toBe(0);
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expect(page.getByText('You are signed out on every device, this one included.').count()).resolves.toBe(0);
    expect(await meStatus(hereCookie)).toBe(401);
    expect(await meStatus(laptopCookie)).toBe(401);

    // The other device's open page asks to sign in again where it is, rather than leave it.
    await laptop.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Customers' }).click();
    await laptop.getByRole('dialog', { name: 'Your session ended' }).waitFor();
    expect(new URL(laptop.url()).pathname).toBe('/dashboard/customers');
    // Reloaded, it goes to sign in, and says why its session ended.
    await laptop.reload();
    await expectSentToSignIn(laptop, '/customers');
    await laptop
      .getByRole('status')
      .filter({
        hasText: /^Your session ended: it expired, or you were signed out, on another device or by a password change/,
      })
      .waitFor();

    await signInThroughForm(page, world.current.url, OWNER, { password: NEW_PASSWORD });
    // Four sign-ins and two password changes, each a password hash (slow on purpose), and two axe
    // scans: 15 s alone, past the default 30 s beside another browser test file on a busy 2-core
    // machine.
  }, 60_000);

  it('says the session ended on a page loaded after it ended elsewhere, not only on one open then', async () => {
    const tablet = await anotherDevice();
    await signInThroughForm(tablet, world.current.url, OWNER, { password: NEW_PASSWORD });
    // Ended elsewhere (its own session only, as Sign out everywhere on another device ends it),
    // then a fresh load.
    const ended = await fetch(`${world.current.url}/dashboard/api/session`, {
      method: 'DELETE',
      headers: { cookie: await cookieOf(tablet), origin: world.current.url },
    });
    expect(ended.status).toBe(204);
    await tablet.goto(`${world.current.url}/dashboard/customers`);
    await expectSentToSignIn(tablet, '/customers');
    await tablet
      .getByRole('status')
      .filter({ hasText: /^Your session ended: / })
      .waitFor();
    // Said once: the next visit, never signed in since, says nothing.
    await tablet.goto(`${world.current.url}/dashboard/customers`);
    await expectSentToSignIn(tablet, '/customers');
    await expect(
      tablet
        .getByRole('status')
        .filter({ hasText: /^Your session ended: / })
        .count(),
    ).resolves.toBe(0);
    await tablet.context().close();
  }, 30_000);
});

/**
 * A session that ends under a page (Sign out everywhere on another device, Sign out in another
 * tab): the page asks for the password in place, keeps what was typed, and the request that met
 * the 401 goes on once the same person is back; anyone else gets a fresh page without it
 * (docs/dashboard-ui.md, "A session that ends under a page").
 */
describe('a session that ends under a form', () => {
  const signInAgain = (target: Page) => target.getByRole('dialog', { name: 'Your session ended' });

  /** Whether the element labelled `label` (inside `within`, else the page) has the keyboard's focus. */
  const hasFocus = (target: Page, label: string, within?: ReturnType<Page['getByRole']>) =>
    (within ?? target)
      .getByLabel(label, { exact: true })
      .evaluate((element) => element === element.ownerDocument.activeElement);

  /** What the tab keeps of the page beyond its memory: none of it may hold a draft. */
  const stored = (target: Page) =>
    target.evaluate<string>('JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)])');

  /** Sign out everywhere from the owner's other device: every session of theirs ends. */
  async function signOutEverywhereElsewhere(): Promise<void> {
    const device = await anotherDevice();
    await signInThroughForm(device, world.current.url, OWNER, { password: NEW_PASSWORD });
    await device.getByRole('button', { name: /Account menu/ }).click();
    await device.getByRole('link', { name: 'Account' }).click();
    await device.getByRole('button', { name: 'Sign out everywhere' }).click();
    await device
      .getByRole('dialog', { name: 'Sign out everywhere' })
      .getByRole('button', { name: 'Sign out everywhere' })
      .click();
    await device.getByRole('button', { name: 'Sign in' }).waitFor();
    await device.context().close();
  }

  it('Save after Sign out everywhere elsewhere: signed in again in place, the typed name is kept and saved', async () => {
    const draft = 'Acme, renamed while signed out';
    await openSettings('Workspace');
    const nameField = page.getByRole('main').getByLabel('Workspace name');
    await nameField.fill(draft);
    await signOutEverywhereElsewhere();

    await page.getByRole('button', { name: 'Save' }).click();
    const dialog = signInAgain(page);
    await dialog.waitFor();
    // The page is where it was, with the text typed; the dialog knows whose session it was and
    // starts at the Password.
    expect(new URL(page.url()).pathname).toBe('/dashboard/settings/workspace');
    await expect(page.getByRole('button', { name: 'Sign in' }).count()).resolves.toBe(1);
    await expect(dialog.getByLabel('Email').inputValue()).resolves.toBe(OWNER);
    await expect(hasFocus(page, 'Password', dialog)).resolves.toBe(true);
    await expect(nameField.inputValue()).resolves.toBe(draft);
    problems.push(...(await seriousViolations(page, 'sign in again dialog')));

    // Closed without signing in, the page stays as it was, signed out: the Save says why it
    // failed, the text can still be copied out, and the next Save asks again.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('main').getByText('Sign in to continue: there is no session, or it has ended.').waitFor();
    await expect(nameField.inputValue()).resolves.toBe(draft);
    await expect(
      page.getByRole('button', { name: 'Save' }).evaluate((element) => element === element.ownerDocument.activeElement),
    ).resolves.toBe(true);
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await expect(hasFocus(page, 'Password', dialog)).resolves.toBe(true);

    await page.keyboard.type(NEW_PASSWORD);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    // The Save that met the 401 goes on: saved, the text still in its field, the focus back on Save.
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect(nameField.inputValue()).resolves.toBe(draft);
    expect((await world.current.db('workspaces').where({ id: world.current.workspace.id }).first()).name).toBe(draft);
    await expect(
      page.getByRole('button', { name: 'Save' }).evaluate((element) => element === element.ownerDocument.activeElement),
    ).resolves.toBe(true);
    expect(await stored(page)).not.toContain(draft);
  }, 60_000);

  it('Save in the Edit endpoint dialog after Sign out in another tab: signed in again over it, and saved', async () => {
    const { db, workspace } = world.current;
    const owner = (await db('users').where({ email: workspace.ownerEmail }).first()).id as string;
    const endpoint = await createEndpoint(db, testSecretsKeyBytes(), {
      workspace_id: workspace.id,
      actor_id: owner,
      name: 'Billing CRM',
      url: world.current.receiver.url('/hooks/billing'),
    });
    try {
      await page.goto(`${world.current.url}/dashboard/settings/webhooks/${endpoint.id}`);
      await heading(page, 'Billing CRM').waitFor();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const edit = page.getByRole('dialog', { name: 'Edit endpoint' });
      await edit.getByLabel('Name').fill('Billing CRM, renamed');

      // Another tab of this browser signs out: the cookie both tabs send is gone.
      const tab = await context.newPage();
      await tab.goto(`${world.current.url}/dashboard/`);
      await tab.getByRole('button', { name: /Account menu/ }).click();
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByRole('button', { name: 'Sign in' }).waitFor();
      await tab.close();

      await edit.getByRole('button', { name: 'Save' }).click();
      const dialog = signInAgain(page);
      await dialog.waitFor();
      await expect(hasFocus(page, 'Password', dialog)).resolves.toBe(true);
      await expect(edit.getByLabel('Name').inputValue()).resolves.toBe('Billing CRM, renamed');
      await dialog.getByLabel('Password').fill(NEW_PASSWORD);
      await dialog.getByRole('button', { name: 'Sign in' }).click();
      await dialog.waitFor({ state: 'detached' });
      // The edit goes on and closes its dialog, as a Save does; the focus is back on Edit.
      await edit.waitFor({ state: 'detached' });
      await heading(page, 'Billing CRM, renamed').waitFor();
      expect((await db('webhook_endpoints').where({ id: endpoint.id }).first()).name).toBe('Billing CRM, renamed');
      await expect(
        page
          .getByRole('button', { name: 'Edit', exact: true })
          .evaluate((element) => element === element.ownerDocument.activeElement),
      ).resolves.toBe(true);
    } finally {
      await deleteEndpoint(db, { id: endpoint.id, actor_id: owner });
    }
  }, 60_000);

  it('someone else signing in in the dialog gets a fresh page: the draft is neither shown nor sent', async () => {
    const draft = 'A name the member must never get';
    const before = (await world.current.db('workspaces').where({ id: world.current.workspace.id }).first()).name;
    const device = await anotherDevice();
    await signInThroughForm(device, world.current.url, OWNER, { password: NEW_PASSWORD });
    await device.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await device.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Workspace' }).click();
    await heading(device, 'Workspace').waitFor();
    await device.getByRole('main').getByLabel('Workspace name').fill(draft);
    const sent: string[] = [];
    device.on('request', (request) => {
      if (request.method() !== 'GET')
        sent.push(`${request.method()} ${new URL(request.url()).pathname} ${request.postData() ?? ''}`);
    });
    // Ended on the server, as an expiry or a sign-out elsewhere ends it.
    const ended = await fetch(`${world.current.url}/dashboard/api/session`, {
      method: 'DELETE',
      headers: { cookie: await cookieOf(device), origin: world.current.url },
    });
    expect(ended.status).toBe(204);

    await device.getByRole('button', { name: 'Save' }).click();
    const dialog = signInAgain(device);
    await dialog.waitFor();
    await dialog.getByLabel('Email').fill(MEMBER);
    await dialog.getByLabel('Password').fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    // A fresh Overview, as the member: nothing of the owner's page came along.
    await heading(device, 'Overview').waitFor();
    expect(new URL(device.url()).pathname).toBe('/dashboard/');
    await device.getByRole('button', { name: /Mo Member/ }).waitFor();
    await device.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await device.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Workspace' }).click();
    await heading(device, 'Workspace').waitFor();
    await expect(device.getByRole('main').getByLabel('Workspace name').inputValue()).resolves.toBe(before);
    expect(await stored(device)).not.toContain(draft);
    // The draft went out once, refused with 401, and never with the member's session.
    expect(sent.filter((line) => line.includes(draft))).toHaveLength(1);
    expect(sent.filter((line) => line.startsWith('POST /dashboard/api/session'))).toHaveLength(1);
    expect((await world.current.db('workspaces').where({ id: world.current.workspace.id }).first()).name).toBe(before);

    await device.context().close();
  }, 60_000);

  it('another tab signing in as someone else gives a tab with a draft a fresh page, before it is sent', async () => {
    const draft = 'A name the owner must never get';
    const device = await anotherDevice();
    await signInThroughForm(device, world.current.url, MEMBER);
    await device.getByRole('button', { name: /Account menu/ }).click();
    await device.getByRole('link', { name: 'Account' }).click();
    await heading(device, 'Account').waitFor();
    await device.getByRole('main').getByLabel('Name').fill(draft);
    // The other tab's sign-in ends the member's session and gives both tabs the owner's cookie:
    // the draft would go out with it.
    const tab = await device.context().newPage();
    await signInThroughForm(tab, world.current.url, OWNER, { password: NEW_PASSWORD });
    await heading(device, 'Overview').waitFor();
    await device.getByRole('button', { name: /Olive Owner/ }).waitFor();
    expect(new URL(device.url()).pathname).toBe('/dashboard/');
    await device.getByRole('button', { name: /Account menu/ }).click();
    await device.getByRole('link', { name: 'Account' }).click();
    await heading(device, 'Account').waitFor();
    await expect(device.getByRole('main').getByLabel('Name').inputValue()).resolves.toBe('Olive Owner');
    expect(await stored(device)).not.toContain(draft);
    expect((await world.current.db('users').where({ email: MEMBER }).first()).name).toBe('Mo Member');
    await device.context().close();
  }, 60_000);
});

describe('forgot password', () => {
  let resetLink = '';

  it('emails a link to a known address only, and the page says the same either way', async () => {
    const visitor = await anotherDevice();
    const ask = async (email: string): Promise<string> => {
      await visitor.goto(`${world.current.url}/dashboard/sign-in`);
      await visitor.getByRole('link', { name: 'Forgot your password?' }).click();
      await visitor.getByLabel('Email').fill(email);
      await visitor.getByRole('button', { name: 'Send reset link' }).click();
      const said = visitor.getByRole('status').filter({ hasText: /./ });
      await said.waitFor();
      return (await said.textContent()) ?? '';
    };
    const before = smtp.received.length;
    const unknown = await ask('nobody@acme.test');
    problems.push(...(await seriousViolations(visitor, 'forgot password, sent')));
    const known = await ask(MEMBER.toUpperCase());
    expect(known).toBe(unknown);
    expect(known).not.toMatch(/nobody|member@/i);
    expect(known).toContain('a link to set a new password is on its way. It works once, for an hour.');

    await eventually(() => smtp.received.length > before, 10_000);
    // Only the known address got mail (the unknown one was asked first, and gets none).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = smtp.received.slice(before);
    expect(sent.map((mail) => mail.to)).toEqual([[MEMBER]]);
    expect(sent[0]!.raw).toMatch(/Subject: Reset your password/);
    resetLink = new RegExp(`${world.current.url}/dashboard/reset/[A-Za-z0-9_-]{43}`).exec(sent[0]!.text)![0];
  });

  it("the emailed link sets a new password and signs in; it works once; the old password doesn't", async () => {
    const member = (memberDevice = await anotherDevice());
    await member.goto(resetLink);
    await member.getByRole('heading', { name: 'Set a new password' }).waitFor();
    await member.getByText(`For ${MEMBER}.`, { exact: false }).waitFor();
    problems.push(...(await seriousViolations(member, 'reset password')));
    await member.getByLabel('New password').fill(MEMBER_PASSWORD);
    await member.getByRole('button', { name: 'Set password and sign in' }).click();
    await heading(member, 'Overview').waitFor();
    expect(await meStatus(await cookieOf(member))).toBe(200);

    const again = await anotherDevice();
    await again.goto(resetLink);
    await again.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
    await expect(again.getByLabel('New password').count()).resolves.toBe(0);

    expect(await signInStatus(MEMBER, PASSWORD)).toBe(401);
    expect(await signInStatus(MEMBER, MEMBER_PASSWORD)).toBe(200);
  });
});

describe('an endpoint that keeps failing', () => {
  const hookPath = '/hooks/flaky';
  let secret = '';
  let endpointId = '';

  it('is turned off after 10 failures: the list says why, with a banner whose Turn on works', async () => {
    await openSettings('Outbound webhooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add endpoint' });
    await dialog.getByLabel('Name').fill('Flaky CRM');
    await dialog.getByLabel('URL').fill(world.current.receiver.url(hookPath));
    await dialog.getByRole('button', { name: 'Save' }).click();
    const shown = page.getByRole('dialog', { name: 'Endpoint added' });
    secret = (await shown.getByLabel('Signing secret').textContent()) ?? '';
    await shown.getByRole('button', { name: 'Done' }).click();
    world.current.receiver.route(hookPath, { secret, behaviour: { kind: 'status', status: 500, body: 'down' } });
    endpointId = (await world.current.db('webhook_endpoints').where({ name: 'Flaky CRM' }).first()).id;

    // A test that fails says so once, and does not count toward turning the endpoint off.
    await page.getByRole('link', { name: 'Flaky CRM' }).click();
    await page.getByRole('heading', { level: 1, name: 'Flaky CRM' }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    const tested = page.getByRole('status').filter({ hasText: 'Test delivery:' });
    await tested.waitFor();
    const said = (await tested.textContent()) ?? '';
    expect(said).toMatch(/HTTP 500 · \d+ ms · Failed/);
    expect(said.match(/HTTP 500/g)).toHaveLength(1);
    expect(said).toContain("A test does not count toward the endpoint's failures");
    expect((await world.current.db('webhook_endpoints').where({ id: endpointId }).first()).failure_count).toBe(0);
    await openSettings('Outbound webhooks');

    const mailsBefore = smtp.received.length;
    await world.current.startWorker();
    await recoverCampaign(world.current.db, { id: world.current.workspace.campaignIds[0]!, via: 'retry' });
    await world.current.receiver.waitForRequests(hookPath, 10);
    await eventually(
      async () => (await world.current.db('webhook_endpoints').where({ id: endpointId }).first()).enabled === false,
      20_000,
    );
    // The owners and admins are told by email.
    await eventually(() => smtp.received.length > mailsBefore, 10_000);
    const alert = smtp.received
      .slice(mailsBefore)
      .find((mail) => mail.text.includes('The webhook endpoint "Flaky CRM"'));
    expect(alert?.to).toEqual([OWNER]);
    expect(alert!.text).toContain('was turned off after 10 consecutive failed deliveries');

    await page.reload();
    const banner = page.getByRole('region', { name: 'Flaky CRM was turned off' });
    await banner.getByText('after 10 failed deliveries in a row', { exact: false }).waitFor();
    const row = page.getByRole('row', { name: /Flaky CRM/ });
    await row.getByText('Turned off after 10 failed deliveries in a row').waitFor();
    await expect(row.getByRole('switch', { name: 'Enabled' }).getAttribute('aria-checked')).resolves.toBe('false');
    problems.push(...(await seriousViolations(page, 'webhooks with the auto-disable banner')));

    world.current.receiver.route(hookPath, { secret, behaviour: { kind: 'status', status: 200, body: 'back' } });
    await banner.getByRole('button', { name: 'Turn on' }).click();
    await banner.waitFor({ state: 'detached' });
    await expect(row.getByRole('switch', { name: 'Enabled' }).getAttribute('aria-checked')).resolves.toBe('true');
    await expect(row.getByText('Turned off after 10 failed deliveries in a row').count()).resolves.toBe(0);
    const stored = await world.current.db('webhook_endpoints').where({ id: endpointId }).first();
    expect(stored.enabled).toBe(true);
    // On again, with nothing re-sent by itself: the failed delivery waits for Retry failed since….
    await page.reload();
    await row.waitFor();
    await expect(page.getByRole('region', { name: 'Flaky CRM was turned off' }).count()).resolves.toBe(0);
  });

  it('"Retry failed since…" re-queues the failed delivery once, and it is delivered now that the receiver answers 200', async () => {
    const before = world.current.receiver.requestsTo(hookPath).length;
    await page.getByRole('link', { name: 'Flaky CRM' }).click();
    await heading(page, 'Flaky CRM').waitFor();
    await page.getByRole('button', { name: 'Retry failed since…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retry failed deliveries' });
    // The field names the viewer's zone, as the Campaigns date filters do ("Days in UTC time.").
    const zone = await page.evaluate(() => new Intl.DateTimeFormat().resolvedOptions().timeZone);
    const sinceLabel = `Since (${zone} time)`;
    await expect(dialog.getByLabel(sinceLabel, { exact: true }).inputValue()).resolves.toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d$/,
    );
    problems.push(...(await checkPage(page, 'retry-failed-dialog')));
    // A time in the future is refused at the field, in words; the day before is then taken.
    const since = dialog.getByLabel(sinceLabel, { exact: true });
    const dayBefore = await since.inputValue();
    const tomorrow = await page.evaluate(() => {
      const date = new Date(Date.now() + 24 * 3600_000);
      return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    });
    await since.fill(tomorrow);
    await dialog.getByRole('button', { name: 'Retry failed' }).click();
    await expectFieldError(dialog, since, 'That must not be in the future.', 'since');
    await since.fill(dayBefore);
    await expectFieldErrorGone(dialog, since, 'That must not be in the future.');
    await dialog.getByRole('button', { name: 'Retry failed' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: '1 delivery queued to be sent again.' }).waitFor();

    const requests = await world.current.receiver.waitForRequests(hookPath, before + 1, 15_000);
    const delivered = requests.at(-1)!;
    expect(delivered.body.type).toBe('recovery.recovered');
    await eventually(async () => {
      // The event's delivery, not the failed test's (a ping).
      const delivery = await world.current
        .db('webhook_deliveries')
        .where({ endpoint_id: endpointId, event_type: 'recovery.recovered' })
        .first();
      return delivery.status === 'succeeded';
    }, 10_000);

    // Once each: nothing failed is left since then, so a second retry queues none.
    await page.getByRole('button', { name: 'Retry failed since…' }).click();
    await page
      .getByRole('dialog', { name: 'Retry failed deliveries' })
      .getByRole('button', { name: 'Retry failed' })
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Nothing to send again: no delivery ran out of retries or was skipped since \w{3} \d/ })
      .waitFor();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(world.current.receiver.requestsTo(hookPath)).toHaveLength(before + 1);

    // The log shows the success after the failures.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page
      .getByRole('button', { name: /Succeeded.*recovery\.recovered.*200/ })
      .first()
      .waitFor();
  });

  it('Delete asks to confirm; Cancel keeps it; Delete removes it', async () => {
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    let confirm = page.getByRole('dialog', { name: 'Delete endpoint' });
    await confirm.getByText('Delete Flaky CRM? No more events are sent to it.', { exact: false }).waitFor();
    problems.push(...(await seriousViolations(page, 'delete endpoint dialog')));
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await heading(page, 'Flaky CRM').waitFor();
    expect(await world.current.db('webhook_endpoints').where({ id: endpointId }).first()).toBeDefined();

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    confirm = page.getByRole('dialog', { name: 'Delete endpoint' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await heading(page, 'Outbound webhooks').waitFor();
    await page.getByText('No endpoints yet.').waitFor();
    // The list the page was left for says what became of it, in its status line.
    const deleted = page
      .getByRole('status')
      .filter({ hasText: 'Flaky CRM was deleted: no more events are sent to it.' });
    await deleted.waitFor();
    await expect(page.getByRole('row', { name: /Flaky CRM/ }).count()).resolves.toBe(0);
    const gone = await fetch(`${world.current.url}/dashboard/api/webhooks/${endpointId}`, {
      headers: { cookie: await cookieOf(page) },
    });
    expect(gone.status).toBe(404);
    await page.reload();
    await page.getByText('No endpoints yet.').waitFor();
    // Said once: the list read again does not say it again.
    await expect(deleted.count()).resolves.toBe(0);
  });

  it('a refused Delete (the endpoint deleted meanwhile in another tab) stays open with the reason in it, once; Cancel forgets it', async () => {
    const cookie = await cookieOf(page);
    const created = await fetch(`${world.current.url}/dashboard/api/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: world.current.url, cookie },
      body: JSON.stringify({ name: 'Doomed CRM', url: world.current.receiver.url('/hooks/doomed') }),
    });
    expect(created.status).toBe(201);
    const doomedId = (await world.current.db('webhook_endpoints').where({ name: 'Doomed CRM' }).first()).id as string;
    await page.reload();
    await page.getByRole('link', { name: 'Doomed CRM' }).click();
    await heading(page, 'Doomed CRM').waitFor();

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete endpoint' });
    await confirm.getByText('Delete Doomed CRM?', { exact: false }).waitFor();
    const deleted = await fetch(`${world.current.url}/dashboard/api/webhooks/${doomedId}`, {
      method: 'DELETE',
      headers: { origin: world.current.url, cookie },
    });
    expect(deleted.status).toBe(204);
    await confirm.getByRole('button', { name: 'Delete' }).click();
    const refusal = `No webhook endpoint with id ${doomedId}`;
    await confirm.getByRole('alert').getByText(refusal).waitFor();
    // Shown once, in the dialog, not again on the page behind it; the button works again.
    const alerts = page.getByRole('alert').filter({ hasText: /./ });
    await expect(alerts.allTextContents()).resolves.toEqual([refusal]);
    await expect(confirm.getByRole('button', { name: 'Delete' }).isEnabled()).resolves.toBe(true);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    await heading(page, 'Doomed CRM').waitFor();
    await expect(alerts.count()).resolves.toBe(0);
  });

  it(`at ${MAX_WEBHOOK_ENDPOINTS} endpoints, the page says why in place of Add endpoint, which a delete brings back`, async () => {
    const { db, workspace } = world.current;
    const owner = (await db('users').where({ email: workspace.ownerEmail }).first()).id as string;
    const added = [];
    for (let index = 0; index < MAX_WEBHOOK_ENDPOINTS; index++)
      added.push(
        await createEndpoint(db, testSecretsKeyBytes(), {
          workspace_id: workspace.id,
          actor_id: owner,
          name: `Receiver ${index}`,
          url: world.current.receiver.url('/hooks/full'),
        }),
      );
    await openSettings('Outbound webhooks');
    await page.getByText(TOO_MANY_WEBHOOK_ENDPOINTS).waitFor();
    await expect(page.getByRole('button', { name: 'Add endpoint' }).count()).resolves.toBe(0);
    problems.push(...(await seriousViolations(page, 'outbound webhooks at the cap')));

    await deleteEndpoint(db, { id: added.pop()!.id, actor_id: owner });
    await page.reload();
    await page.getByRole('button', { name: 'Add endpoint' }).waitFor();
    await expect(page.getByText(TOO_MANY_WEBHOOK_ENDPOINTS).count()).resolves.toBe(0);
    for (const endpoint of added) await deleteEndpoint(db, { id: endpoint.id, actor_id: owner });
  });
});

describe('the team page', () => {
  it('with email set up, Invite and Reset link email their links and show none to copy', async () => {
    await openSettings('Team');
    const before = smtp.received.length;
    await page.getByRole('button', { name: 'Invite' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite someone' });
    await dialog.getByRole('radio', { name: 'Member' }).waitFor();
    problems.push(...(await seriousViolations(page, 'invite dialog')));
    await dialog.getByLabel('Email').fill('mailed@acme.test');
    await dialog.getByRole('button', { name: 'Send invitation' }).click();
    const created = page.getByRole('dialog', { name: 'Invitation created' });
    await created
      .getByText(/^We emailed the invitation to mailed@acme\.test: it works once, for 7 days \(until .+\)\.$/)
      .waitFor();
    await expect(created.getByLabel('Invitation link').count()).resolves.toBe(0);
    problems.push(...(await seriousViolations(page, 'invitation emailed dialog')));
    await created.getByRole('button', { name: 'Done' }).click();
    const invitation = smtp.received.slice(before).find((mail) => mail.to.includes('mailed@acme.test'))!;
    expect(invitation.text).toMatch(/\/dashboard\/invite\/[A-Za-z0-9_-]{43}/);
    // Inviting the address again says it replaces the pending invitation, in a sending service's words.
    await page.getByRole('row', { name: /mailed@acme\.test/ }).waitFor();
    await page.getByRole('button', { name: 'Invite' }).click();
    const again = page.getByRole('dialog', { name: 'Invite someone' });
    await again.getByLabel('Email').fill('mailed@acme.test');
    await again
      .getByText(
        'mailed@acme.test already has a pending Member invitation: sending this one replaces it, and its link stops working.',
        { exact: true },
      )
      .waitFor();
    await again.getByRole('button', { name: 'Cancel' }).click();

    await page
      .getByRole('row', { name: /member@acme\.test/ })
      .getByRole('button', { name: 'Password reset link' })
      .click();
    const reset = page.getByRole('dialog', { name: 'Password reset link' });
    await reset.getByText(`We emailed a reset link to ${MEMBER}`, { exact: false }).waitFor();
    await expect(reset.getByLabel('Reset link').count()).resolves.toBe(0);
    await reset.getByRole('button', { name: 'Done' }).click();
    await eventually(() => smtp.received.slice(before).some((mail) => mail.to.includes(MEMBER)), 10_000);
  });

  it('Resend emails the pending invitation a new link and says where; the emailed link before stops working', async () => {
    const linkIn = (mail: ReceivedMail) => /\/dashboard\/invite\/[A-Za-z0-9_-]{43}/.exec(mail.text)![0];
    const first = linkIn(smtp.received.find((mail) => mail.to.includes('mailed@acme.test'))!);
    const before = smtp.received.length;
    await openSettings('Team');
    const row = page.getByRole('row', { name: /mailed@acme\.test/ });
    // Email is set up: the action sends, and shows no link to copy.
    await expect(row.getByRole('button', { name: 'New link' }).count()).resolves.toBe(0);
    await row.getByRole('button', { name: 'Resend' }).click();
    const resent = page.getByRole('dialog', { name: 'Invitation resent' });
    await resent
      .getByText(/^We emailed a new invitation link to mailed@acme\.test: it works once, for 7 days \(until /)
      .waitFor();
    await resent.getByText('The invitation’s earlier link no longer works.').waitFor();
    await expect(resent.getByLabel('Invitation link').count()).resolves.toBe(0);
    problems.push(...(await seriousViolations(page, 'invitation resent dialog')));
    await resent.getByRole('button', { name: 'Done' }).click();
    await resent.waitFor({ state: 'detached' });
    expect(smtp.received.slice(before).map((mail) => mail.to)).toEqual([['mailed@acme.test']]);
    const second = linkIn(smtp.received.at(-1)!);
    expect(second).not.toBe(first);

    const invitee = await anotherDevice();
    await invitee.goto(`${world.current.url}${first}`);
    await invitee.getByText('This link is not valid: it may have expired or been used already.').waitFor();
    await invitee.goto(`${world.current.url}${second}`);
    await invitee.getByLabel('Name').fill('Mai Led');
    await invitee.getByLabel('Password').fill('a long enough password');
    await invitee.getByRole('button', { name: 'Accept invitation' }).click();
    await heading(invitee, 'Overview').waitFor();
  });

  it('with email, a raise to owner asks without the no-email note on reset links', async () => {
    await openSettings('Team');
    await page.getByLabel(`Role of ${MEMBER}`).selectOption('owner');
    const confirm = page.getByRole('dialog', { name: 'Change role' });
    await confirm.getByText('Owners can do everything', { exact: false }).waitFor();
    await expect(confirm.getByText('forget their password', { exact: false }).count()).resolves.toBe(0);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
  });

  it('Remove asks to confirm, then the person is gone and their session is refused', async () => {
    const member = memberDevice;
    const memberCookie = await cookieOf(member);
    expect(await meStatus(memberCookie)).toBe(200);
    // The member is typing a new name when they are removed.
    await member.getByRole('button', { name: /Account menu/ }).click();
    await member.getByRole('link', { name: 'Account' }).click();
    await heading(member, 'Account').waitFor();
    await member.getByRole('main').getByLabel('Name').fill('A name saved too late');

    await openSettings('Team');
    const row = page.getByRole('row', { name: /member@acme\.test/ });
    await row.getByRole('button', { name: 'Remove' }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove from the workspace' });
    await confirm.getByText('Their sessions end at once.', { exact: false }).waitFor();
    problems.push(...(await seriousViolations(page, 'remove member dialog')));
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.waitFor({ state: 'detached' });
    await page.reload();
    await page.getByRole('row', { name: /owner@acme\.test/ }).waitFor();
    await expect(page.getByRole('row', { name: /member@acme\.test/ }).count()).resolves.toBe(0);

    expect(await meStatus(memberCookie)).toBe(401);
    // Removed, they cannot sign in to this workspace again: no dialog asking them to, the sign-in
    // page says why (docs/dashboard-ui.md, "A session that ends under a page").
    await member.getByRole('button', { name: 'Save name' }).click();
    await expectSentToSignIn(member, '/account');
    await member
      .getByRole('status')
      .filter({ hasText: /^You were removed from this workspace, so your session ended\./ })
      .waitFor();
    await expect(member.getByRole('dialog', { name: 'Your session ended' }).count()).resolves.toBe(0);
    expect(await signInStatus(MEMBER, MEMBER_PASSWORD)).toBe(401);
  });

  it('no page or dialog visited here has a serious or critical axe violation', () => {
    expect(problems).toEqual([]);
  });
});
