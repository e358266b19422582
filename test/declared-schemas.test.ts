import { describe, expect, it } from '@jest/globals';
import { compileDeclaredSchemas, loadConfig } from '@retention/core';
import { createDb } from '@retention/db';
import { createLogger, createRedis } from '@retention/runtime';
import { testSecretsKey } from '@retention/testkit';
import { createApp } from '../services/api/src/app.js';
import '../services/cli/src/run.js';
import '../services/worker/src/worker.js';

/**
 * Each validator compiles its schema at its first use, not when its module loads
 * (packages/core/src/validation.ts): a schema ajv refuses would surface as a failed call in
 * production rather than a process that does not start. This compiles every schema the
 * API (its routes included), the worker and the operator CLI declare, as their first uses would.
 */
describe('the schemas the processes declare', () => {
  it('all compile', async () => {
    const redis = createRedis('redis://127.0.0.1:1', 'command', 'declared-schemas');
    redis.disconnect();
    const db = createDb('postgres://127.0.0.1:1/none');
    try {
      // The API declares its routes' query schemas as it builds its routes.
      createApp({
        config: loadConfig({ SECRETS_KEY: testSecretsKey() }),
        db,
        redis,
        logger: createLogger('api', 'silent'),
      });
    } finally {
      await db.destroy();
    }
    // The event types' payloads, the fixture file, the domain's inputs, the routes' queries: each
    // compiled without a word from ajv, which is strict (an unknown keyword is refused).
    expect(compileDeclaredSchemas()).toBeGreaterThan(40); // 43 when this was written
  });
});
