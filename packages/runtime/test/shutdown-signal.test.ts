import { describe, expect, it } from '@jest/globals';
import { startService } from '@retention/testkit';

const FIXTURE = 'packages/runtime/test/fixtures/shutdown-with-broken-logger.ts';

describe('onShutdownSignal', () => {
  it('exits 0 on SIGTERM even when every log call throws', async () => {
    const child = startService(FIXTURE, {});
    await child.waitFor(/ready/);
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  });

  it('exits 1 when stopping fails, even when every log call throws', async () => {
    const child = startService(FIXTURE, { STOP_FAILS: '1' });
    await child.waitFor(/ready/);
    child.child.kill('SIGTERM');
    expect(await child.exited).toBe(1);
  });
});
