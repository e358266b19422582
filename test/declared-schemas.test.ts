import { describe, expect, it } from '@jest/globals';
import { compileDeclaredSchemas } from '@retention/core';
import { withUnconnectedApp } from '../services/api/test/unconnected-app.js';
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
    // The API declares its routes' query schemas as it builds its routes.
    await withUnconnectedApp(() => undefined);
    // The event types' payloads, the fixture file, the domain's inputs, the routes' queries: each
    // compiled without a word from ajv, which is strict (an unknown keyword is refused).
    expect(compileDeclaredSchemas()).toBeGreaterThan(40); // 43 when this was written
  });
});
