import { describe, expect, it } from '@jest/globals';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

describe('several worker replicas', () => {
  it('dispatch each event once per endpoint and deliver each delivery once', async () => {
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
    for (const endpoint of [first, second]) {
      const received = receiver.requestsTo(endpoint.path).map((request) => request.body.data.reactivation_id);
      expect(received).toHaveLength(1000);
      expect(new Set(received).size).toBe(1000);
    }
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
