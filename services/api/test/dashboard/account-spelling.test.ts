import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createWorkspace } from '@retention/domain';
import { useApi } from '../harness.js';
import { dashboardClient, makeUser, PASSWORD } from './support.js';

const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('the spelling of an account email', () => {
  it('refuses a non-ASCII spelling that PostgreSQL would lower to the account (İ), as a wrong password', async () => {
    const workspace = await createWorkspace(api.current.db, { name: 'Spelling' });
    const email = `owner-${randomUUID().slice(0, 8)}@northwind.example`;
    await makeUser(api.current.db, workspace.id, 'owner', email);
    // PostgreSQL's lower('İ') is 'i'; JavaScript's 'İ'.toLowerCase() is 'i̇': it had limits of its own.
    const dotted = email.replace('northwind', 'northwİnd');
    const wrong = await call('POST', '/session', { body: { email, password: 'not the password' } });
    const refused = await call('POST', '/session', { body: { email: dotted, password: PASSWORD } });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(wrong.body);
    // Upper-case ASCII is the same account, as before.
    expect((await call('POST', '/session', { body: { email: email.toUpperCase(), password: PASSWORD } })).status).toBe(
      200,
    );
  });
});
