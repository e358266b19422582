import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * An endpoint edited from a page that saw other values than the endpoint has now (another tab,
 * another person): `PATCH /webhooks/:id` with `expected` refuses it, 409 `conflict` with `code:
 * endpoint_changed` and the endpoint as it is now, changing nothing and logging nothing; fields
 * not named are not touched (docs/dashboard-api.md, "Stale edits"). The check is made under the
 * row's lock: of two saves from the same stale page, one wins.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const STALE_URL =
  "Someone changed this endpoint's URL after you opened it, so nothing was saved. Review the endpoint as it is now, then save again.";

async function endpointOf(shop: string) {
  const { owner, member } = await team(api.current.db, call, shop);
  const created = await call('POST', '/webhooks', {
    cookie: owner.cookie,
    body: { name: 'CRM', url: 'https://crm.example/hooks/one', events: ['recovery.opened'] },
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const patch = (body: unknown) => call('PATCH', `/webhooks/${id}`, { cookie: owner.cookie, body });
  const read = async () => (await call('GET', `/webhooks/${id}`, { cookie: owner.cookie })).body;
  const stored = () => api.current.db('webhook_endpoints').where({ id }).first('name', 'url', 'event_types');
  /** The security log's `webhook.updated` records of this endpoint, oldest first. */
  const updates = async () =>
    (
      await api.current
        .db('security_events')
        .where({ target_id: id, action: 'webhook.updated' })
        .orderBy('created_at')
        .select('details')
    ).map((row: { details: unknown }) => row.details);
  return { id, owner, member, patch, read, stored, updates };
}

describe('PATCH /webhooks/:id with expected', () => {
  it('saves when the fields are as the page saw them, and refuses, changing nothing, when one is not', async () => {
    const { patch, read, stored, updates } = await endpointOf('Stale shop');
    const moved = await patch({
      url: 'https://crm.example/hooks/two',
      expected: { url: 'https://crm.example/hooks/one' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe('https://crm.example/hooks/two');

    // The other tab still saw /one. It is told so, with the endpoint as it is now, exactly as
    // GET /webhooks/:id reads it, so the page can show it without asking again.
    const now = await read();
    const stale = await patch({
      url: 'https://crm.example/hooks/three',
      expected: { url: 'https://crm.example/hooks/one' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({
      error: { type: 'conflict', code: 'endpoint_changed', message: STALE_URL, endpoint: now },
    });
    expect(stale.body.error.endpoint.url).toBe('https://crm.example/hooks/two');
    // Nothing changed: not the fields, not updated_at, and no security log record.
    await expect(read()).resolves.toEqual(now);
    await expect(updates()).resolves.toEqual([
      { url: { from: 'https://crm.example/hooks/one', to: 'https://crm.example/hooks/two' } },
    ]);

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

  it('saves nothing, and logs nothing, when what is sent is what the endpoint already has', async () => {
    const { patch, read, updates } = await endpointOf('Unchanged shop');
    const before = await read();
    // The form saved unchanged sends the name it saw, with that name as expected.
    const unchanged = await patch({ name: 'CRM', expected: { name: 'CRM' } });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(before);
    // A value another tab already saved, from a page that saw it: nothing to do either.
    const same = await patch({
      url: 'https://crm.example/hooks/one',
      events: ['recovery.opened'],
      expected: { url: 'https://crm.example/hooks/one', events: ['recovery.opened'] },
    });
    expect(same.status).toBe(200);
    await expect(read()).resolves.toEqual(before);
    await expect(updates()).resolves.toEqual([]);
    // `expected: {}` checks nothing; the save goes through as one without it.
    const noCheck = await patch({ name: 'CRM 2', expected: {} });
    expect([noCheck.status, noCheck.body.name]).toEqual([200, 'CRM 2']);
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
    const { patch, stored, updates } = await endpointOf('Race shop');
    const results = await Promise.all(
      ['a', 'b'].map((path) =>
        patch({ url: `https://crm.example/hooks/${path}`, expected: { url: 'https://crm.example/hooks/one' } }),
      ),
    );
    expect(results.map((result) => result.status).sort()).toEqual([200, 409]);
    const winner = results.find((result) => result.status === 200)!;
    const loser = results.find((result) => result.status === 409)!;
    await expect(stored()).resolves.toMatchObject({ url: winner.body.url });
    // The refused one is shown what the winner saved, and only the winner is logged.
    expect(loser.body.error.endpoint.url).toBe(winner.body.url);
    await expect(updates()).resolves.toEqual([{ url: { from: 'https://crm.example/hooks/one', to: winner.body.url } }]);
  });

  it('of many saves at once from the same stale page, exactly one wins, every time', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { patch, stored, updates } = await endpointOf(`Race shop ${round}`);
      const results = await Promise.all(
        ['a', 'b', 'c', 'd', 'e', 'f'].map((path) =>
          patch({ url: `https://crm.example/hooks/${path}`, expected: { url: 'https://crm.example/hooks/one' } }),
        ),
      );
      expect(results.map((result) => result.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      const winner = results.find((result) => result.status === 200)!;
      await expect(stored()).resolves.toMatchObject({ url: winner.body.url });
      await expect(updates()).resolves.toHaveLength(1);
    }
  });

  it('lets saves at once of different fields, each from a page that saw its own, both through', async () => {
    const { patch, stored, updates } = await endpointOf('Two fields shop');
    const [renamed, moved] = await Promise.all([
      patch({ name: 'Renamed', expected: { name: 'CRM' } }),
      patch({ url: 'https://crm.example/hooks/moved', expected: { url: 'https://crm.example/hooks/one' } }),
    ]);
    expect([renamed.status, moved.status]).toEqual([200, 200]);
    await expect(stored()).resolves.toMatchObject({ name: 'Renamed', url: 'https://crm.example/hooks/moved' });
    await expect(updates()).resolves.toHaveLength(2);
  });

  it('refuses an expected it cannot read with a 400 of the documented shape, naming the field', async () => {
    const { patch, stored, updates } = await endpointOf('Bad input shop');
    const cases: Array<[unknown, string, RegExp]> = [
      ['https://crm.example/hooks/one', 'expected', /^expected: must be object$/],
      [null, 'expected', /^expected: must be object$/],
      [['https://crm.example/hooks/one'], 'expected', /^expected: must be object$/],
      [{ url: 5 }, 'expected.url', /^expected\.url: must be string$/],
      [{ url: null }, 'expected.url', /^expected\.url: must be string$/],
      [{ name: { first: 'CRM' } }, 'expected.name', /^expected\.name: must be string$/],
      [{ secret: 'whsec_x' }, 'expected.secret', /^expected\.secret: is not a recognised field$/],
      [
        { url: `https://crm.example/${'a'.repeat(3_000)}` },
        'expected.url',
        /^expected\.url: must NOT have more than 2048/,
      ],
      [{ name: 'n'.repeat(201) }, 'expected.name', /^expected\.name: must NOT have more than 200/],
      [{ events: 'recovery.opened' }, 'expected.events', /^expected\.events: must be array$/],
      [{ events: ['no.such_event'] }, 'expected.events[0]', /^expected\.events\[0\]: must be one of/],
      [
        { events: Array(101).fill('recovery.opened') },
        'expected.events',
        /^expected\.events: must NOT have more than 100/,
      ],
    ];
    for (const [expected, param, message] of cases) {
      const refused = await patch({ name: 'Other', expected });
      const label = JSON.stringify(expected).slice(0, 40);
      expect([label, refused.status, refused.body.error.type, refused.body.error.param]).toEqual([
        label,
        400,
        'invalid_param',
        param,
      ]);
      expect(refused.body.error.message).toMatch(message);
    }
    // A body as big as a body may be (64 KB), all of it in expected: still a 400, not a 500.
    const huge = await patch({ name: 'Other', expected: { url: `https://crm.example/${'a'.repeat(60_000)}` } });
    expect([huge.status, huge.body.error.param]).toEqual([400, 'expected.url']);
    // Past the body's cap it is the documented 413.
    const over = await patch({ name: 'Other', expected: { url: 'a'.repeat(70_000) } });
    expect([over.status, over.body.error.type]).toEqual([413, 'payload_too_large']);
    // expected alone changes nothing, so it is no edit.
    const alone = await patch({ expected: { name: 'CRM' } });
    expect([alone.status, alone.body.error.message]).toEqual([
      400,
      'nothing to change: give a new name, url or events',
    ]);
    await expect(stored()).resolves.toMatchObject({ name: 'CRM' });
    await expect(updates()).resolves.toEqual([]);
  });

  it('checks who may edit before what was expected: a member is refused whatever expected says', async () => {
    const { id, member, stored } = await endpointOf('Member shop');
    for (const expected of [{ secret: 1 }, { name: 'CRM' }, { name: 'Not what it is' }]) {
      const refused = await call('PATCH', `/webhooks/${id}`, {
        cookie: member.cookie,
        body: { name: 'Mine', expected },
      });
      expect([refused.status, refused.body.error.type]).toEqual([403, 'forbidden']);
    }
    await expect(stored()).resolves.toMatchObject({ name: 'CRM' });
  });

  it('is no field of adding an endpoint', async () => {
    const { owner } = await endpointOf('Add shop');
    const added = await call('POST', '/webhooks', {
      cookie: owner.cookie,
      body: { name: 'CRM', url: 'https://crm.example/hooks/new', expected: { url: 'https://crm.example/hooks/one' } },
    });
    expect([added.status, added.body.error]).toEqual([
      400,
      { type: 'invalid_param', message: 'expected: is not a field of this request', param: 'expected' },
    ]);
  });
});
