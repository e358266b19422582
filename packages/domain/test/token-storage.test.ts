import { describe, expect, it } from '@jest/globals';
import { createToken, createWorkspace, loadFixtures, revokeToken, setTokenRateLimit } from '@retention/domain';
import { useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';

const database = useTestDatabase();

/** Every row of every table in the database, as text. */
async function everyRowAsText(): Promise<string> {
  const { db } = database.current;
  const { rows: tables } = await db.raw<{ rows: Array<{ tablename: string }> }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
  );
  const dumps: string[] = [];
  for (const { tablename } of tables) {
    const { rows } = await db.raw<{ rows: Array<{ row: string }> }>(
      `SELECT t::text AS row FROM ${db.client.wrapIdentifier(tablename)} t`,
    );
    dumps.push(...rows.map((row) => row.row));
  }
  return dumps.join('\n');
}

describe('API tokens at rest', () => {
  it('are never stored in plaintext, whether minted one by one or by a fixture load', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Vault' });
    const minted = [
      await createToken(db, { workspace_id: workspace.id, name: 'one' }),
      await createToken(db, { workspace_id: workspace.id, name: 'two' }),
    ];
    let announced = 0;
    const announce = () => {
      announced += 1;
      return Promise.resolve();
    };
    await setTokenRateLimit(db, { id: minted[0]!.id, rate_limit_per_minute: 120 }, { announce });
    await revokeToken(db, { id: minted[1]!.id }, { announce });
    expect(announced).toBe(2);
    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [{ tokens: [{ key: 'a' }, { key: 'b', revoked: true }] }],
    });
    const values = [
      ...minted.map((token) => token.token),
      ...Object.values(loaded.workspaces['0']!.tokens).map((token) => token.token),
    ];

    const dump = await everyRowAsText();
    expect(dump.length).toBeGreaterThan(0);
    for (const value of values) {
      // Neither the whole value nor its random part, minus the four-character hint.
      expect(dump).not.toContain(value);
      expect(dump).not.toContain(value.slice('sk_live_'.length, -4));
    }
    const [stored] = await db('api_tokens').where({ id: minted[0]!.id }).select('token_hash', 'token_hint');
    expect(stored).toEqual({
      token_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      token_hint: minted[0]!.token.slice(-4),
    });
  });
});
