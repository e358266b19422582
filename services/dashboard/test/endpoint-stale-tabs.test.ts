import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { hashPassword, loadFixtures } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { desktopPage, PASSWORD, signInThroughForm, useDashboardWorld } from './support/dashboard-world.js';

/**
 * One endpoint edited in two tabs of the same person, in a real Chromium against the real API
 * (docs/dashboard-ui.md, "Stale edits"): the tab that saves second, having seen the URL before
 * the first tab changed it, is refused in words, keeps what was typed, and shows the endpoint
 * as it is now; Save again then saves it. A tab that changes only the name does not put back
 * the URL it saw; refused over the URL, the events it had not touched take the other tab's, so
 * Save again does not put them back either. A Roll secret opened before the other tab rolled
 * reads the endpoint again on its refusal: the page shows the new overlap and the dialog offers
 * to end it. Controls are found by role and accessible name.
 */
const world = useDashboardWorld();
const OWNER = 'owner@stale.test';
const FIRST_URL = 'https://crm.stale.example/hooks/first';

let endpointId = '';
const tabs: Array<{ context: BrowserContext; page: Page }> = [];

beforeAll(async () => {
  const { db } = world.current;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'stale',
        name: 'Stale Tabs Ltd',
        processor: 'connected',
        users: [{ key: 'owner', email: OWNER, role: 'owner' }],
        webhooks: [{ key: 'hook', name: 'CRM', url: FIRST_URL }],
      },
    ],
  });
  endpointId = loaded.workspaces.stale!.webhooks.hook!.id;
  await db('users')
    .where({ email: OWNER })
    .update({ password_hash: await hashPassword(PASSWORD) });
  for (let index = 0; index < 2; index += 1) {
    const tab = await desktopPage(world.current.browser);
    await signInThroughForm(tab.page, world.current.url, OWNER);
    tabs.push(tab);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(tabs.map((tab) => tab.context.close()));
});

const stored = () => world.current.db('webhook_endpoints').where({ id: endpointId }).first('name', 'url');
const storedEvents = async (): Promise<string[]> => {
  const row: { event_types: string[] } = await world.current
    .db('webhook_endpoints')
    .where({ id: endpointId })
    .first('event_types');
  return row.event_types;
};

async function openEdit(page: Page) {
  await page.goto(`${world.current.url}/dashboard/settings/webhooks/${endpointId}`);
  await page.getByRole('button', { name: 'Edit', exact: true }).click();
  return page.getByRole('dialog', { name: 'Edit endpoint' });
}

describe('an endpoint edited in two tabs', () => {
  it('refuses the stale save in words, keeps what was typed, shows the endpoint now, and saves on Save again', async () => {
    const [first, second] = [tabs[0]!.page, tabs[1]!.page];
    const staleForm = await openEdit(first);
    const freshForm = await openEdit(second);

    await freshForm.getByLabel('URL').fill('https://crm.stale.example/hooks/second');
    await freshForm.getByRole('button', { name: 'Save' }).click();
    await freshForm.waitFor({ state: 'detached' });

    await staleForm.getByLabel('URL').fill('https://crm.stale.example/hooks/mine');
    await staleForm.getByRole('button', { name: 'Save' }).click();
    await staleForm
      .getByRole('alert')
      .filter({
        hasText:
          "Someone changed this endpoint's URL after you opened it, so nothing was saved. Review the endpoint as it is now, then save again.",
      })
      .waitFor();
    // What was typed stays; the endpoint as it is now is shown beside it.
    await expect(staleForm.getByLabel('URL').inputValue()).resolves.toBe('https://crm.stale.example/hooks/mine');
    const now = staleForm.getByRole('note', { name: 'The endpoint as it is now' });
    await expect(now.textContent()).resolves.toContain('https://crm.stale.example/hooks/second');
    await expect(stored()).resolves.toMatchObject({ url: 'https://crm.stale.example/hooks/second' });

    // Reviewed: Save again replaces it.
    await staleForm.getByRole('button', { name: 'Save' }).click();
    await staleForm.waitFor({ state: 'detached' });
    await expect(stored()).resolves.toMatchObject({ url: 'https://crm.stale.example/hooks/mine' });
    await first.getByText('https://crm.stale.example/hooks/mine', { exact: true }).first().waitFor();
  });

  it('changing only the name does not put back the URL another tab changed', async () => {
    const [first, second] = [tabs[0]!.page, tabs[1]!.page];
    const renameForm = await openEdit(first);
    const moveForm = await openEdit(second);
    await moveForm.getByLabel('URL').fill('https://crm.stale.example/hooks/moved');
    await moveForm.getByRole('button', { name: 'Save' }).click();
    await moveForm.waitFor({ state: 'detached' });

    await renameForm.getByLabel('Name').fill('CRM (billing)');
    await renameForm.getByRole('button', { name: 'Save' }).click();
    await renameForm.waitFor({ state: 'detached' });
    await expect(stored()).resolves.toEqual({ name: 'CRM (billing)', url: 'https://crm.stale.example/hooks/moved' });
  });

  it("refused over the URL, the events it had not touched take the other tab's, and Save again keeps them", async () => {
    const [first, second] = [tabs[0]!.page, tabs[1]!.page];
    await expect(storedEvents()).resolves.toEqual([]);
    const staleForm = await openEdit(first);
    const freshForm = await openEdit(second);
    // The other tab moves the URL and narrows the events to one type.
    await freshForm.getByLabel('URL').fill('https://crm.stale.example/hooks/theirs');
    await freshForm.getByRole('checkbox', { name: 'recovery.recovered' }).check();
    await freshForm.getByRole('button', { name: 'Save' }).click();
    await freshForm.waitFor({ state: 'detached' });

    // This tab, still showing All events, changes the URL only.
    await expect(staleForm.getByRole('checkbox', { name: 'All events' }).isChecked()).resolves.toBe(true);
    await staleForm.getByLabel('URL').fill('https://crm.stale.example/hooks/ours');
    await staleForm.getByRole('button', { name: 'Save' }).click();
    await staleForm
      .getByRole('alert')
      .filter({ hasText: "Someone changed this endpoint's URL after you opened it" })
      .waitFor();
    // The URL it typed stays; the events it had not touched are the other tab's now.
    await expect(staleForm.getByLabel('URL').inputValue()).resolves.toBe('https://crm.stale.example/hooks/ours');
    await expect(staleForm.getByRole('checkbox', { name: 'recovery.recovered' }).isChecked()).resolves.toBe(true);
    await expect(staleForm.getByRole('checkbox', { name: 'All events' }).isChecked()).resolves.toBe(false);
    const now = staleForm.getByRole('note', { name: 'The endpoint as it is now' });
    await expect(now.textContent()).resolves.toContain('https://crm.stale.example/hooks/theirs');
    // The page behind the dialog shows the endpoint as it is now too: the URL twice, in the
    // dialog's note and in the page's summary (rendered with the note, in the same update).
    await expect(first.getByText('https://crm.stale.example/hooks/theirs', { exact: true }).count()).resolves.toBe(2);

    await staleForm.getByRole('button', { name: 'Save' }).click();
    await staleForm.waitFor({ state: 'detached' });
    await expect(stored()).resolves.toMatchObject({ url: 'https://crm.stale.example/hooks/ours' });
    await expect(storedEvents()).resolves.toEqual(['recovery.recovered']);
  });

  it('a Roll secret opened before another tab rolled reads the endpoint again, and rolls once told to end the overlap', async () => {
    const [first, second] = [tabs[0]!.page, tabs[1]!.page];
    const openRoll = async (page: Page) => {
      await page.goto(`${world.current.url}/dashboard/settings/webhooks/${endpointId}`);
      await page.getByRole('button', { name: 'Roll secret', exact: true }).click();
      return page.getByRole('dialog', { name: 'Roll secret' });
    };
    const staleRoll = await openRoll(first);
    await expect(staleRoll.getByRole('checkbox', { name: 'End the overlap now' }).count()).resolves.toBe(0);
    const freshRoll = await openRoll(second);
    await freshRoll.getByRole('button', { name: 'Roll secret' }).click();
    const shown = second.getByRole('dialog', { name: 'New signing secret' });
    await shown.getByRole('button', { name: 'Done' }).click();

    // The stale tab's page did not know of that roll: no overlap among its facts.
    const overlapFact = first.getByRole('definition').filter({ hasText: /^Previous secret valid until/ });
    await expect(overlapFact.count()).resolves.toBe(0);
    await staleRoll.getByRole('button', { name: 'Roll secret' }).click();
    await staleRoll
      .getByRole('alert')
      .filter({ hasText: /^The secret was rolled again after you opened this/ })
      .waitFor();
    // Closed, the page shows the secret's state as it is now, read again on the refusal.
    await staleRoll.getByRole('button', { name: 'Cancel' }).click();
    await overlapFact.waitFor();
    // Opened again, it knows of the overlap at once.
    await first.getByRole('button', { name: 'Roll secret', exact: true }).click();
    const againRoll = first.getByRole('dialog', { name: 'Roll secret' });
    const endOverlap = againRoll.getByRole('checkbox', { name: 'End the overlap now' });
    await endOverlap.check();
    const before = await world.current.db('webhook_endpoints').where({ id: endpointId }).first('signing_secret_sealed');
    await againRoll.getByRole('button', { name: 'Roll secret' }).click();
    await first.getByRole('dialog', { name: 'New signing secret' }).getByRole('button', { name: 'Done' }).click();
    const after = await world.current.db('webhook_endpoints').where({ id: endpointId }).first('signing_secret_sealed');
    expect(after).not.toEqual(before);
  });
});
