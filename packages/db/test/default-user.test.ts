import { userInfo } from 'node:os';
import { afterEach, describe, expect, it } from '@jest/globals';
import { createDb, defaultDatabaseUser } from '@retention/db';
import { TEST_POSTGRES_URL } from '@retention/testkit';

/**
 * DATABASE_URL's default names no user. node-postgres then falls back to PGUSER and USER only;
 * with both unset (containers, some CI) it sent no user and the server answered "no PostgreSQL
 * user name specified". Like libpq, we fall back to the operating system's login name.
 */
describe('the user of a DATABASE_URL that names none', () => {
  const saved = { USER: process.env.USER, PGUSER: process.env.PGUSER };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('is PGUSER, else USER, else the login name; none is added when the URL names one', () => {
    const login = userInfo().username;
    expect(defaultDatabaseUser('postgres://localhost:5432/retention', {})).toBe(login);
    expect(defaultDatabaseUser('postgres://localhost:5432/retention', { USER: 'alice' })).toBe('alice');
    expect(defaultDatabaseUser('postgres://localhost:5432/retention', { USER: 'alice', PGUSER: 'bob' })).toBe('bob');
    expect(defaultDatabaseUser('postgres://carol:pw@localhost:5432/retention', {})).toBeUndefined();
  });

  it('reaches the server as the login name with USER and PGUSER unset', async () => {
    delete process.env.USER;
    delete process.env.PGUSER;
    const url = new URL(TEST_POSTGRES_URL);
    url.username = '';
    url.password = '';
    const db = createDb(url.toString(), { poolMax: 1 });
    try {
      const outcome = await db.raw<{ rows: Array<{ user: string }> }>('SELECT current_user AS user').then(
        (result) => ({ user: result.rows[0]!.user, error: '' }),
        (error: unknown) => ({ user: '', error: error instanceof Error ? error.message : String(error) }),
      );
      // Trust authentication lets the login in if such a role exists; otherwise the server's
      // refusal names it. Either way a user name was sent, which is what used to fail.
      expect(outcome.error).not.toMatch(/no PostgreSQL user name specified/);
      if (outcome.error) expect(outcome.error).toContain(`"${userInfo().username}"`);
      else expect(outcome.user).toBe(userInfo().username);
    } finally {
      await db.destroy();
    }
  });
});
