import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createDb, dropDatabase, MIGRATIONS } from '@retention/db';
import { databaseNamePrefix, databaseUrl, runId, startService } from '@retention/testkit';

/**
 * Two `npm run migrate` at once on a database that does not exist yet (two deploy jobs, or a
 * compose `migrate` beside a person's): one of them creates it, the other finds it created
 * "at the same moment", and both bring it to the latest schema under knex's migration lock.
 * Before, the second failed with `duplicate key value violates unique constraint
 * "pg_database_datname_index"` (exit 1).
 */
describe('two migrate runs at once on a database that does not exist yet', () => {
  it('both exit 0, one having created it, and the schema is whole', async () => {
    for (let round = 0; round < 3; round += 1) {
      const url = databaseUrl(`${databaseNamePrefix(runId())}${randomBytes(4).toString('hex')}`);
      try {
        const runs = [0, 1].map(() =>
          startService('packages/db/src/migrate-cli.ts', { DATABASE_URL: url, NODE_ENV: 'production' }),
        );
        const codes = await Promise.all(runs.map((run) => run.exited));
        const outputs = runs.map((run) => run.output());
        // The exit code with what the run said, so that a failure shows why.
        expect(codes.map((code, index) => `${code}: ${outputs[index]!.trim()}`)).toEqual([
          expect.stringMatching(/^0: /),
          expect.stringMatching(/^0: /),
        ]);
        const reports = outputs.map((output) => JSON.parse(output.trim().split('\n').at(-1)!) as Record<string, any>);
        expect(reports.filter((report) => report.created_database)).toHaveLength(1);
        // Between them, every migration applied once.
        expect(reports.flatMap((report) => report.applied as string[]).sort()).toEqual(
          MIGRATIONS.map((migration) => migration.name).sort(),
        );
        const db = createDb(url, { poolMax: 1 });
        try {
          expect(await db('knex_migrations').count({ n: '*' })).toEqual([{ n: MIGRATIONS.length }]);
        } finally {
          await db.destroy();
        }
      } finally {
        await dropDatabase(url);
      }
    }
  }, 120_000);
});
