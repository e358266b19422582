import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, deviceCookieOf, PASSWORD, sessionCookieOf, team } from './support.js';

const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('secrets in the API log', () => {
  it('logs no password, session or device value, token, signing secret or one-time link of the dashboard flows', async () => {
    const { owner, member } = await team(api.current.db, call, 'Logs');
    const secrets: string[] = [PASSWORD, owner.cookie.split('=')[1]!];
    const invited = await call('POST', '/team/invitations', {
      cookie: owner.cookie,
      body: { email: 'logged@example.com', role: 'member' },
    });
    const inviteToken = invited.body.invite_url.split('/').at(-1);
    // Its tail too: a path that escapes its first character must not log the rest.
    secrets.push(inviteToken, inviteToken.slice(1));
    await call('GET', `/invitations/${inviteToken}`);
    // Express routes paths whatever their case: the token is masked whatever it too.
    const shouted = await fetch(`${api.current.url}/DASHBOARD/API/Invitations/${inviteToken}`);
    expect(shouted.status).toBe(200);
    // A link pasted into a wrong address carries the same token: masked too, served or not; so
    // does one re-escaped on its way.
    for (const path of [
      `//api/invitations/${inviteToken}/accept`,
      `/dashboard//invite/${inviteToken}`,
      `/dashboard/%69nvite/${inviteToken}`,
      `/dashboard/invite%2F${inviteToken}`,
      `/dashboard/api/invitations;x/${inviteToken}`,
      `/dashboard/api/Invitations/%${inviteToken.charCodeAt(0).toString(16)}${inviteToken.slice(1)}`,
    ])
      await fetch(`${api.current.url}${path}`);
    const accepted = await call('POST', `/invitations/${inviteToken}/accept`, {
      body: { name: 'Logged', password: 'a logged-in password' },
    });
    secrets.push('a logged-in password', sessionCookieOf(accepted).split('=')[1]!);
    const device = deviceCookieOf(accepted);
    await call('POST', '/session', {
      body: { email: 'logged@example.com', password: 'a wrong password here' },
      cookie: device,
    });
    secrets.push('a wrong password here', device.split('=')[1]!);
    const token = await call('POST', '/tokens', { cookie: owner.cookie, body: { name: 'logged' } });
    secrets.push(token.body.token);
    const endpoint = await call('POST', '/webhooks', {
      cookie: owner.cookie,
      body: { name: 'L', url: 'https://logged.invalid/' },
    });
    secrets.push(endpoint.body.secret);
    const rolled = await call('POST', `/webhooks/${endpoint.body.id}/roll-secret`, { cookie: owner.cookie });
    secrets.push(rolled.body.secret);
    const reset = await call('POST', `/team/members/${member.id}/reset-link`, { cookie: owner.cookie });
    const resetToken = reset.body.reset_url.split('/').at(-1);
    secrets.push(resetToken);
    await call('POST', `/password-reset/${resetToken}`, { body: { password: 'the reset one here' } });
    secrets.push('the reset one here');

    const log = JSON.stringify(api.current.logs());
    expect(log).toContain('/dashboard/api/invitations/[redacted]');
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});
