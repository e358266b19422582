import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { DEFAULT_FX_RATES_PER_USD, SECURITY_ACTIONS } from '@retention/core';
import { MAX_WEBHOOK_ENDPOINTS, TOO_MANY_WEBHOOK_ENDPOINTS } from '@retention/core/webhook-endpoints';
import { storedSigningSecrets, testSecretsKeyBytes } from '@retention/testkit';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, signIn, team } from './support.js';

const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('API tokens', () => {
  it('creates a token shown once, which works on /api/v1 until revoked, then 401 on the next request', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Tokens');
    const created = await call('POST', '/tokens', { cookie: owner.cookie, body: { name: '<script>x</script>' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'api_token',
      name: '<script>x</script>',
      created_by: { id: owner.id, email: owner.email },
    });
    expect(created.body.token).toMatch(/^sk_live_/);
    expect(created.body.hint).toBe(created.body.token.slice(-4));
    const listed = await call('GET', '/tokens', { cookie: admin.cookie });
    expect(listed.status).toBe(200);
    expect(listed.body.data[0]).not.toHaveProperty('token');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);

    expect((await api.current.get('/api/v1/stats', created.body.token)).status).toBe(200);
    const revoked = await call('POST', `/tokens/${created.body.id}/revoke`, { cookie: owner.cookie });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    expect((await api.current.get('/api/v1/stats', created.body.token)).status).toBe(401);

    const actions = await api.current
      .db('security_events')
      .where({ target_id: created.body.id })
      .orderBy('created_at')
      .pluck('action');
    expect(actions).toEqual(['token.created', 'token.revoked']);
    const log = await api.current.db('security_events').where({ target_id: created.body.id });
    expect(log[0].actor_user_id).toBe(owner.id);
    expect(log[0].ip_address).not.toBeNull();
    expect(JSON.stringify(log)).not.toContain(created.body.token);
  });

  it("names each token's maker as the security log names it: the user, the operator CLI, npm start for the demo's", async () => {
    const { createToken, OPERATOR, seedDemo } = await import('@retention/domain');
    const { owner, admin, workspace } = await team(api.current.db, call, 'Makers');
    await call('POST', '/tokens', { cookie: owner.cookie, body: { name: 'in-dashboard' } });
    await createToken(api.current.db, { workspace_id: workspace.id, name: 'cli' }, OPERATOR);
    await createToken(
      api.current.db,
      { workspace_id: workspace.id, name: 'cli-as-admin' },
      { type: 'operator', user_id: admin.id, label: 'operator CLI' },
    );
    const makers = async (cookie: string) =>
      Object.fromEntries(
        ((await call('GET', '/tokens', { cookie })).body.data as Array<Record<string, any>>).map((token) => [
          token.name,
          [token.created_by?.email ?? null, token.created_via],
        ]),
      );
    expect(await makers(owner.cookie)).toEqual({
      'in-dashboard': [owner.email, null],
      cli: [null, 'operator CLI'],
      'cli-as-admin': [admin.email, 'operator CLI'],
    });

    // The demo npm start seeds: its token is npm start's, on this page as in the log.
    const demo = await seedDemo(api.current.db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 10,
      baseUrl: api.current.url,
      actor: { type: 'system', label: 'Demo setup' },
    });
    const demoOwner = await makeUser(api.current.db, demo.workspace.id, 'owner');
    expect(await makers(await signIn(call, demoOwner.email))).toEqual({ 'demo seed': [null, 'Demo setup'] });
  });

  it('refuses members (403 JSON), other workspaces (404) and bad ids (400)', async () => {
    const a = await team(api.current.db, call, 'A');
    const b = await team(api.current.db, call, 'B');
    const refused = await call('POST', '/tokens', { cookie: a.member.cookie, body: { name: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe('forbidden');
    // Reading the list too: owners and admins only (dashboard.md's role table gives members none of it).
    const unread = await call('GET', '/tokens', { cookie: a.member.cookie });
    expect(unread.status).toBe(403);
    expect(unread.body.error).toEqual({ type: 'forbidden', message: 'Only owners and admins can see the API tokens.' });
    expect((await call('GET', '/tokens', { cookie: a.admin.cookie })).status).toBe(200);
    expect(await api.current.db('api_tokens').where({ workspace_id: a.workspace.id })).toHaveLength(0);
    const theirs = await call('POST', '/tokens', { cookie: b.owner.cookie, body: { name: 'theirs' } });
    const cross = await call('POST', `/tokens/${theirs.body.id}/revoke`, { cookie: a.owner.cookie });
    expect(cross.status).toBe(404);
    expect((await api.current.get('/api/v1/stats', theirs.body.token)).status).toBe(200);
    expect((await call('POST', '/tokens/nope/revoke', { cookie: a.owner.cookie })).status).toBe(400);
    expect((await call('POST', '/tokens', { cookie: a.owner.cookie, body: { name: '' } })).status).toBe(400);
    expect((await call('GET', '/tokens')).status).toBe(401);
  });
});

describe('outbound webhooks', () => {
  it('adds, reads, edits, tests, disables, enables and deletes an endpoint, each recorded', async () => {
    const { admin, member, workspace } = await team(api.current.db, call, 'Hooks');
    const refusedUrl = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Mine', url: 'http://example.com/hook' },
    });
    expect(refusedUrl.status).toBe(400);
    expect(refusedUrl.body.error.type).toBe('invalid_param');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Mine', url: 'https://receiver.invalid/hook', events: ['recovery.opened'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.body).toMatchObject({
      events: ['recovery.opened'],
      enabled: true,
      alert: null,
      disabled_reason: null,
    });
    const id = created.body.id;
    const listed = await call('GET', '/webhooks', { cookie: member.cookie });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
    expect((await call('PATCH', `/webhooks/${id}`, { cookie: member.cookie, body: { name: 'x' } })).status).toBe(403);
    const edited = await call('PATCH', `/webhooks/${id}`, { cookie: admin.cookie, body: { events: [] } });
    expect(edited.body.events).toEqual([]);
    // The form saved again as it is: a success with the endpoint unchanged, and no log entry.
    const unchanged = await call('PATCH', `/webhooks/${id}`, {
      cookie: admin.cookie,
      body: { name: 'Mine', url: 'https://receiver.invalid/hook', events: [] },
    });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toMatchObject({ name: 'Mine', url: 'https://receiver.invalid/hook', events: [] });
    // The record carries each changed field from and to, and only those: the events here.
    const firstEdit = await call('GET', '/security-log', { cookie: admin.cookie });
    expect(firstEdit.body.data.filter((event: { action: string }) => event.action === 'webhook.updated')).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ type: 'user', user_id: admin.id }),
        // The endpoint by its name and URL, as the Outbound webhooks page names it.
        target: { type: 'webhook_endpoint', id, label: 'Mine (https://receiver.invalid/hook)', exists: true },
        details: { events: { from: ['recovery.opened'], to: [] } },
      }),
    ]);
    const tested = await call('POST', `/webhooks/${id}/test`, { cookie: admin.cookie });
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ outcome: 'failed', http_status: null, event_type: 'ping' });
    expect(typeof tested.body.error).toBe('string');
    const log = await call('GET', `/webhooks/${id}/deliveries`, { cookie: member.cookie });
    expect(log.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(log.body.data[0]).toMatchObject({ id: tested.body.id, request_body: null });
    expect(
      (await call('GET', `/webhooks/${id}/deliveries?outcome=succeeded`, { cookie: member.cookie })).body.data,
    ).toEqual([]);
    expect((await call('GET', `/webhooks/${id}/deliveries?outcome=nope`, { cookie: member.cookie })).status).toBe(400);
    expect((await call('GET', `/webhooks/${id}/deliveries?cursor=zzz`, { cookie: member.cookie })).status).toBe(400);
    expect((await call('POST', `/webhooks/${id}/disable`, { cookie: admin.cookie })).body.enabled).toBe(false);
    expect((await call('POST', `/webhooks/${id}/enable`, { cookie: admin.cookie })).body.enabled).toBe(true);
    expect((await call('DELETE', `/webhooks/${id}`, { cookie: member.cookie })).status).toBe(403);
    expect((await call('DELETE', `/webhooks/${id}`, { cookie: admin.cookie })).status).toBe(204);
    expect((await call('GET', `/webhooks/${id}`, { cookie: admin.cookie })).status).toBe(404);
    const actions = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id, target_id: id })
      .orderBy('created_at')
      .pluck('action');
    expect(actions).toEqual([
      'webhook.created',
      'webhook.updated', // the events alone: the unchanged save wrote nothing
      'webhook.disabled',
      'webhook.enabled',
      'webhook.deleted',
    ]);
  });

  it('records an edit as each changed field from and to (name, URL, events), never the secret', async () => {
    const { owner, admin, workspace } = await team(api.current.db, call, 'Edits');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Billing', url: 'https://a.receiver.invalid/hook', events: [] },
    });
    const id = created.body.id;
    const edited = await call('PATCH', `/webhooks/${id}`, {
      cookie: admin.cookie,
      body: {
        name: 'Billing 2',
        url: 'https://b.receiver.invalid/hook',
        // Given out of order: recorded in the catalog's order, as the endpoint keeps them.
        events: ['recovery.lost', 'recovery.recovered'],
      },
    });
    expect(edited.status).toBe(200);
    // The URL alone, the name given as it is: the name is not in the record.
    const moved = await call('PATCH', `/webhooks/${id}`, {
      cookie: owner.cookie,
      body: { name: 'Billing 2', url: 'https://c.receiver.invalid/hook' },
    });
    expect(moved.status).toBe(200);
    const log = await call('GET', '/security-log', { cookie: owner.cookie });
    const updates = log.body.data.filter((event: { action: string }) => event.action === 'webhook.updated');
    expect(updates.map((event: { details: unknown; target: unknown }) => [event.target, event.details])).toEqual([
      [
        { type: 'webhook_endpoint', id, label: 'Billing 2 (https://b.receiver.invalid/hook)', exists: true },
        { url: { from: 'https://b.receiver.invalid/hook', to: 'https://c.receiver.invalid/hook' } },
      ],
      [
        { type: 'webhook_endpoint', id, label: 'Billing (https://a.receiver.invalid/hook)', exists: true },
        {
          name: { from: 'Billing', to: 'Billing 2' },
          url: { from: 'https://a.receiver.invalid/hook', to: 'https://b.receiver.invalid/hook' },
          events: { from: [], to: ['recovery.recovered', 'recovery.lost'] },
        },
      ],
    ]);
    const stored = await api.current.db('security_events').where({ workspace_id: workspace.id });
    expect(JSON.stringify(stored)).not.toContain(created.body.secret);
  });

  it("answers 404 for another workspace's endpoint and changes nothing", async () => {
    const a = await team(api.current.db, call, 'A2');
    const b = await team(api.current.db, call, 'B2');
    const theirs = await call('POST', '/webhooks', {
      cookie: b.owner.cookie,
      body: { name: 'B', url: 'https://b.invalid/' },
    });
    for (const [method, path] of [
      ['GET', `/webhooks/${theirs.body.id}`],
      ['PATCH', `/webhooks/${theirs.body.id}`],
      ['DELETE', `/webhooks/${theirs.body.id}`],
      ['POST', `/webhooks/${theirs.body.id}/disable`],
      ['POST', `/webhooks/${theirs.body.id}/test`],
      ['GET', `/webhooks/${theirs.body.id}/deliveries`],
    ] as const) {
      const reply = await call(method, path, {
        cookie: a.owner.cookie,
        ...(method === 'PATCH' && { body: { name: 'pwned' } }),
      });
      expect([method, path, reply.status]).toEqual([method, path, 404]);
    }
    expect((await call('GET', `/webhooks/${theirs.body.id}`, { cookie: b.owner.cookie })).body).toMatchObject({
      name: 'B',
      enabled: true,
    });
  });

  it('reads an id that is not a UUID as not found (the endpoint page), but refuses it as malformed in a change', async () => {
    const a = await team(api.current.db, call, 'A3');
    const read = await call('GET', '/webhooks/not-an-id', { cookie: a.owner.cookie });
    expect([read.status, read.body.error.type]).toEqual([404, 'not_found']);
    const change = await call('PATCH', '/webhooks/not-an-id', { cookie: a.owner.cookie, body: { name: 'x' } });
    expect([change.status, change.body.error.type]).toEqual([400, 'invalid_param']);
  });

  it('shows and dismisses the auto-disable alert', async () => {
    const { owner } = await team(api.current.db, call, 'Alerts');
    const created = await call('POST', '/webhooks', {
      cookie: owner.cookie,
      body: { name: 'A', url: 'https://a.invalid/' },
    });
    // What the worker does on the tenth failure (services/worker/src/delivery/delivery-store.ts).
    await api.current
      .db('webhook_endpoints')
      .where({ id: created.body.id })
      .update({ enabled: false, disabled_reason: 'consecutive_failures', failure_count: 10 });
    const shown = await call('GET', `/webhooks/${created.body.id}`, { cookie: owner.cookie });
    expect(shown.body.alert).toMatchObject({ reason: 'consecutive_failures' });
    const dismissed = await call('POST', `/webhooks/${created.body.id}/dismiss-alert`, { cookie: owner.cookie });
    expect(dismissed.body).toMatchObject({ alert: null, enabled: false, disabled_reason: 'consecutive_failures' });
  });

  it(`refuses a workspace's endpoint past ${MAX_WEBHOOK_ENDPOINTS} with 409 conflict, storing and logging nothing`, async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Full');
    const add = (name: string) =>
      call('POST', '/webhooks', { cookie: owner.cookie, body: { name, url: 'https://hooks.example.com/full' } });
    for (let index = 0; index < MAX_WEBHOOK_ENDPOINTS; index++) expect((await add(`E${index}`)).status).toBe(201);
    const refused = await add('One too many');
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: { type: 'conflict', message: TOO_MANY_WEBHOOK_ENDPOINTS } });
    expect(await api.current.db('webhook_endpoints').where({ workspace_id: workspace.id })).toHaveLength(
      MAX_WEBHOOK_ENDPOINTS,
    );
    const logged = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id, action: 'webhook.created' });
    expect(logged).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
  });
});

describe('team and workspace', () => {
  it('enforces the role table and keeps the last owner', async () => {
    const { owner, admin, member, workspace } = await team(api.current.db, call, 'Team');
    const listed = await call('GET', '/team', { cookie: member.cookie });
    expect(listed.body.members).toHaveLength(3);
    expect(
      (
        await call('POST', '/team/invitations', {
          cookie: member.cookie,
          body: { email: 'x@example.com', role: 'member' },
        })
      ).status,
    ).toBe(403);
    const adminMakesOwner = await call('POST', '/team/invitations', {
      cookie: admin.cookie,
      body: { email: 'x@example.com', role: 'owner' },
    });
    expect(adminMakesOwner.status).toBe(403);
    expect(
      (await call('PATCH', `/team/members/${member.id}`, { cookie: admin.cookie, body: { role: 'owner' } })).status,
    ).toBe(403);
    expect(
      (await call('PATCH', `/team/members/${owner.id}`, { cookie: admin.cookie, body: { role: 'member' } })).status,
    ).toBe(403);
    expect((await call('DELETE', `/team/members/${owner.id}`, { cookie: admin.cookie })).status).toBe(403);
    const lastOwner = await call('PATCH', `/team/members/${owner.id}`, {
      cookie: owner.cookie,
      body: { role: 'admin' },
    });
    expect(lastOwner.status).toBe(409);
    expect((await call('DELETE', `/team/members/${owner.id}`, { cookie: owner.cookie })).status).toBe(409);
    const promoted = await call('PATCH', `/team/members/${member.id}`, {
      cookie: admin.cookie,
      body: { role: 'admin' },
    });
    expect(promoted.body.user.role).toBe('admin');
    expect(
      (await call('PATCH', `/team/members/${member.id}`, { cookie: owner.cookie, body: { role: 'superuser' } })).status,
    ).toBe(400);
    expect((await call('DELETE', `/team/members/${member.id}`, { cookie: admin.cookie })).status).toBe(204);
    // The removed person's open page is told why its session ended, with a code to branch on;
    // only the hash of their session was kept, and a session merely signed out is told nothing more.
    const removed = await call('GET', '/me', { cookie: member.cookie });
    expect(removed.status).toBe(401);
    expect(removed.body.error).toEqual({
      type: 'authentication_required',
      code: 'member_removed',
      message:
        'You were removed from this workspace, so your session ended. To come back, ask one of its owners or admins to invite you again.',
    });
    const kept = await api.current.db('removed_member_sessions').where({ workspace_id: workspace.id });
    expect(kept).toHaveLength(1);
    expect(kept[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(member.cookie).not.toContain(kept[0].token_hash);
    expect((await call('DELETE', '/session', { cookie: admin.cookie })).status).toBe(204);
    const signedOut = await call('GET', '/me', { cookie: admin.cookie });
    expect(signedOut.body.error).toEqual({
      type: 'authentication_required',
      message: 'Sign in to continue: there is no session, or it has ended.',
    });
    const other = await team(api.current.db, call, 'Elsewhere');
    expect((await call('DELETE', `/team/members/${other.member.id}`, { cookie: owner.cookie })).status).toBe(404);
    const actions = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id })
      .orderBy('created_at')
      .pluck('action');
    expect(actions).toEqual(['team.role_changed', 'team.removed']);
  });

  it('lets only the owner change the workspace; admins and owners read the security log', async () => {
    const { owner, admin, member } = await team(api.current.db, call, 'Settings');
    // Any role reads whether the processor connection is set up (the Workspace page's sentence).
    const read = await call('GET', '/workspace', { cookie: member.cookie });
    expect(read.body).toMatchObject({ processor_connection_status: 'not_connected' });
    // And what the Display currency may be set to: the codes with an exchange rate, sorted.
    expect(read.body.display_currencies).toEqual(Object.keys(DEFAULT_FX_RATES_PER_USD).sort());
    expect((await call('PATCH', '/workspace', { cookie: admin.cookie, body: { name: 'No' } })).status).toBe(403);
    const renamed = await call('PATCH', '/workspace', { cookie: owner.cookie, body: { name: 'Renamed <i>' } });
    expect(renamed.body).toMatchObject({ name: 'Renamed <i>', display_currency: 'usd' });
    expect(
      (await call('PATCH', '/workspace', { cookie: owner.cookie, body: { display_currency: 'xxx' } })).status,
    ).toBe(400);
    expect((await call('GET', '/security-log', { cookie: member.cookie })).status).toBe(403);
    // The page saved as it was loaded: a success with the workspace as it is, and no entry.
    const unchanged = await call('PATCH', '/workspace', {
      cookie: owner.cookie,
      body: { name: 'Renamed <i>', display_currency: 'usd' },
    });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toMatchObject({ name: 'Renamed <i>', display_currency: 'usd' });
    // A real change is recorded with what it changed, and only that.
    const converted = await call('PATCH', '/workspace', {
      cookie: owner.cookie,
      body: { name: 'Renamed <i>', display_currency: 'eur' },
    });
    expect(converted.body).toMatchObject({ name: 'Renamed <i>', display_currency: 'eur' });
    const log = await call('GET', '/security-log', { cookie: admin.cookie });
    const updates = log.body.data.filter((event: { action: string }) => event.action === 'workspace.updated');
    expect(updates).toMatchObject([
      {
        actor: { type: 'user', user_id: owner.id },
        details: { display_currency: { from: 'usd', to: 'eur' } },
      },
      {
        actor: { type: 'user', user_id: owner.id },
        details: { name: { to: 'Renamed <i>' } },
      },
    ]);
    expect(Object.keys(updates[0].details)).toEqual(['display_currency']);
  });

  it('serves the first pages their data: stats and the lists', async () => {
    const { member } = await team(api.current.db, call, 'Reads');
    expect((await call('GET', '/stats', { cookie: member.cookie })).status).toBe(200);
    for (const path of ['/campaigns', '/customers', '/cancel_sessions']) {
      const reply = await call('GET', path, { cookie: member.cookie });
      expect([path, reply.status, reply.body.object]).toEqual([path, 200, 'list']);
    }
    expect((await call('GET', '/campaigns?status=bogus', { cookie: member.cookie })).status).toBe(400);
    expect((await call('GET', '/campaigns')).status).toBe(401);
    expect((await call('GET', '/nothing-here', { cookie: member.cookie })).status).toBe(404);
    // Request metrics name the route pattern, never the id in the path.
    const metrics = await api.current.metricsText();
    expect(metrics).toContain('route="/dashboard/api/campaigns"');
    expect(metrics).toContain('route="/dashboard/api/webhooks/:id/:action"');
  });
});

void makeUser;

describe('roll secret and retry failed since', () => {
  it('rolls the secret with an overlap, both secrets signing until it ends; recovers failed deliveries once', async () => {
    const { signingSecretsOf } = await import('@retention/domain');
    const { admin, member, workspace } = await team(api.current.db, call, 'Roll');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'R', url: 'https://r.invalid/' },
    });
    const id = created.body.id;
    expect((await call('POST', `/webhooks/${id}/roll-secret`, { cookie: member.cookie })).status).toBe(403);
    expect(
      (await call('POST', `/webhooks/${id}/roll-secret`, { cookie: admin.cookie, body: { overlap_seconds: 86_401 } }))
        .status,
    ).toBe(400);
    const rolled = await call('POST', `/webhooks/${id}/roll-secret`, {
      cookie: admin.cookie,
      body: { overlap_seconds: 3600 },
    });
    expect(rolled.status).toBe(200);
    expect(rolled.body.secret).toMatch(/^whsec_/);
    expect(rolled.body.secret).not.toBe(created.body.secret);
    expect(Date.parse(rolled.body.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 3500_000);
    expect(await signingSecretsOf(api.current.db, testSecretsKeyBytes(), id)).toEqual([
      rolled.body.secret,
      created.body.secret,
    ]);
    // Both stored sealed, never in the clear, and opening to the secrets the API handed out.
    const stored = await storedSigningSecrets(api.current.db, id);
    expect(JSON.stringify(stored.sealed)).not.toContain('whsec_');
    expect([stored.current, stored.previous]).toEqual([rolled.body.secret, created.body.secret]);
    // During the overlap a roll must say it ends it (webhook-delivery.test.ts shows the refusal).
    const again = await call('POST', `/webhooks/${id}/roll-secret`, {
      cookie: admin.cookie,
      body: { end_overlap: true },
    });
    expect(await signingSecretsOf(api.current.db, testSecretsKeyBytes(), id)).toEqual([again.body.secret]);

    // Two finished deliveries (one failed, one skipped) and one that succeeded.
    const [event] = await api.current
      .db('events')
      .insert([1, 2, 3].map(() => ({ workspace_id: workspace.id, type: 'recovery.opened', data: {} })))
      .returning('id');
    const events = await api.current.db('events').where({ workspace_id: workspace.id }).pluck('id');
    expect(event).toBeDefined();
    for (const [index, status] of (['failed', 'skipped', 'succeeded'] as const).entries()) {
      await api.current.db('webhook_deliveries').insert({
        workspace_id: workspace.id,
        endpoint_id: id,
        event_id: events[index],
        event_type: 'recovery.opened',
        status,
        attempt_count: 1,
        completed_at: new Date(),
      });
    }
    const since = new Date(Date.now() - 60_000).toISOString();
    expect(
      (await call('POST', `/webhooks/${id}/recover`, { cookie: admin.cookie, body: { since: 'yesterday' } })).status,
    ).toBe(400);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      (await call('POST', `/webhooks/${id}/recover`, { cookie: admin.cookie, body: { since: future } })).status,
    ).toBe(400);
    await call('POST', `/webhooks/${id}/disable`, { cookie: admin.cookie });
    expect((await call('POST', `/webhooks/${id}/recover`, { cookie: admin.cookie, body: { since } })).status).toBe(409);
    await call('POST', `/webhooks/${id}/enable`, { cookie: admin.cookie });
    const recovered = await call('POST', `/webhooks/${id}/recover`, { cookie: admin.cookie, body: { since } });
    expect(recovered.body).toEqual({ requeued: 2, retrying: 0 });
    // Once each: now pending again after their failed attempts, they are counted as still being
    // retried, not queued a second time.
    expect((await call('POST', `/webhooks/${id}/recover`, { cookie: admin.cookie, body: { since } })).body).toEqual({
      requeued: 0,
      retrying: 2,
    });
    const pending = await api.current.db('webhook_deliveries').where({ endpoint_id: id, status: 'pending' });
    expect(pending).toHaveLength(2);
    const actions = await api.current
      .db('security_events')
      .where({ target_id: id })
      .orderBy('created_at')
      .pluck('action');
    expect(actions).toEqual([
      'webhook.created',
      'webhook.secret_rolled',
      'webhook.secret_rolled',
      'webhook.disabled',
      'webhook.enabled',
      // The first retry only: the second requeued nothing (its deliveries were still being
      // retried), changed nothing, and wrote no record.
      'webhook.deliveries_requeued',
    ]);
    const log = await api.current.db('security_events').where({ workspace_id: workspace.id });
    expect(JSON.stringify(log)).not.toContain(rolled.body.secret);
  });
});

describe('end the overlap now', () => {
  it('stops the replaced secret without rolling, logged once; ending again changes nothing and succeeds', async () => {
    const { signingSecretsOf } = await import('@retention/domain');
    const { admin, member } = await team(api.current.db, call, 'EndOverlap');
    const created = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'E', url: 'https://e.invalid/' },
    });
    const id = created.body.id;
    const rolled = await call('POST', `/webhooks/${id}/roll-secret`, {
      cookie: admin.cookie,
      body: { overlap_seconds: 3600 },
    });
    expect((await call('POST', `/webhooks/${id}/end-overlap`, { cookie: member.cookie })).status).toBe(403);
    const ended = await call('POST', `/webhooks/${id}/end-overlap`, { cookie: admin.cookie });
    expect(ended.status).toBe(200);
    expect(ended.body).toEqual({
      id,
      previous_secret_expires_at: null,
      ended_overlap_until: rolled.body.previous_secret_expires_at,
    });
    // The secret the roll made signs alone; the endpoint says no overlap is open.
    expect(await signingSecretsOf(api.current.db, testSecretsKeyBytes(), id)).toEqual([rolled.body.secret]);
    expect((await call('GET', `/webhooks/${id}`, { cookie: admin.cookie })).body.previous_secret_expires_at).toBe(null);
    // A retry (or a second click) finds no overlap: a success that says nothing was ended.
    const again = await call('POST', `/webhooks/${id}/end-overlap`, { cookie: admin.cookie });
    expect(again.status).toBe(200);
    expect(again.body.ended_overlap_until).toBeNull();
    const log = await api.current
      .db('security_events')
      .where({ target_id: id, action: 'webhook.secret_overlap_ended' })
      .select('actor_type', 'details');
    expect(log).toEqual([
      { actor_type: 'user', details: { ended_overlap_until: rolled.body.previous_secret_expires_at } },
    ]);
    // With the overlap over, a roll needs no end_overlap.
    expect((await call('POST', `/webhooks/${id}/roll-secret`, { cookie: admin.cookie })).status).toBe(200);
  });
});

describe('security log filters', () => {
  /**
   * A workspace's log of seven entries a day or so apart, each named by its target's id (e1 the
   * oldest), made by each kind of actor; and one entry of another workspace, which no filter finds.
   */
  async function history() {
    const { recordSecurityEvent } = await import('@retention/domain');
    const { db } = api.current;
    const people = await team(db, call, 'Log filters');
    const other = await team(db, call, 'Other log');
    const { owner, admin, workspace } = people;
    const entries = [
      ['e1', 'token.created', { type: 'user', user_id: owner.id, label: owner.email }, '2026-03-02T09:00:00.000Z'],
      ['e2', 'token.revoked', { type: 'user', user_id: admin.id, label: admin.email }, '2026-03-03T10:00:00.000Z'],
      [
        'e3',
        'token.revoked',
        { type: 'operator', user_id: admin.id, label: 'operator CLI' },
        '2026-03-03T12:00:00.000Z',
      ],
      ['e4', 'team.invited', { type: 'user', user_id: owner.id, label: owner.email }, '2026-03-04T08:00:00.000Z'],
      ['e5', 'webhook.created', { type: 'operator', label: 'operator CLI' }, '2026-03-05T00:00:00.000Z'],
      ['e6', 'account.reset_link_revoked', { type: 'system', label: 'migration 0035' }, '2026-03-06T00:00:00.000Z'],
      ['e7', 'processor.key_rejected', { type: 'processor', label: 'stripe' }, '2026-03-07T00:00:00.000Z'],
    ] as const;
    for (const [id, action, actor, at] of entries) {
      await recordSecurityEvent(db, {
        workspace_id: workspace.id,
        action,
        actor,
        target: { type: 'api_token', id },
        at: new Date(at),
      });
    }
    await recordSecurityEvent(db, {
      workspace_id: other.workspace.id,
      action: 'token.revoked',
      actor: { type: 'user', user_id: other.admin.id, label: other.admin.email },
      target: { type: 'api_token', id: 'elsewhere' },
      at: new Date('2026-03-03T11:00:00.000Z'),
    });
    return { ...people, other };
  }

  /** The target ids of a page of the log, newest first. */
  const idsOf = (reply: { body: { data: Array<{ target: { id: string } | null }> } }) =>
    reply.body.data.map((event) => event.target?.id);

  it('filters by action (one or several), by who made the change, and by time, each alone and together', async () => {
    const { owner, admin, member } = await history();
    const read = async (query: string) => {
      const reply = await call('GET', `/security-log?${query}`, { cookie: admin.cookie });
      expect([query, reply.status]).toEqual([query, 200]);
      return idsOf(reply);
    };
    expect(await read('action=token.revoked')).toEqual(['e3', 'e2']);
    expect(await read('action=token.created,token.revoked')).toEqual(['e3', 'e2', 'e1']);
    // In any order, and a name given twice counts once.
    expect(await read('action=token.revoked,token.created,token.revoked')).toEqual(['e3', 'e2', 'e1']);
    // A person's changes in the dashboard and those the operator CLI made in their name (--actor).
    expect(await read(`actor=${admin.id}`)).toEqual(['e3', 'e2']);
    expect(await read(`actor=${admin.id.toUpperCase()}`)).toEqual(['e3', 'e2']);
    expect(await read(`actor=${owner.id}`)).toEqual(['e4', 'e1']);
    expect(await read(`actor=${member.id}`)).toEqual([]);
    // Every operator CLI change, in someone's name or not; the service's own; the processor's.
    expect(await read('actor=operator')).toEqual(['e5', 'e3']);
    expect(await read('actor=system')).toEqual(['e6']);
    // A kind in any case, as a person's id is taken in any case (the page lowercases what it shows).
    expect(await read('actor=OPERATOR')).toEqual(['e5', 'e3']);
    expect(await read('actor=processor')).toEqual(['e7']);
    // `from` inclusive, `to` exclusive; a date is its midnight UTC.
    expect(await read('from=2026-03-03&to=2026-03-04')).toEqual(['e3', 'e2']);
    expect(await read('from=2026-03-03T12:00:00.000Z')).toEqual(['e7', 'e6', 'e5', 'e4', 'e3']);
    expect(await read('to=2026-03-03T12:00:00Z')).toEqual(['e2', 'e1']);
    expect(await read('from=2026-03-03T13:00:00%2B01:00&to=2026-03-04')).toEqual(['e3']);
    expect(await read('action=token.revoked&actor=operator&from=2026-03-03')).toEqual(['e3']);
    expect(await read(`action=token.revoked,team.invited&actor=${owner.id}`)).toEqual(['e4']);
    // A range that holds no time is an empty list, as on the data pages, not an error.
    expect(await read('from=2026-03-05&to=2026-03-04')).toEqual([]);
    // Unfiltered, the whole log as before.
    expect(await read('')).toEqual(['e7', 'e6', 'e5', 'e4', 'e3', 'e2', 'e1']);
  });

  it("refuses an unknown action, a malformed time, and a person who is not on this workspace's team, in words", async () => {
    const { admin, member, other } = await history();
    const actorRule =
      "actor: must be the id of a person on this workspace's team, or one of operator, processor, system";
    const refusals: Array<[string, string, string]> = [
      [
        'action=token.deleted',
        'action',
        `action: "token.deleted" is not an action of the security log; give one or more of ${SECURITY_ACTIONS.join(', ')}, separated by commas`,
      ],
      ['action=', 'action', 'action: must be one or more actions separated by commas, none of them empty'],
      [
        'action=token.created,',
        'action',
        'action: must be one or more actions separated by commas, none of them empty',
      ],
      ['actor=operator%20CLI', 'actor', actorRule],
      ['actor=user', 'actor', actorRule],
      // Another workspace's person is no one here: refused exactly as an id no one has.
      [`actor=${other.admin.id}`, 'actor', actorRule],
      [`actor=${randomUUID()}`, 'actor', actorRule],
      ['from=last%20tuesday', 'from', 'from: must be an ISO 8601 date or timestamp'],
      ['to=2026-02-30', 'to', 'to: must be an ISO 8601 date or timestamp'],
      ['from=', 'from', 'from: must be an ISO 8601 date or timestamp'],
      ['action=token.created&action=token.revoked', 'action', 'action: give it once'],
      ['since=2026-03-01', 'since', 'since: is not a parameter of this list'],
      ['limit=0', 'limit', 'limit: must be an integer from 1 to 100'],
    ];
    for (const [query, param, message] of refusals) {
      const reply = await call('GET', `/security-log?${query}`, { cookie: admin.cookie });
      expect([query, reply.status, reply.body]).toEqual([
        query,
        400,
        { error: { type: 'invalid_param', message, param } },
      ]);
    }
    // Who may ask comes before what was asked.
    expect((await call('GET', '/security-log?action=token.deleted', { cookie: member.cookie })).status).toBe(403);
    expect((await call('GET', '/security-log?action=token.deleted')).status).toBe(401);
  });

  it('pages a filtered log with its cursor, which no other filters accept', async () => {
    const { owner, admin } = await history();
    const filters = 'action=token.created,token.revoked,team.invited,webhook.created';
    const seen: Array<string | undefined> = [];
    let cursor: string | null = null;
    const cursors: string[] = [];
    for (let pages = 0; pages < 5; pages += 1) {
      const suffix: string = cursor ? `&cursor=${cursor}` : '';
      const page = await call('GET', `/security-log?${filters}&limit=2${suffix}`, { cookie: admin.cookie });
      expect(page.status).toBe(200);
      seen.push(...idsOf(page));
      if (!page.body.has_more) break;
      cursor = page.body.next_cursor as string;
      cursors.push(cursor);
    }
    expect(seen).toEqual(['e5', 'e4', 'e3', 'e2', 'e1']);
    expect(cursors).toHaveLength(2);
    const [first] = cursors as [string];
    // The same filters written another way, and another page size: the cursor goes on.
    const reordered = await call(
      'GET',
      `/security-log?action=webhook.created,team.invited,token.revoked,token.created&limit=10&cursor=${first}`,
      { cookie: admin.cookie },
    );
    expect(idsOf(reordered)).toEqual(['e3', 'e2', 'e1']);
    const otherList = 'cursor: comes from another list or other filters; start again without a cursor';
    const unfiltered = (await call('GET', '/security-log?limit=1', { cookie: admin.cookie })).body.next_cursor;
    for (const query of [
      `action=token.revoked&cursor=${first}`,
      `${filters}&actor=${owner.id}&cursor=${first}`,
      `${filters}&from=2026-01-01&cursor=${first}`,
      `cursor=${first}`,
      `action=token.revoked&cursor=${unfiltered}`,
    ]) {
      const reply = await call('GET', `/security-log?${query}`, { cookie: admin.cookie });
      expect([query, reply.status, reply.body]).toEqual([
        query,
        400,
        { error: { type: 'invalid_param', message: otherList, param: 'cursor' } },
      ]);
    }
    // The unfiltered log's cursor goes on without filters, as it did before they existed.
    const next = await call('GET', `/security-log?cursor=${unfiltered}`, { cookie: admin.cookie });
    expect(idsOf(next)).toEqual(['e6', 'e5', 'e4', 'e3', 'e2', 'e1']);
  });
});
