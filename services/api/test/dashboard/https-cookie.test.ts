import { describe, expect, it } from '@jest/globals';
import { createDb } from '@retention/db';
import { useApiInstance } from '../api-instance.js';
import { dashboardClient, makeUser } from './support.js';
import { createWorkspace } from '@retention/domain';

/** Behind https, the session and device cookies are Secure and __Host- prefixed; the Origin is BASE_URL's. */
const instance = useApiInstance({ baseUrl: 'https://dash.example.com' });

describe('the session cookie over https', () => {
  it('is named __Host-retention_session and is Secure, HttpOnly, SameSite=Lax, Path=/', async () => {
    const db = createDb(instance.database.url, { poolMax: 1 });
    try {
      const workspace = await createWorkspace(db, { name: 'Https' });
      const user = await makeUser(db, workspace.id, 'owner');
      const call = dashboardClient(instance.api.url);
      const refused = await call('POST', '/session', {
        body: { email: user.email, password: 'correct horse battery staple' },
      });
      expect(refused.status).toBe(403);
      const reply = await call('POST', '/session', {
        origin: 'https://dash.example.com',
        body: { email: user.email, password: 'correct horse battery staple' },
      });
      expect(reply.status).toBe(200);
      const cookie = reply.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^__Host-retention_session=[A-Za-z0-9_-]{43}; /);
      for (const flag of ['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/']) expect(cookie).toContain(flag);
      expect(cookie).not.toMatch(/Domain=/i);
      const me = await call('GET', '/me', { cookie: cookie.split(';')[0], origin: null });
      expect(me.status).toBe(200);
      // The device cookie (trusted-devices.ts) has the same flags, and lasts 90 days.
      const device = reply.headers.getSetCookie().find((header) => header.startsWith('__Host-retention_device='))!;
      expect(device).toMatch(/^__Host-retention_device=[A-Za-z0-9_-]{43}; /);
      for (const flag of ['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/', `Max-Age=${90 * 24 * 3600}`])
        expect(device).toContain(flag);
      expect(device).not.toMatch(/Domain=/i);
    } finally {
      await db.destroy();
    }
  });
});
