import { describe, expect, it } from '@jest/globals';
import { disableEndpoint, enableEndpoint, listDeliveryLog, recoverDeliveries } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

/**
 * An event recorded while a subscribed endpoint is off is not sent, and not lost either: its
 * delivery is made already skipped (one `skipped` line, nothing sent), turning the endpoint on
 * sends new events only, and "Retry failed since…" sends each of the old ones once.
 */
describe('events recorded while an endpoint is off', () => {
  it('are skipped deliveries, not sent when it is turned on, and sent once each by Retry failed since…', async () => {
    const { db, receiver, workspace } = world.current;
    const off = await world.current.createEndpoint('/off', { behaviour: () => ({ kind: 'status', status: 200 }) });
    const on = await world.current.createEndpoint('/on', { behaviour: () => ({ kind: 'status', status: 200 }) });
    await world.current.startWorker({ options: { sweepEveryMs: 200, sweepGraceMs: 100 } });
    await disableEndpoint(db, { id: off.id, actor_id: workspace.ownerId });
    const since = new Date(Date.now() - 1000);

    const old = await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    // The endpoint that is on gets them: the dispatcher has taken them.
    await receiver.waitForRequests(on.path, 2);
    const skipped = await eventually(async () => {
      const rows = await db('webhook_deliveries').where({ endpoint_id: off.id }).orderBy('event_seq');
      return rows.length === 2 ? rows : null;
    });
    expect(skipped.map((row) => [row.event_id, row.status, row.attempt_count, row.next_attempt_at])).toEqual(
      old.map((event) => [event.id, 'skipped', 1, null]),
    );
    expect(skipped.every((row) => row.completed_at instanceof Date && row.queued_at === null)).toBe(true);
    const log = await listDeliveryLog(db, off.id);
    // One line each; lines of one dispatch batch share their time, so their order is not asserted.
    const byEvent = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    expect(
      log.map((entry) => [entry.event_id, entry.attempt, entry.outcome, entry.next_attempt_at]).sort(byEvent),
    ).toEqual(old.map((event) => [event.id, 1, 'skipped', null]).sort(byEvent));
    expect(log.every((entry) => entry.error === 'skipped: the endpoint was off when this event was recorded')).toBe(
      true,
    );

    // Turned on: a new event is sent; the two recorded while it was off are not.
    await enableEndpoint(db, { id: off.id, actor_id: workspace.ownerId });
    const [fresh] = await world.current.record([numberedEvent(workspace)]);
    const requests = await receiver.waitForRequests(off.path, 1);
    expect(requests[0]!.body.data).toEqual(fresh!.data);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiver.requestsTo(off.path)).toHaveLength(1);

    // Retry failed since…: each of the two is sent once, numbered after its skipped line.
    expect(await recoverDeliveries(db, { endpoint_id: off.id, actor_id: workspace.ownerId, since })).toEqual({
      requeued: 2,
      retrying: 0,
    });
    await receiver.waitForRequests(off.path, 3);
    // Longer than a lease and a sweep: a second send would have come by now.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const sent = receiver.requestsTo(off.path).map((request) => request.body.data);
    expect(sent).toHaveLength(3);
    expect(sent.slice(1)).toEqual(expect.arrayContaining(old.map((event) => event.data)));
    const attempts = await db('webhook_attempts')
      .whereIn(
        'delivery_id',
        skipped.map((row) => row.id),
      )
      .orderBy(['delivery_id', 'attempt']);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
      [1, 'skipped'],
      [2, 'succeeded'],
      [1, 'skipped'],
      [2, 'succeeded'],
    ]);
    expect(receiver.requestsTo(on.path)).toHaveLength(3);
    expect(receiver.problems()).toEqual([]);
  });

  it('an endpoint made after the event was recorded gets no delivery of it, off or on', async () => {
    const { db, workspace } = world.current;
    await world.current.startWorker({});
    const [event] = await world.current.record([numberedEvent(workspace)]);
    const later = await world.current.createEndpoint('/later', { behaviour: () => ({ kind: 'status', status: 200 }) });
    await disableEndpoint(db, { id: later.id, actor_id: workspace.ownerId });
    const [next] = await world.current.record([numberedEvent(workspace)]);
    await eventually(async () => (await db('webhook_deliveries').where({ endpoint_id: later.id })).length === 1);
    const rows = await db('webhook_deliveries').where({ endpoint_id: later.id });
    expect(rows.map((row) => [row.event_id, row.status])).toEqual([[next!.id, 'skipped']]);
    expect(rows.some((row) => row.event_id === event!.id)).toBe(false);
  });
});
