import { describe, expect, it } from '@jest/globals';
import { createEmptyDatabase, freePort, redisKeyPrefix, runId, startService, TEST_REDIS_URL } from '@retention/testkit';

/** `npm start` as a newcomer runs it: the script itself, on a database that does not exist yet. */
function environment(databaseUrl: string, port: number): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-start`,
    PORT: String(port),
    WORKER_PORT: String(port + 1),
    BASE_URL: `http://127.0.0.1:${port}`,
  };
}

describe('npm start', () => {
  it('migrates, seeds the demo on the first start only, and prints a token and a curl line that work', async () => {
    const database = await createEmptyDatabase();
    try {
      const port = await freePort();
      const first = startService('scripts/start.ts', environment(database.url, port));
      try {
        await first.waitFor(/Stop it with Ctrl-C/, 60_000);
        const token = /API token \(shown this once\): (sk_live_\w+)/.exec(first.output())?.[1];
        expect(token).toBeDefined();
        const curl = /Try it: {2}(curl .*)/.exec(first.output())?.[1] ?? '';
        const url = /'(http[^']+)'/.exec(curl)?.[1];
        expect(curl).toContain(`Authorization: Bearer ${token}`);
        const response = await fetch(url!, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { data: Array<{ status: string }> };
        expect(body.data.length).toBeGreaterThan(0);
        expect(body.data.every((campaign) => campaign.status === 'in_flight')).toBe(true);
      } finally {
        expect(await first.stop('SIGTERM')).toBe(0);
      }

      const second = startService('scripts/start.ts', environment(database.url, port));
      try {
        await second.waitFor(/Stop it with Ctrl-C/, 60_000);
        expect(second.output()).toContain('0 migration(s) applied');
        expect(second.output()).toMatch(/already exists; demo data is seeded on the first start only/);
        expect(second.output()).not.toMatch(/sk_live_/);
      } finally {
        expect(await second.stop('SIGINT')).toBe(0);
      }
      expect(await database.db('workspaces').select('id')).toHaveLength(1);
    } finally {
      await database.drop();
    }
  });

  it('names the backing service it cannot reach and how to start it, without a stack trace', async () => {
    const database = await createEmptyDatabase();
    try {
      const start = startService('scripts/start.ts', {
        ...environment(database.url, await freePort()),
        REDIS_URL: 'redis://127.0.0.1:1',
      });
      expect(await start.exited).toBe(1);
      expect(start.output()).toContain('cannot reach Redis at redis://127.0.0.1:1');
      expect(start.output()).toContain('up -d postgres redis');
      expect(start.output()).not.toMatch(/\n\s+at /);
    } finally {
      await database.drop();
    }
  });
});
