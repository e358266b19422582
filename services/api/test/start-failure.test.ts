import { describe, expect, it } from '@jest/globals';
import {
  LEFT_OPEN,
  redisKeyPrefix,
  reportOpenAtExit,
  runId,
  startService,
  TEST_REDIS_URL,
  useTakenPort,
  useTestDatabase,
} from '@retention/testkit';

/**
 * An API whose start fails after it opened PostgreSQL and Redis closes everything it opened
 * and ends by itself, exit code 1, naming the problem (runServiceStart, which the worker's
 * start shares). A connection left open would keep it running until a guard ends it five
 * seconds later, saying so; and the process reports what it still had open as it exits
 * (reportOpenAtExit), which catches a leak that an early process.exit would hide.
 */

const database = useTestDatabase();

function startApi(env: Record<string, string>) {
  return startService('services/api/src/main.ts', {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-api-start-failure`,
    PORT: '0',
    API_INTERNAL_PORT: '0',
    ...reportOpenAtExit(),
    ...env,
  });
}

/** The exit code, once the process has ended; it must end soon after saying it failed. */
async function exitAfterFailure(api: ReturnType<typeof startApi>): Promise<number | null> {
  await api.waitFor(/api failed to start: /);
  const failed = Date.now();
  const code = await api.exited;
  expect(Date.now() - failed).toBeLessThan(3_000);
  return code;
}

describe('an API whose start fails', () => {
  const taken = useTakenPort();

  it('on a setting refused while the app is built (a throw, after Postgres and Redis opened), closes them and exits 1 naming it', async () => {
    // A password pasted into SMTP_URL as it is: the dashboard's mailer cannot decode it.
    const api = startApi({ SMTP_URL: 'smtp://alerts:50%off@mail.example.com:587' });
    expect(await exitAfterFailure(api)).toBe(1);
    expect(api.output()).toContain('api failed to start: Invalid SMTP_URL: ');
    expect(api.output()).toContain('not percent-encoded');
    expect(api.output()).not.toContain('50%off');
    expect(api.output()).not.toMatch(LEFT_OPEN);
    expect(api.output()).not.toMatch(/\n\s+at /);
  });

  it('when PORT is taken, closes all it opened and exits 1 naming PORT', async () => {
    const port = taken.port;
    const api = startApi({ PORT: String(port) });
    expect(await exitAfterFailure(api)).toBe(1);
    expect(api.output()).toContain(`api failed to start: cannot listen on PORT ${port}`);
    expect(api.output()).not.toMatch(LEFT_OPEN);
  });

  it('when API_INTERNAL_PORT is taken (the public port already listening), closes both and exits 1 naming it', async () => {
    const port = taken.port;
    const api = startApi({ API_INTERNAL_PORT: String(port) });
    expect(await exitAfterFailure(api)).toBe(1);
    expect(api.output()).toContain(`api failed to start: cannot listen on API_INTERNAL_PORT ${port}`);
    expect(api.output()).not.toMatch(LEFT_OPEN);
  });
});
