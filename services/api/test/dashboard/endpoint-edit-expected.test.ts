import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * An endpoint edited from a page that saw other values than the endpoint has now (another tab,
 * another person): `PATCH /webhooks/:id` with `expected` refuses it, 409 `conflict` with `code:
 * endpoint_changed`, changing nothing; fields not named are not touched (docs/dashboard-api.md,
 * "Stale edits"). The check is made under the row's lock: of two saves from the same stale
 * page, one wins.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const STALE_URL =
  "Someone changed this endpoint's URL after you opened it, so nothing was saved. Review the endpoint as it is now, then save again.";

async function endpointOf(shop: string) {
  const { owner } = await team(api.current.db, call, shop);
  const created = await call('POST', '/webhooks', {
    cookie: owner.cookie,
    body: { name: 'CRM', url: 'https://crm.example/hooks/one', events: ['recovery.opened'] },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const patch = (body: unknown) => call('PATCH', `/webhooks/${id}`, { cookie: owner.cookie, body });
  const stored = () => api.current.db('webhook_endpoints').where({ id }).first('name', 'url', 'event_types');
  return { id, patch, stored };
}

describe('PATCH /webhooks/:id with expected', () => {
  it('saves when the fields are as the page saw them, and refuses, changing nothing, when one is not', async () => {
    const { patch, stored } = await endpointOf('Stale shop');
    const moved = await patch({
      url: 'https://crm.example/hooks/two',
      expected: { url: 'https://crm.example/hooks/one' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe('https://crm.example/hooks/two');

    // The other tab still saw /one.
    const stale = await patch({
      url: 'https://crm.example/hooks/three',
      expected: { url: 'https://crm.example/hooks/one' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toEqual({ type: 'conflict', code: 'endpoint_changed', message: STALE_URL });
    await expect(stored()).resolves.toMatchObject({ url: 'https://crm.example/hooks/two' });

    // Several fields changed: each is named.
    await patch({ name: 'CRM (billing)', events: [], expected: { name: 'CRM', events: ['recovery.opened'] } });
    const both = await patch({
      name: 'Mine',
      url: 'https://crm.example/hooks/four',
      events: ['recovery.recovered'],
      expected: { name: 'CRM', url: 'https://crm.example/hooks/one', events: ['recovery.opened'] },
    });
    expect(both.status).toBe(409);
    expect(both.body.error.message).toMatch(
      /^Someone changed this endpoint's name, URL and events after you opened it/,
    );
    await expect(stored()).resolves.toEqual({
      name: 'CRM (billing)',
      url: 'https://crm.example/hooks/two',
      event_types: [],
    });
  });

  it('leaves the fields a save does not name as another tab left them', async () => {
    const { patch, stored } = await endpointOf('Two tabs');
    await patch({ url: 'https://crm.example/hooks/moved', expected: { url: 'https://crm.example/hooks/one' } });
    // The first tab renames, having seen the old URL: only the name is sent, so the URL stays.
    const renamed = await patch({ name: 'Renamed', expected: { name: 'CRM' } });
    expect(renamed.status).toBe(200);
    await expect(stored()).resolves.toMatchObject({ name: 'Renamed', url: 'https://crm.example/hooks/moved' });
    // Events compare as a set: the order the page sent them in is not a change.
    await patch({
      events: ['recovery.recovered', 'recovery.opened'],
      expected: { events: ['recovery.opened'] },
    });
    const reordered = await patch({
      name: 'Renamed again',
      expected: { name: 'Renamed', events: ['recovery.recovered', 'recovery.opened'] },
    });
    expect(reordered.status).toBe(200);
  });

  it('lets one of two saves from the same stale page through, never both', async () => {
    const { patch, stored } = await endpointOf('Race shop');
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((path) =>
        patch({ url: `https://crm.example/hooks/${path}`, expected: { url: 'https://crm.example/hooks/one' } }),
      ),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    const winner = results.find((result) => result.status === 200)!;
    await expect(stored()).resolves.toMatchObject({ url: winner.body.url });
  });

  it('refuses an expected it cannot read with a 400 of the documented shape', async () => {
    const { patch, stored } = await endpointOf('Bad input shop');
    for (const expected of [
      'https://crm.example/hooks/one',
      { url: 5 },
      { secret: 'whsec_x' },
      { url: `https://crm.example/${'a'.repeat(3_000)}` },
      { events: ['no.such_event'] },
    ]) {
      const refused = await patch({ name: 'Other', expected });
      expect([JSON.stringify(expected).slice(0, 40), refused.status, refused.body.error.type]).toEqual([
        JSON.stringify(expected).slice(0, 40),
        400,
        'invalid_param',
      ]);
    }
    await expect(stored()).resolves.toMatchObject({ name: 'CRM' });
  });
});
