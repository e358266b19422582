import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, PASSWORD, team, type Reply } from './support.js';

/**
 * Every form of the dashboard names the field a refusal is about (`param`, docs/dashboard-api.md
 * "Conventions"), so its page can show the refusal at that field; the message names it too, as
 * `/api/v1` and the CLI write it. Over real HTTP, against a real database.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);
const development = useApi({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
const developmentCall = (...args: Parameters<ReturnType<typeof dashboardClient>>) =>
  dashboardClient(development.current.url)(...args);

/** The refusal's body: 400 invalid_param about `param`, its message `param: …`. */
function expectFieldRefusal(reply: Reply, param: string): void {
  expect([reply.status, reply.body?.error]).toEqual([
    400,
    { type: 'invalid_param', message: expect.stringMatching(new RegExp(`^${escape(param)}: .`)), param },
  ]);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('each dashboard form names the field it refuses', () => {
  it('webhook endpoint create and update: name, url, events, and a key the route does not take', async () => {
    const { owner } = await team(api.current.db, call, 'Webhook fields');
    const valid = { name: 'Receiver', url: 'https://hooks.example.com/in', events: ['recovery.recovered'] };
    const create = (body: Record<string, unknown>) => call('POST', '/webhooks', { cookie: owner.cookie, body });

    const http = await create({ ...valid, url: 'http://hooks.example.com/in' });
    expectFieldRefusal(http, 'url');
    expect(http.body.error.message).toBe('url: must begin with https://');
    expectFieldRefusal(await create({ ...valid, url: 42 }), 'url');
    expectFieldRefusal(await create({ ...valid, name: '   ' }), 'name');
    expectFieldRefusal(await create({ ...valid, name: undefined }), 'name');
    expectFieldRefusal(await create({ ...valid, events: 'recovery.recovered' }), 'events');
    expectFieldRefusal(await create({ ...valid, events: ['recovery.recovered', 'nope'] }), 'events[1]');
    expectFieldRefusal(await create({ ...valid, enabled: true }), 'enabled');

    const created = await create(valid);
    expect(created.status).toBe(201);
    const update = (body: Record<string, unknown>) =>
      call('PATCH', `/webhooks/${created.body.id}`, { cookie: owner.cookie, body });
    expectFieldRefusal(await update({ url: 'https://user:pw@hooks.example.com/in' }), 'url');
    expectFieldRefusal(await update({ name: '' }), 'name');
    expectFieldRefusal(await update({ events: ['nope'] }), 'events[0]');
    // Nothing to change is about the request as a whole: no field is named.
    const nothing = await update({});
    expect([nothing.status, nothing.body.error.type, nothing.body.error.param]).toEqual([
      400,
      'invalid_param',
      undefined,
    ]);
  });

  it('webhook endpoint url: a literal private address is refused at url, a host name is saved', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Webhook addresses');
    const create = (url: string) =>
      call('POST', '/webhooks', { cookie: owner.cookie, body: { name: 'Receiver', url } });
    for (const [url, refusal] of [
      ['https://10.0.0.1/in', 'url: 10.0.0.1 is a private address: receivers must be on the public internet'],
      ['https://127.0.0.1:8443/in', 'url: 127.0.0.1 is a loopback address: receivers must be on the public internet'],
      ['https://[fd00::1]/in', 'url: fd00::1 is a private address: receivers must be on the public internet'],
      [
        'https://169.254.169.254/',
        'url: 169.254.169.254 is a link-local address: receivers must be on the public internet',
      ],
    ]) {
      const refused = await create(url!);
      expectFieldRefusal(refused, 'url');
      expect(refused.body.error.message).toBe(refusal);
    }
    // A name is judged when it is sent to: what it points at can change.
    const named = await create('https://hooks.internal.example/in');
    expect(named.status).toBe(201);
    const moved = await call('PATCH', `/webhooks/${named.body.id}`, {
      cookie: owner.cookie,
      body: { url: 'https://192.168.1.20/in' },
    });
    expectFieldRefusal(moved, 'url');
    expect(await api.current.db('webhook_endpoints').where({ workspace_id: workspace.id }).pluck('url')).toEqual([
      'https://hooks.internal.example/in',
    ]);
  });

  it('webhook endpoint url: with private networks allowed (development), a literal private address is saved', async () => {
    const { owner } = await team(development.current.db, developmentCall, 'Webhook addresses, development');
    const created = await developmentCall('POST', '/webhooks', {
      cookie: owner.cookie,
      body: { name: 'Local receiver', url: 'https://127.0.0.1:8443/in' },
    });
    expect([created.status, created.body.url]).toEqual([201, 'https://127.0.0.1:8443/in']);
    // But never where the cloud metadata services answer: link-local, and their other addresses.
    for (const [url, address] of [
      ['https://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local'],
      ['https://[fd00:ec2::254]/latest', 'fd00:ec2::254 is a cloud metadata'],
    ]) {
      const refused = await developmentCall('POST', '/webhooks', {
        cookie: owner.cookie,
        body: { name: 'Metadata', url },
      });
      expectFieldRefusal(refused, 'url');
      expect(refused.body.error.message).toBe(`url: ${address} address: receivers must be on the public internet`);
    }
  });

  it('processor connect: webhook_secret and api_key, refused before Stripe is asked', async () => {
    const { owner } = await team(api.current.db, call, 'Processor fields');
    const connect = (body: Record<string, unknown>) =>
      call('POST', '/processor/connect', { cookie: owner.cookie, body });
    const secret = `whsec_${'a1B2'.repeat(8)}`;
    expectFieldRefusal(await connect({}), 'webhook_secret');
    expectFieldRefusal(await connect({ webhook_secret: 'not a secret' }), 'webhook_secret');
    expectFieldRefusal(await connect({ webhook_secret: secret, api_key: 7 }), 'api_key');
    expectFieldRefusal(await connect({ webhook_secret: secret, api_key: `sk_live_${'a1B2'.repeat(8)}` }), 'api_key');
  });

  it('token create: name', async () => {
    const { owner } = await team(api.current.db, call, 'Token fields');
    expectFieldRefusal(await call('POST', '/tokens', { cookie: owner.cookie, body: { name: '' } }), 'name');
    expectFieldRefusal(await call('POST', '/tokens', { cookie: owner.cookie, body: {} }), 'name');
  });

  it('team invite: email and role', async () => {
    const { owner } = await team(api.current.db, call, 'Invite fields');
    const invite = (body: Record<string, unknown>) => call('POST', '/team/invitations', { cookie: owner.cookie, body });
    expectFieldRefusal(await invite({ email: 'not an address', role: 'member' }), 'email');
    expectFieldRefusal(await invite({ role: 'member' }), 'email');
    expectFieldRefusal(await invite({ email: 'new@example.com', role: 'king' }), 'role');
  });

  it('workspace settings: name and display_currency, a currency without an FX rate too', async () => {
    const { owner } = await team(api.current.db, call, 'Workspace fields');
    const change = (body: Record<string, unknown>) => call('PATCH', '/workspace', { cookie: owner.cookie, body });
    expectFieldRefusal(await change({ name: '' }), 'name');
    expectFieldRefusal(await change({ display_currency: 'US Dollar' }), 'display_currency');
    const unknownRate = await change({ display_currency: 'xxx' });
    expectFieldRefusal(unknownRate, 'display_currency');
    // An owner cannot add a rate, nor run the CLI: the refusal asks them to ask their operator and
    // lists what can be chosen now, the rates there are, in capitals as the page shows codes.
    await api.current.db('fx_rates').insert({ currency: 'zzz', per_usd: '2' }).onConflict('currency').merge();
    expect(unknownRate.body.error.message).toMatch(
      /^display_currency: no exchange rate for XXX yet: ask whoever runs this service to add one, or choose one of AUD, [A-Z, ]*\bEUR, [A-Z, ]*\bUSD\b[A-Z, ]*$/,
    );
    expect(unknownRate.body.error.message).not.toContain('fx set');
    const withOperatorsRate = await change({ display_currency: 'xxx' });
    expect(withOperatorsRate.body.error.message).toMatch(/, ZZZ$/);
  });

  it('accept invitation: name and password', async () => {
    const { owner } = await team(api.current.db, call, 'Accept fields');
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'joiner@example.com', role: 'member' },
    });
    const token = (invited.body.invite_url as string).split('/').at(-1);
    const accept = (body: Record<string, unknown>) => call('POST', `/invitations/${token}/accept`, { body });
    expectFieldRefusal(await accept({ name: '', password: PASSWORD }), 'name');
    expectFieldRefusal(await accept({ name: 'Joiner', password: 'short' }), 'password');
    expectFieldRefusal(await accept({ name: 'Joiner', password: 12345678901 }), 'password');
    // Refused, the link is still good.
    expect((await accept({ name: 'Joiner', password: PASSWORD })).status).toBe(200);
  });

  it('reset password: password', async () => {
    const { owner, member } = await team(api.current.db, call, 'Reset fields');
    const link = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: owner.cookie });
    const token = (link.body.reset_url as string).split('/').at(-1);
    expectFieldRefusal(await call('POST', `/password-reset/${token}`, { body: { password: 'short' } }), 'password');
    expectFieldRefusal(await call('POST', `/password-reset/${token}`, { body: {} }), 'password');
  });

  it('account: name, current_password and new_password', async () => {
    const { member } = await team(api.current.db, call, 'Account fields');
    expectFieldRefusal(await call('PATCH', '/account', { cookie: member.cookie, body: { name: ' ' } }), 'name');
    const password = (body: Record<string, unknown>) =>
      call('POST', '/account/password', { cookie: member.cookie, body });
    expectFieldRefusal(await password({ new_password: 'a brand new password' }), 'current_password');
    expectFieldRefusal(await password({ current_password: PASSWORD, new_password: 'short' }), 'new_password');
    expectFieldRefusal(
      await password({ current_password: 'not my password', new_password: 'a brand new password' }),
      'current_password',
    );
  });

  it('text that is not valid Unicode (a lone surrogate escape) is refused at the door, on every route', async () => {
    const { owner } = await team(api.current.db, call, 'Lone surrogates');
    const created = await call('POST', '/webhooks', {
      cookie: owner.cookie,
      body: { name: 'Receiver 😀', url: 'https://hooks.example.com/in', events: ['recovery.recovered'] },
    });
    expect([created.status, created.body.name]).toEqual([201, 'Receiver 😀']);
    const refusal = {
      error: {
        type: 'invalid_param',
        message: 'The request body has text that is not valid Unicode (a lone surrogate escape such as \\ud800).',
      },
    };
    // Before: 500 (the security log's jsonb refused the name it copies) on this route, and the
    // name saved with U+FFFD in place of what was checked on the others.
    const update = await call('PATCH', `/webhooks/${created.body.id}`, {
      cookie: owner.cookie,
      rawBody: '{"name":"Receiver \\ud800"}',
    });
    expect([update.status, update.body]).toEqual([400, refusal]);
    const token = await call('POST', '/tokens', { cookie: owner.cookie, rawBody: '{"name":"\\udc00 CI"}' });
    expect([token.status, token.body]).toEqual([400, refusal]);
    const key = await call('PATCH', '/account', { cookie: owner.cookie, rawBody: '{"\\ud800":"x"}' });
    expect([key.status, key.body]).toEqual([400, refusal]);
    const endpoint = await call('GET', `/webhooks/${created.body.id}`, { cookie: owner.cookie });
    expect(endpoint.body.name).toBe('Receiver 😀');
  });

  it('a body nested thousands deep, well under 64 KB, is answered and the process lives on', async () => {
    const { owner } = await team(api.current.db, call, 'Deep body');
    const deep = `{"name":${'['.repeat(20_000)}"\\ud800"${']'.repeat(20_000)}}`;
    expect(deep.length).toBeLessThan(64 * 1024);
    // Before: the check for lone surrogates recursed once a level, ran out of stack inside
    // body-parser's callback, and the API process exited.
    const answer = await call('PATCH', '/account', { cookie: owner.cookie, rawBody: deep });
    expect([answer.status, answer.body.error.type]).toEqual([400, 'invalid_param']);
    const anonymous = await call('PATCH', '/account', { rawBody: deep.replace('\\ud800', 'x') });
    expect(anonymous.status).toBe(401);
    expect((await call('GET', '/me', { cookie: owner.cookie })).status).toBe(200);
  });

  it('a refusal of the request as a whole names no field', async () => {
    const { owner } = await team(api.current.db, call, 'Whole request');
    const notJson = await call('PATCH', '/account', { cookie: owner.cookie, rawBody: '{"name":' });
    expect(notJson.body).toEqual({ error: { type: 'invalid_param', message: 'The request body is not valid JSON.' } });
    // The schema's refusal of the value as a whole (`(root)`) names no field either.
    const empty = await call('PATCH', '/workspace', { cookie: owner.cookie, body: {} });
    expect(empty.body).toEqual({
      error: { type: 'invalid_param', message: expect.stringMatching(/^\(root\): /) },
    });
  });
});

describe('names are kept tidy', () => {
  it('a person, the workspace, a token and an endpoint keep a typed name without its outer and doubled spaces', async () => {
    const { owner } = await team(development.current.db, developmentCall, 'Tidy names');
    const as = { cookie: owner.cookie };
    const account = await developmentCall('PATCH', '/account', {
      ...as,
      body: { name: '  Dana   Demanding-Müller  ' },
    });
    expect([account.status, account.body.user.name]).toEqual([200, 'Dana Demanding-Müller']);
    const workspace = await developmentCall('PATCH', '/workspace', {
      ...as,
      body: { name: '\u00a0Northwind \u00a0 Analytics ' },
    });
    expect([workspace.status, workspace.body.name]).toEqual([200, 'Northwind Analytics']);
    const token = await developmentCall('POST', '/tokens', { ...as, body: { name: ' CI  deploy ' } });
    expect([token.status, token.body.name]).toEqual([201, 'CI deploy']);
    const endpoint = await developmentCall('POST', '/webhooks', {
      ...as,
      body: { name: '  My   CRM ', url: 'https://127.0.0.1:9/in', events: [] },
    });
    expect([endpoint.status, endpoint.body.name]).toEqual([201, 'My CRM']);
    const renamed = await developmentCall('PATCH', `/webhooks/${endpoint.body.id}`, {
      ...as,
      body: { name: 'My  CRM  (EU)' },
    });
    expect([renamed.status, renamed.body.name]).toEqual([200, 'My CRM (EU)']);
    // Spaces alone are still no name.
    expectFieldRefusal(await developmentCall('PATCH', '/account', { ...as, body: { name: ' \u00a0 ' } }), 'name');
  });
});
