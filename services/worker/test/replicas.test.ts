import { describe, expect, it } from '@jest/globals';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

describe('several worker replicas', () => {
  it('dispatch each event once per endpoint and deliver each delivery once (at least once, one attempt at a time)', async () => {
    const { db, receiver, workspace } = world.current;
    const first = await world.current.createEndpoint('/replica-a', { behaviour: { kind: 'status', status: 200 } });
    const second = await world.current.createEndpoint('/replica-b', { behaviour: { kind: 'status', status: 200 } });
    const one = await world.current.startWorker({ options: { dispatchBatchSize: 50 } });
    const two = await world.current.startWorker({ options: { dispatchBatchSize: 50 }, prefix: one.prefix });

    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      const events = await world.current.record(Array.from({ length: 100 }, () => numberedEvent(workspace)));
      ids.push(...events.map((event) => event.id));
    }
    for (const endpoint of [first, second]) await receiver.waitForRequests(endpoint.path, 1000, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const [{ deliveries, distinct }] = await db('webhook_deliveries')
      .whereIn('event_id', ids)
      .select(
        db.raw('count(*)::int AS deliveries'),
        db.raw('count(DISTINCT (event_id, endpoint_id))::int AS distinct'),
      );
    expect({ deliveries, distinct }).toEqual({ deliveries: 2000, distinct: 2000 });
    // At least once, one attempt at a time: each event reached each endpoint, each delivery
    // succeeded exactly once, and an event that reached an endpoint twice had an attempt
    // recorded as failed in between (on a loaded machine a request the receiver has read can
    // still outlast the tests' 1 s timeout, and is retried as the contract says).
    const attempts = await db('webhook_attempts')
      .join('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .join('events', 'events.id', 'webhook_deliveries.event_id')
      .whereIn('webhook_deliveries.event_id', ids)
      .select(
        'webhook_attempts.endpoint_id',
        'webhook_attempts.outcome',
        db.raw("events.data->>'reactivation_id' AS reactivation_id"),
      );
    for (const endpoint of [first, second]) {
      const received = receiver.requestsTo(endpoint.path).map((request) => request.body.data.reactivation_id);
      expect(new Set(received).size).toBe(1000);
      const own = attempts.filter((attempt) => attempt.endpoint_id === endpoint.id);
      const succeeded = own.filter((attempt) => attempt.outcome === 'succeeded').map((a) => a.reactivation_id);
      expect(succeeded).toHaveLength(1000);
      expect(new Set(succeeded).size).toBe(1000);
      const retried = new Set(own.filter((attempt) => attempt.outcome === 'failed').map((a) => a.reactivation_id));
      const sentTwiceWithoutFailure = received.filter(
        (id, index) => received.indexOf(id) !== index && !retried.has(id),
      );
      expect(sentTwiceWithoutFailure).toEqual([]);
    }
    const { rows: overlapping } = await db.raw<{ rows: unknown[] }>(
      `SELECT delivery_id, attempt FROM (
         SELECT delivery_id, attempt, attempted_at,
                lag(attempted_at + duration_ms * interval '1 millisecond') OVER w AS previous_ended
           FROM webhook_attempts WHERE endpoint_id = ANY (?::uuid[])
         WINDOW w AS (PARTITION BY delivery_id ORDER BY attempt)) a
        WHERE attempted_at < previous_ended - interval '1 millisecond'`,
      [[first.id, second.id]],
    );
    expect(overlapping).toEqual([]);
    // Both replicas took part.
    const sentBy = (worker: typeof one) =>
      worker.logs().filter((line) => line.msg === 'delivery attempt succeeded').length;
    expect(sentBy(one)).toBeGreaterThan(0);
    expect(sentBy(two)).toBeGreaterThan(0);
    expect(sentBy(one) + sentBy(two)).toBe(2000);
    expect(receiver.problems()).toEqual([]);
    await eventually(async () => (await db('events').whereNull('dispatched_at')).length === 0);
  });
});
