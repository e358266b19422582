import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Every state-changing route against the three refusals that must hold everywhere: a forged
 * cross-site request, a role the table does not allow, and another workspace's id. Each is
 * refused with the JSON error shape, and the security log shows that nothing changed.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

type Route = [method: string, path: string, body?: unknown];

async function world() {
  const mine = await team(api.current.db, call, 'Mine');
  const theirs = await team(api.current.db, call, 'Theirs');
  const ids = async (side: typeof mine) => {
    const token = await call('POST', '/tokens', { cookie: side.owner.cookie, body: { name: 't' } });
    const endpoint = await call('POST', '/webhooks', {
      cookie: side.owner.cookie,
      body: { name: 'e', url: 'https://e.invalid/' },
    });
    const invitation = await call('POST', '/team/invitations', {
      cookie: side.owner.cookie,
      body: { email: `i-${side.workspace.id.slice(0, 6)}@example.com`, role: 'member' },
    });
    const [event] = await api.current
      .db('events')
      .insert({ workspace_id: side.workspace.id, type: 'recovery.opened', data: {} })
      .returning('id');
    const [delivery] = await api.current
      .db('webhook_deliveries')
      .insert({
        workspace_id: side.workspace.id,
        endpoint_id: endpoint.body.id,
        event_id: event.id,
        event_type: 'recovery.opened',
        status: 'failed',
        attempt_count: 1,
        completed_at: new Date(),
      })
      .returning('id');
    return {
      token: token.body.id as string,
      endpoint: endpoint.body.id as string,
      invitation: invitation.body.invitation.id as string,
      delivery: delivery.id as string,
      member: side.member.id,
      admin: side.admin.id,
    };
  };
  return { mine, theirs, my: await ids(mine), their: await ids(theirs) };
}

function adminRoutes(ids: {
  token: string;
  endpoint: string;
  invitation: string;
  delivery: string;
  member: string;
}): Route[] {
  return [
    ['POST', '/tokens', { name: 'x' }],
    ['POST', `/tokens/${ids.token}/revoke`],
    ['POST', '/webhooks', { name: 'x', url: 'https://x.invalid/' }],
    ['PATCH', `/webhooks/${ids.endpoint}`, { name: 'x' }],
    ['DELETE', `/webhooks/${ids.endpoint}`],
    ['POST', `/webhooks/${ids.endpoint}/enable`],
    ['POST', `/webhooks/${ids.endpoint}/disable`],
    ['POST', `/webhooks/${ids.endpoint}/test`],
    ['POST', `/webhooks/${ids.endpoint}/roll-secret`, { overlap_seconds: 60 }],
    ['POST', `/webhooks/${ids.endpoint}/end-overlap`],
    ['POST', `/webhooks/${ids.endpoint}/recover`, { since: new Date(Date.now() - 60_000).toISOString() }],
    ['POST', `/webhooks/${ids.endpoint}/dismiss-alert`],
    ['POST', `/deliveries/${ids.delivery}/resend`],
    ['POST', '/team/invitations', { email: 'y@example.com', role: 'member' }],
    ['POST', `/team/invitations/${ids.invitation}/new-link`],
    ['DELETE', `/team/invitations/${ids.invitation}`],
    ['PATCH', `/team/members/${ids.member}`, { role: 'admin' }],
    ['DELETE', `/team/members/${ids.member}`],
    ['POST', `/team/members/${ids.member}/reset-link`],
  ];
}

const securityLogSize = async () => Number((await api.current.db('security_events').count('* as n'))[0]!.n);

describe('every state-changing route', () => {
  it('refuses a member (403), an admin on owner routes (403), and a request without our Origin (403)', async () => {
    const { mine, my } = await world();
    const before = await securityLogSize();
    for (const [method, path, body] of adminRoutes(my)) {
      const reply = await call(method, path, { cookie: mine.member.cookie, ...(body !== undefined && { body }) });
      expect([method, path, reply.status, reply.body?.error?.type]).toEqual([method, path, 403, 'forbidden']);
    }
    for (const [method, path, body] of [['PATCH', '/workspace', { name: 'x' }]] as Route[]) {
      const reply = await call(method, path, { cookie: mine.admin.cookie, body });
      expect([method, path, reply.status]).toEqual([method, path, 403]);
    }
    const everyRoute: Route[] = [
      ...adminRoutes(my),
      ['PATCH', '/workspace', { name: 'x' }],
      ['PATCH', '/account', { name: 'x' }],
      ['POST', '/account/password', { current_password: 'x', new_password: 'y' }],
      ['POST', '/account/sign-out-everywhere'],
      ['DELETE', '/session'],
    ];
    for (const origin of [null, 'https://evil.example']) {
      for (const [method, path, body] of everyRoute) {
        const reply = await call(method, path, {
          cookie: mine.owner.cookie,
          origin,
          ...(body !== undefined && { body }),
        });
        expect([method, path, reply.status]).toEqual([method, path, 403]);
      }
    }
    expect(await securityLogSize()).toBe(before);
    expect((await call('GET', '/me', { cookie: mine.owner.cookie })).status).toBe(200);
  });

  it('says "see" to an admin who only reads an owner’s page, and "change" to one who changes it', async () => {
    const { admin } = await team(api.current.db, call, 'Reads');
    const read = await call('GET', '/processor', { cookie: admin.cookie });
    expect([read.status, read.body.error]).toEqual([
      403,
      { type: 'forbidden', message: 'Only owners can see the payment processor connection.' },
    ]);
    const change = await call('POST', '/processor/disconnect', { cookie: admin.cookie, body: {} });
    expect([change.status, change.body.error?.message]).toEqual([
      403,
      'Only owners can change the payment processor connection.',
    ]);
  });

  it('tells a member a route is not theirs (403) before anything about the body they sent', async () => {
    const { mine, my } = await world();
    const before = await securityLogSize();
    const unreadable = [
      { rawBody: '{"name":' },
      { rawBody: '[1, 2]' },
      { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    ];
    for (const [method, path] of adminRoutes(my)) {
      for (const body of unreadable) {
        const reply = await call(method, path, { cookie: mine.member.cookie, ...body });
        expect([method, path, body.rawBody, reply.status, reply.body?.error?.type]).toEqual([
          method,
          path,
          body.rawBody,
          403,
          'forbidden',
        ]);
      }
    }
    // An admin on an owner's route, likewise; and no session at all is asked to sign in first.
    const adminOnWorkspace = await call('PATCH', '/workspace', { cookie: mine.admin.cookie, rawBody: '{"name":' });
    expect([adminOnWorkspace.status, adminOnWorkspace.body.error.type]).toEqual([403, 'forbidden']);
    const signedOut = await call('PATCH', '/account', { rawBody: '{"name":' });
    expect([signedOut.status, signedOut.body.error.type]).toEqual([401, 'authentication_required']);
    // The cap is not weakened: a body over 64 KB is refused before it is read, whoever sends it.
    const huge = await call('POST', '/tokens', { cookie: mine.member.cookie, body: { name: 'x'.repeat(70_000) } });
    expect([huge.status, huge.body.error.type]).toEqual([413, 'payload_too_large']);
    // Whoever may use the route still gets the documented 400, whether the route reads a body or not.
    for (const [method, path] of [...adminRoutes(my), ['PATCH', '/workspace'], ['DELETE', '/session']] as Route[]) {
      const reply = await call(method, path, { cookie: mine.owner.cookie, rawBody: '{"name":' });
      expect([method, path, reply.status, reply.body]).toEqual([
        method,
        path,
        400,
        { error: { type: 'invalid_param', message: 'The request body is not valid JSON.' } },
      ]);
    }
    expect(await securityLogSize()).toBe(before);
    expect((await call('GET', '/me', { cookie: mine.owner.cookie })).status).toBe(200);
  });

  it("answers 404 for another workspace's ids, and changes nothing there", async () => {
    const { mine, their } = await world();
    const before = await securityLogSize();
    for (const [method, path, body] of adminRoutes(their).filter(([, path]) => /[0-9a-f]{8}-/.test(path))) {
      const reply = await call(method, path, { cookie: mine.owner.cookie, ...(body !== undefined && { body }) });
      expect([method, path, reply.status, reply.body?.error?.type]).toEqual([method, path, 404, 'not_found']);
    }
    expect(await securityLogSize()).toBe(before);
  });
});
