import { describe, expect, it } from '@jest/globals';
import { recoverDeliveries } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

describe('Retry failed since…', () => {
  it('a real worker sends each recovered delivery once more, and they succeed', async () => {
    const { db, receiver, workspace } = world.current;
    let healthy = false;
    const endpoint = await world.current.createEndpoint('/recover', {
      behaviour: () => ({ kind: 'status', status: healthy ? 200 : 500 }),
    });
    await world.current.startWorker({
      env: { WEBHOOK_RETRY_DELAYS: '30ms' },
      options: { sweepEveryMs: 200, sweepGraceMs: 100 },
    });
    const since = new Date(Date.now() - 1000);
    await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    await eventually(
      async () => (await db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'failed' })).length === 2,
    );
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(4);

    healthy = true;
    expect(await recoverDeliveries(db, { endpoint_id: endpoint.id, actor_id: workspace.ownerId, since })).toEqual({
      requeued: 2,
    });
    await eventually(
      async () =>
        (await db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'succeeded' })).length === 2,
      15_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requestsTo(endpoint.path)).toHaveLength(6);
    const attempts = await db('webhook_attempts')
      .where({ endpoint_id: endpoint.id })
      .orderBy(['delivery_id', 'attempt']);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'succeeded'],
      [1, 'failed'],
      [2, 'failed'],
      [3, 'succeeded'],
    ]);
    expect(receiver.problems()).toEqual([]);
  });
});
