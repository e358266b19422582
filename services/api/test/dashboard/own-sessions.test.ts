import { describe, expect, it } from '@jest/globals';
import { describeUserAgent } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, PASSWORD, sessionCookieOf, team } from './support.js';

const api = useApi({ trustProxy: true });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

async function signInFrom(email: string, userAgent: string, ip: string): Promise<string> {
  const reply = await call('POST', '/session', {
    body: { email, password: PASSWORD },
    headers: { 'user-agent': userAgent, 'x-forwarded-for': ip },
  });
  expect(reply.status).toBe(200);
  return sessionCookieOf(reply);
}

describe('the Account page’s own sessions', () => {
  it('lists only the user’s own live sessions, newest activity first, the asking one marked current, no cookie or hash', async () => {
    const { member, admin } = await team(api.current.db, call, 'Own sessions');
    const firefox = await signInFrom(member.email, FIREFOX_WINDOWS, '203.0.113.7');
    const safari = await signInFrom(member.email, SAFARI_IPHONE, '198.51.100.4');
    // One revoked and one expired: neither is listed.
    const gone = await signInFrom(member.email, FIREFOX_WINDOWS, '203.0.113.8');
    const expired = await signInFrom(member.email, FIREFOX_WINDOWS, '203.0.113.9');
    expect((await call('DELETE', '/session', { cookie: gone })).status).toBe(204);
    const rows = await api.current.db('user_sessions').where({ user_id: member.id }).orderBy('created_at');
    await api.current
      .db('user_sessions')
      .where({ id: rows.at(-1).id })
      .update({ idle_expires_at: new Date(Date.now() - 1000) });
    expect((await call('GET', '/me', { cookie: expired })).status).toBe(401);
    // Activity: the Safari session asks (its request is its latest activity), Firefox was used
    // 30 s ago, the first an hour ago, though created first.
    const [firefoxRow, safariRow] = [rows[1], rows[2]];
    await api.current
      .db('user_sessions')
      .where({ id: rows[0].id })
      .update({ last_seen_at: new Date(Date.now() - 3_600_000) });
    await api.current
      .db('user_sessions')
      .where({ id: firefoxRow.id })
      .update({ last_seen_at: new Date(Date.now() - 30_000) });
    await api.current
      .db('user_sessions')
      .where({ id: safariRow.id })
      .update({ last_seen_at: new Date(Date.now() - 600_000) });

    const reply = await call('GET', '/account/sessions', { cookie: safari });
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((row: { id: string }) => row.id)).toEqual([safariRow.id, firefoxRow.id, rows[0].id]);
    expect(reply.body.data[1]).toEqual({
      object: 'session',
      id: firefoxRow.id,
      created_at: firefoxRow.created_at.toISOString(),
      last_seen_at: expect.any(String),
      device: 'Firefox on Windows',
      ip_address: '203.0.113.7',
      current: false,
    });
    expect(reply.body.data[0]).toMatchObject({ device: 'Safari on iOS', ip_address: '198.51.100.4', current: true });
    expect(reply.body.data.filter((row: { current: boolean }) => row.current)).toHaveLength(1);
    for (const row of rows) expect(reply.text).not.toContain(row.token_hash);
    for (const cookie of [firefox, safari]) expect(reply.text).not.toContain(cookie.split('=')[1]);
    // Another user sees only theirs.
    const theirs = await call('GET', '/account/sessions', { cookie: admin.cookie });
    expect(theirs.body.data).toHaveLength(1);
    expect(theirs.body.data[0]).toMatchObject({ current: true });
    expect((await call('GET', '/account/sessions')).status).toBe(401);
  });

  it('signs out one other session: its very next request is refused, though this process cached it, and the log says so', async () => {
    const { member } = await team(api.current.db, call, 'Revoke one');
    const other = await signInFrom(member.email, FIREFOX_WINDOWS, '203.0.113.7');
    // Cached now (session-cache.ts): the next request would be served from the cache.
    expect((await call('GET', '/me', { cookie: other })).status).toBe(200);
    expect((await call('GET', '/me', { cookie: other })).status).toBe(200);
    const list = await call('GET', '/account/sessions', { cookie: member.cookie });
    const target = list.body.data.find((row: { current: boolean }) => !row.current);
    expect(target.device).toBe('Firefox on Windows');

    const revoked = await call('POST', `/account/sessions/${target.id}/revoke`, { cookie: member.cookie });
    expect(revoked.status).toBe(204);
    const next = await call('GET', '/me', { cookie: other });
    expect(next.status).toBe(401);
    expect(next.body.error.type).toBe('authentication_required');
    // This one goes on, and the list no longer has the other.
    const after = await call('GET', '/account/sessions', { cookie: member.cookie });
    expect(after.status).toBe(200);
    expect(after.body.data.map((row: { id: string }) => row.id)).not.toContain(target.id);

    const [entry] = await api.current
      .db('security_events')
      .where({ action: 'account.session_revoked' })
      .where('actor_user_id', member.id);
    expect(entry).toMatchObject({
      target_type: 'user',
      target_id: member.id,
      target_label: member.email,
      details: { session_id: target.id, device: 'Firefox on Windows', ip_address: '203.0.113.7' },
    });
    // Once ended, it is no longer there to sign out.
    expect((await call('POST', `/account/sessions/${target.id}/revoke`, { cookie: member.cookie })).status).toBe(404);
  });

  it('answers 404 for another user’s session, as for an unknown id, and ends nothing', async () => {
    const { member, admin } = await team(api.current.db, call, 'Not yours');
    const theirs = await call('GET', '/account/sessions', { cookie: admin.cookie });
    const theirId = theirs.body.data[0].id;
    for (const id of [theirId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const reply = await call('POST', `/account/sessions/${id}/revoke`, { cookie: member.cookie });
      expect([id, reply.status, reply.body.error.type]).toEqual([id, 404, 'not_found']);
    }
    expect((await call('GET', '/me', { cookie: admin.cookie })).status).toBe(200);
    const logged = await api.current
      .db('security_events')
      .where({ action: 'account.session_revoked', actor_user_id: member.id });
    expect(logged).toHaveLength(0);
  });

  it('refuses to sign out the current session, pointing to Sign out, and refuses without our Origin', async () => {
    const { member } = await team(api.current.db, call, 'Current');
    const other = await signInFrom(member.email, FIREFOX_WINDOWS, '203.0.113.7');
    const list = await call('GET', '/account/sessions', { cookie: member.cookie });
    const current = list.body.data.find((row: { current: boolean }) => row.current);
    const refused = await call('POST', `/account/sessions/${current.id}/revoke`, { cookie: member.cookie });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      type: 'conflict',
      message: 'This is the session you are using now: to end it, use Sign out.',
    });
    expect((await call('GET', '/me', { cookie: member.cookie })).status).toBe(200);

    const otherId = list.body.data.find((row: { current: boolean }) => !row.current).id;
    for (const origin of [null, 'https://evil.example']) {
      const reply = await call('POST', `/account/sessions/${otherId}/revoke`, { cookie: member.cookie, origin });
      expect(reply.status).toBe(403);
    }
    expect((await call('GET', '/me', { cookie: other })).status).toBe(200);
  });
  it('records the address the request came from when X-Forwarded-For holds no address, and still signs in', async () => {
    const { member } = await team(api.current.db, call, 'Junk address');
    for (const junk of ['not-an-address', '203.0.113.300', "1.2.3.4'; --"]) {
      await signInFrom(member.email, FIREFOX_WINDOWS, junk);
    }
    // The team's own sign-in, with no X-Forwarded-For, and the three.
    const rows = await api.current.db('user_sessions').where({ user_id: member.id }).select('ip_address');
    expect(rows.map((row: { ip_address: string }) => row.ip_address)).toEqual(
      Array(4).fill(expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$|^::1$/)),
    );
  });
});

describe('describeUserAgent', () => {
  it('names the browser and system in a few words', () => {
    expect(describeUserAgent(FIREFOX_WINDOWS)).toBe('Firefox on Windows');
    expect(describeUserAgent(SAFARI_IPHONE)).toBe('Safari on iOS');
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      ),
    ).toBe('Chrome on macOS');
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      ),
    ).toBe('Microsoft Edge on Windows'); // Bowser's name for it; "Edge" before the parser
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      ),
    ).toBe('Chrome on Android');
    expect(describeUserAgent('curl/8.5.0')).toBe('Unknown device');
    expect(describeUserAgent(null)).toBe('Unknown device');
    expect(describeUserAgent('')).toBe('Unknown device');
  });

  it('reads the reduced headers, which name the system and nothing finer', () => {
    // Chrome on Windows 11 says Windows NT 10.0; Chrome on any Android says "Android 10; K".
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
      ),
    ).toBe('Chrome on Windows');
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36',
      ),
    ).toBe('Chrome on Android');
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36',
      ),
    ).toBe('Samsung Internet on Android'); // Bowser's "Samsung Internet for Android", the system said once
    expect(
      describeUserAgent(
        'Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/142.0.7444.46 Mobile/15E148 Safari/604.1',
      ),
    ).toBe('Chrome on iOS');
  });

  it('names browsers the former hand-written rules took for Chrome or missed', () => {
    expect(
      describeUserAgent(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Vivaldi/7.0.3495.18',
      ),
    ).toBe('Vivaldi on Windows');
    expect(describeUserAgent('Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko')).toBe(
      'Internet Explorer on Windows',
    );
  });
});
