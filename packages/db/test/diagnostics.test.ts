import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createDb, databaseSetupProblem, describeConnectionFailure, isConnectionError } from '@retention/db';
import { createEmptyDatabase, databaseUrl, TEST_POSTGRES_URL } from '@retention/testkit';

/** The error a first query through a fresh pool fails with. */
async function failureOf(url: string): Promise<unknown> {
  const db = createDb(url, { poolMax: 1 });
  try {
    await db('workspaces').select('id').first();
  } catch (error) {
    return error;
  } finally {
    await db.destroy();
  }
  throw new Error(`expected ${url} to fail`);
}

/** pg's own SCRAM client: the error it throws when the server wants a password and none was given. */
const sasl = createRequire(import.meta.url)('pg/lib/crypto/sasl.js') as {
  continueSession: (session: object, password: unknown, serverData: string) => Promise<void>;
};

function saslWithoutPassword(password: unknown): Promise<unknown> {
  const session = { message: 'SASLInitialResponse', clientNonce: 'nonce' };
  return sasl.continueSession(session, password, 'r=nonce,s=c2FsdA==,i=4096').catch((error: unknown) => error);
}

function withUser(url: string, user: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = '';
  return parsed.toString();
}

describe('database setup problems', () => {
  it('names a missing database and says how to create it', async () => {
    const url = databaseUrl('retention_no_such_database');
    const error = await failureOf(url);
    expect(databaseSetupProblem(error)).toBe('missing_database');
    expect(isConnectionError(error)).toBe(false);
    const message = describeConnectionFailure('PostgreSQL', url, error);
    expect(message).toContain('database "retention_no_such_database" does not exist');
    expect(message).toContain('`npm run migrate`');
  });

  it('takes an unknown role, a wrong password and a missing password for a login problem, with both fixes', async () => {
    const unknownRole = await failureOf(withUser(TEST_POSTGRES_URL, 'retention_no_such_role'));
    const wrongPassword = Object.assign(
      new pg.DatabaseError('password authentication failed for user "ann"', 0, 'error'),
      { code: '28P01' },
    );
    for (const error of [
      unknownRole,
      wrongPassword,
      await saslWithoutPassword(undefined),
      await saslWithoutPassword(''),
    ]) {
      expect(databaseSetupProblem(error)).toBe('authentication');
      const message = describeConnectionFailure('PostgreSQL', 'postgres://ann:secret@db.example:5432/retention', error);
      expect(message).toContain('refused the login');
      expect(message).toContain('sudo -u postgres createuser -s $USER');
      expect(message).toContain('set DATABASE_URL with a user and password');
      expect(message).not.toContain('secret');
    }
    expect(describeConnectionFailure('PostgreSQL', undefined, unknownRole)).toContain(
      'role "retention_no_such_role" does not exist',
    );
  });

  it('with NODE_ENV=production, gives no laptop advice (createuser, npm start) for a login refused or a database missing', () => {
    const production = { NODE_ENV: 'production' };
    const refused = Object.assign(new pg.DatabaseError('password authentication failed for user "ann"', 0, 'error'), {
      code: '28P01',
    });
    const login = describeConnectionFailure(
      'PostgreSQL',
      'postgres://ann:secret@db.example:5432/x',
      refused,
      production,
    );
    expect(login).toBe(
      'PostgreSQL at postgres://ann:***@db.example:5432/x refused the login (password authentication failed for user "ann"); check the user and password of DATABASE_URL.',
    );
    const missing = Object.assign(new pg.DatabaseError('database "x" does not exist', 0, 'error'), { code: '3D000' });
    const absent = describeConnectionFailure('PostgreSQL', 'postgres://db.example:5432/x', missing, production);
    expect(absent).toContain('create and migrate it with `npm run migrate`.');
    expect(absent).not.toContain('npm start');
    expect(describeConnectionFailure('PostgreSQL', 'postgres://db.example:5432/x', missing, {})).toContain(
      '(`npm start` does both by itself)',
    );
  });

  it('takes a missing table for an unmigrated database, without the SQL of the query', async () => {
    const database = await createEmptyDatabase();
    try {
      const error = await failureOf(database.url);
      expect(databaseSetupProblem(error)).toBe('not_migrated');
      const message = describeConnectionFailure('PostgreSQL', database.url, error);
      expect(message).toContain('is not migrated (relation "workspaces" does not exist)');
      expect(message).toContain('`npm run migrate`');
      expect(message).not.toMatch(/select/i);
    } finally {
      await database.drop();
    }
  });

  it('leaves other query errors alone', () => {
    const error = Object.assign(new pg.DatabaseError('division by zero', 0, 'error'), { code: '22012' });
    expect(databaseSetupProblem(error)).toBeNull();
    expect(describeConnectionFailure('PostgreSQL', undefined, error)).toBe('division by zero');
  });
});
