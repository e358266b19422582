import { describe, expect, it } from '@jest/globals';
import { AUTO_DISABLE_AFTER_FAILURES, disableEndpoint, enableEndpoint, recoverDeliveries } from '@retention/domain';
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
      retrying: 0,
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

  // A skipped line takes an attempt number of its own. The next real attempt must take the one
  // after it: when it took the same number its attempt could not be recorded (the log's
  // (delivery, attempt) key), its lease ran out, and the sweeper sent it a second time.
  describe('a skipped delivery, recovered, is sent once more and numbered after its skip', () => {
    /**
     * One event to an endpoint that fails it once, turned off by `turnOff` (after which the
     * receiver answers 200), then turned on and recovered: exactly one more request, and the
     * log reads failed, skipped, succeeded.
     */
    async function expectOneSendAfterSkip(
      path: string,
      turnOff: (endpointId: string) => Promise<void>,
      beforeWorker: (endpointId: string) => Promise<void> = async () => {},
    ): Promise<void> {
      const { db, receiver, workspace } = world.current;
      let healthy = false;
      const endpoint = await world.current.createEndpoint(path, {
        behaviour: () => ({ kind: 'status', status: healthy ? 200 : 500 }),
      });
      await beforeWorker(endpoint.id);
      await world.current.startWorker({
        env: { WEBHOOK_RETRY_DELAYS: '1h' },
        options: { sweepEveryMs: 200, sweepGraceMs: 100 },
      });
      const since = new Date(Date.now() - 1000);
      await world.current.record([numberedEvent(workspace)]);
      await turnOff(endpoint.id);

      healthy = true;
      await enableEndpoint(db, { id: endpoint.id, actor_id: workspace.ownerId });
      expect(await recoverDeliveries(db, { endpoint_id: endpoint.id, actor_id: workspace.ownerId, since })).toEqual({
        requeued: 1,
        retrying: 0,
      });
      await eventually(
        async () =>
          (await db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'succeeded' })).length === 1,
        15_000,
      );
      // Longer than a lease and a sweep: a second send would have come by now.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(receiver.requestsTo(endpoint.path)).toHaveLength(2);
      const attempts = await db('webhook_attempts').where({ endpoint_id: endpoint.id }).orderBy('attempt');
      expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([
        [1, 'failed'],
        [2, 'skipped'],
        [3, 'succeeded'],
      ]);
    }

    it('skipped by turning the endpoint off by hand', async () => {
      const { db, workspace } = world.current;
      await expectOneSendAfterSkip('/recover-skipped', async (endpointId) => {
        // Its retry waits an hour: turning the endpoint off skips it.
        await eventually(async () => (await db('webhook_attempts').where({ endpoint_id: endpointId })).length === 1);
        await disableEndpoint(db, { id: endpointId, actor_id: workspace.ownerId });
      });
    });

    it('skipped because its own failure turned the endpoint off', async () => {
      const { db } = world.current;
      await expectOneSendAfterSkip(
        '/recover-auto-disabled',
        // The failure turns it off and skips the delivery's retry.
        async (endpointId) => {
          await eventually(
            async () =>
              (await db('webhook_deliveries').where({ endpoint_id: endpointId, status: 'skipped' })).length === 1,
          );
        },
        // One failure short of turning it off: the next failure does.
        async (endpointId) => {
          await db('webhook_endpoints')
            .where({ id: endpointId })
            .update({ failure_count: AUTO_DISABLE_AFTER_FAILURES - 1 });
        },
      );
    });
  });
});
