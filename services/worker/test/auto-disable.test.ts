import { describe, expect, it } from '@jest/globals';
import { getEndpoint, listDeliveryLog, enableEndpoint, disableEndpoint } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

async function attemptsOf(endpointId: string) {
  return world.current.db('webhook_attempts').where({ endpoint_id: endpointId }).orderBy('attempted_at');
}

describe('consecutive failures', () => {
  it('disables the endpoint at exactly 10, skips its pending retries, and re-enabling clears the count', async () => {
    const { db, receiver, workspace } = world.current;
    let healthy = false;
    const endpoint = await world.current.createEndpoint('/dies', {
      behaviour: () => ({ kind: 'status', status: healthy ? 200 : 500 }),
    });
    // One attempt at a time, and more attempts per delivery than it takes to disable.
    const worker = await world.current.startWorker({
      env: { WEBHOOK_RETRY_DELAYS: Array(12).fill('30ms').join(',') },
      options: { maxInFlightPerEndpoint: 1 },
    });
    const events = await world.current.record([
      numberedEvent(workspace),
      numberedEvent(workspace),
      numberedEvent(workspace),
    ]);

    const disabled = await eventually(async () => {
      const current = await getEndpoint(db, endpoint.id);
      return current.enabled ? null : current;
    });
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'consecutive_failures', failure_count: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(10);
    expect((await getEndpoint(db, endpoint.id)).failure_count).toBe(10);

    const attempts = await attemptsOf(endpoint.id);
    expect(attempts.filter((attempt) => attempt.outcome === 'failed')).toHaveLength(10);
    const skipped = attempts.filter((attempt) => attempt.outcome === 'skipped');
    expect(skipped).toHaveLength(3);
    expect(skipped.every((attempt) => /^skipped: the endpoint/.test(attempt.error))).toBe(true);
    const deliveries = await db('webhook_deliveries').whereIn(
      'event_id',
      events.map((event) => event.id),
    );
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(worker.logs().some((line) => /endpoint disabled after consecutive failures/.test(line.msg))).toBe(true);

    // Turned back on: the count is cleared and new events flow; the skipped ones stay skipped.
    healthy = true;
    const enabled = await enableEndpoint(db, { id: endpoint.id, actor_id: workspace.adminId });
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, failure_count: 0 });
    const [fresh] = await world.current.record([numberedEvent(workspace)]);
    const requests = await receiver.waitForRequests(endpoint.path, 11);
    expect(requests[10]!.body.data).toEqual(fresh!.data);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(11);
    expect(receiver.problems()).toEqual([]);
  });

  it('with many attempts in flight, disables at exactly 10; late failures and a late success leave the count at 10', async () => {
    const { db, receiver, workspace } = world.current;
    // The second request answers 200 well after the endpoint has been disabled; every other
    // one fails quickly, up to 10 at a time (once the first has shown the worker a quick
    // receiver: until then it sends one at a time).
    const endpoint = await world.current.createEndpoint('/dies-in-parallel', {
      behaviour: (_request, index) =>
        index === 1 ? { kind: 'status', status: 200, delayMs: 1_500 } : { kind: 'status', status: 500, delayMs: 100 },
    });
    const worker = await world.current.startWorker({
      env: { WEBHOOK_RETRY_DELAYS: '10m', WEBHOOK_TIMEOUT_MS: '3000' },
      options: { maxInFlightPerEndpoint: 10 },
    });
    await world.current.record(Array.from({ length: 40 }, () => numberedEvent(workspace)));

    // Every attempt that reached the receiver is recorded, the late success last of all.
    const attempts = await eventually(async () => {
      const recorded = (await attemptsOf(endpoint.id)).filter((attempt) => attempt.outcome !== 'skipped');
      const sent = receiver.requestsTo(endpoint.path).length;
      return sent > 0 && recorded.length === sent && recorded.some((a) => a.outcome === 'succeeded') ? recorded : null;
    });
    const failed = attempts.filter((attempt) => attempt.outcome === 'failed');
    // Attempts really overlapped, and more failed than the 10 that disabled the endpoint.
    expect(receiver.peakInFlight(endpoint.path)).toBeGreaterThan(2);
    expect(failed.length).toBeGreaterThan(10);
    expect(attempts.filter((attempt) => attempt.outcome === 'succeeded')).toHaveLength(1);

    const row = await db('webhook_endpoints').where({ id: endpoint.id }).first();
    expect(row).toMatchObject({ enabled: false, disabled_reason: 'consecutive_failures', failure_count: 10 });
    // A late result still shows in the timestamps; only the count stands still.
    expect(row.last_success_at).toBeInstanceOf(Date);
    expect(row.last_failure_at).toBeInstanceOf(Date);
    expect(worker.logs().filter((line) => /endpoint disabled after consecutive failures/.test(line.msg))).toHaveLength(
      1,
    );
    // Nothing is left to send: every delivery was delivered, failed or skipped.
    const pending = await db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'pending' });
    expect(pending).toEqual([]);
  });

  it('skips the pending retries when an admin disables the endpoint, and sends new events once it is on again', async () => {
    const { db, receiver, workspace } = world.current;
    let healthy = false;
    const endpoint = await world.current.createEndpoint('/turned-off', {
      behaviour: () => ({ kind: 'status', status: healthy ? 200 : 502 }),
    });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    await eventually(async () => (await getEndpoint(db, endpoint.id)).failure_count === 2);

    const off = await disableEndpoint(db, { id: endpoint.id, actor_id: workspace.ownerId });
    expect(off).toMatchObject({ enabled: false, disabled_reason: 'manual', failure_count: 2 });
    const log = await listDeliveryLog(db, endpoint.id);
    expect(log.map((entry) => [entry.attempt, entry.outcome])).toEqual(
      expect.arrayContaining([
        [1, 'failed'],
        [2, 'skipped'],
      ]),
    );
    expect(log.filter((entry) => entry.outcome === 'skipped')).toHaveLength(2);
    expect(log.find((entry) => entry.outcome === 'skipped')!.error).toBe('skipped: the endpoint was disabled');

    healthy = true;
    expect(await enableEndpoint(db, { id: endpoint.id, actor_id: workspace.ownerId })).toMatchObject({
      failure_count: 0,
    });
    await world.current.record([numberedEvent(workspace)]);
    await receiver.waitForRequests(endpoint.path, 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.requestsTo(endpoint.path).map((request) => request.path)).toHaveLength(3);
  });
});
