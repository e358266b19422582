import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createReceiverResolver, listDeliveryLog, type DeliveryLogEntry } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { DnsServer } from './support/dns-server.js';
import { numberedEvent, useWorld, type TestEndpoint } from './support/world.js';

const world = useWorld();
let dns: DnsServer;

beforeAll(async () => {
  dns = await DnsServer.start();
});

afterAll(async () => {
  await dns.close();
});

/** What the owner reads for a name whose servers never answer: it may work later. */
const DEAD_NAME_MESSAGE = expect.stringMatching(
  /^dead-\d+\.test could not be resolved: its name servers gave no answer; check the host name, or try again later$/,
);

async function logOf(endpoint: { id: string }, count: number, timeoutMs = 20_000): Promise<DeliveryLogEntry[]> {
  return eventually(async () => {
    const log = await listDeliveryLog(world.current.db, endpoint.id);
    return log.length >= count ? log : null;
  }, timeoutMs);
}

describe('resolving receivers with our own resolver', () => {
  it('delivers to healthy receivers on time beside 20 receivers whose name servers never answer', async () => {
    for (let index = 1; index <= 20; index += 1) dns.neverAnswer(`dead-${index}.test`);
    for (let index = 1; index <= 4; index += 1) dns.addA(`healthy-${index}.test`, '127.0.0.1', 60);
    // The dead receivers in two workspaces of their own (a workspace holds at most 16 endpoints),
    // which record the same events: one worker delivers for every workspace.
    const deadWorkspaces = [await world.current.addWorkspace(), await world.current.addWorkspace()];
    const dead: TestEndpoint[] = [];
    for (let index = 1; index <= 20; index += 1) {
      dead.push(
        await world.current.createEndpoint(
          `/dead-${index}`,
          { behaviour: { kind: 'status', status: 200 } },
          {
            host: `dead-${index}.test`,
            workspace: deadWorkspaces[index % 2],
          },
        ),
      );
    }
    const healthy: TestEndpoint[] = [];
    for (let index = 1; index <= 4; index += 1) {
      healthy.push(
        await world.current.createEndpoint(
          `/healthy-${index}`,
          { behaviour: { kind: 'status', status: 200 } },
          {
            host: `healthy-${index}.test`,
          },
        ),
      );
    }
    const running = await world.current.startWorker({
      // A receiver's timeout well above its answers: this test is about names, not a loaded machine.
      env: { WEBHOOK_DNS_SERVERS: dns.address, WEBHOOK_RETRY_DELAYS: '10m', WEBHOOK_TIMEOUT_MS: '5000' },
    });
    // Nine: a tenth failure would disable the dead endpoints, which is beside the point here.
    const events = 9;
    const started = Date.now();
    for (const workspace of [world.current.workspace, ...deadWorkspaces])
      await world.current.record(
        Array.from({ length: events }, () => numberedEvent(workspace)),
        workspace.id,
      );

    const healthyLogs = await Promise.all(healthy.map((endpoint) => logOf(endpoint, events)));
    const healthyDoneMs = Date.now() - started;
    for (const log of healthyLogs) {
      // The error too, so that a failure here says why.
      expect(log.map((entry) => `${entry.outcome} ${entry.error ?? ''}`.trim())).toEqual(
        Array(events).fill('succeeded'),
      );
    }
    // The silent names' failures take a resolver deadline each (a remembered failure aside), in
    // waves: on a loaded machine they were not all recorded within 20 s. Not what this test times.
    const deadLogs = await Promise.all(dead.map((endpoint) => logOf(endpoint, events, 60_000)));
    const allDoneMs = Date.now() - started;
    for (const log of deadLogs) {
      for (const entry of log) {
        expect(entry).toMatchObject({ outcome: 'failed', http_status: null, error: DEAD_NAME_MESSAGE });
      }
    }
    // About 0.5 s alone; bounded loosely for a loaded machine (the old pool queued them for minutes).
    expect(healthyDoneMs).toBeLessThan(5_000);
    // Answers are cached for their TTL: one A question per healthy name for nine deliveries ...
    for (let index = 1; index <= 4; index += 1) expect(dns.queriesFor(`healthy-${index}.test`)).toBeLessThanOrEqual(2);
    // ... and a dead name's failure is remembered for a moment: not one look-up per delivery
    // (nine look-ups of eight questions each, 72, without it). One look-up asks eight questions;
    // two are allowed: 180 dead deliveries run in waves of 50 (slow endpoints get half the worker's
    // concurrency), a name's nine may straddle two, and on a loaded machine the second
    // wave can start after the first wave's failure has been forgotten (5 s).
    for (let index = 1; index <= 20; index += 1) expect(dns.queriesFor(`dead-${index}.test`)).toBeLessThanOrEqual(16);
    // The worker's log keeps why, for the operator.
    const reasons = new Set(
      running
        .logs()
        .map((line) => line.dns_error)
        .filter(Boolean),
    );
    expect([...reasons]).toEqual(['ETIMEOUT']);
    console.log(
      `DNS isolation: ${healthy.length * events} healthy deliveries done ${healthyDoneMs} ms after recording, ` +
        `beside ${dead.length * events} to silent names (all recorded after ${allDoneMs} ms)`,
    );
  }, 90_000);

  it('resolves a name whose quick name server misses a few questions, within the deadline', async () => {
    // Quick answers first, as a busy worker has had: c-ares then shortens its waits.
    dns.addA('hiccup.test', '127.0.0.1', 60);
    dns.dropFirst('hiccup.test', 2);
    const resolver = createReceiverResolver({ servers: [dns.address] });
    for (let index = 0; index < 5; index += 1) {
      dns.addA(`warm-up-${index}.test`, '127.0.0.1', 60);
      await resolver.resolve(`warm-up-${index}.test`);
    }
    const started = Date.now();
    await expect(resolver.resolve('hiccup.test')).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    // Answered on the third try of each question, not after the deadline.
    expect(dns.queriesFor('hiccup.test')).toBe(6);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('starts the receiver’s timeout only once its name is resolved', async () => {
    dns.addA('healthy-5.test', '127.0.0.1', 60, 700);
    const endpoint = await world.current.createEndpoint(
      '/slow-dns',
      { behaviour: { kind: 'status', status: 200, delayMs: 600 } },
      { host: 'healthy-5.test' },
    );
    await world.current.startWorker({
      env: { WEBHOOK_DNS_SERVERS: dns.address, WEBHOOK_RETRY_DELAYS: '10m', WEBHOOK_TIMEOUT_MS: '1000' },
    });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    // 700 ms waiting for our resolver plus 600 ms of the receiver's: over the 1 s timeout in
    // all, within it for the receiver.
    expect(entry).toMatchObject({ outcome: 'succeeded', http_status: 200 });
    expect(entry!.duration_ms).toBeGreaterThanOrEqual(590);
    expect(entry!.duration_ms).toBeLessThan(1_000);
  });

  it('fails a name that does not exist saying so, apart from a name that points inside', async () => {
    const endpoint = await world.current.createEndpoint(
      '/nxdomain',
      { behaviour: { kind: 'status', status: 200 } },
      { host: 'no-such-name.test' },
    );
    await world.current.startWorker({ env: { WEBHOOK_DNS_SERVERS: dns.address, WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({
      outcome: 'failed',
      http_status: null,
      error:
        'refused: no-such-name.test does not resolve to a public address; check the host name ' +
        '(receivers must be on the public internet)',
    });
  });
});
