import { describe, expect, it } from '@jest/globals';
import { createLogger, createMetricsRegistry, renderMetrics } from '@retention/runtime';
import { eventually } from '@retention/testkit';
import { registerWorkerMetrics } from '../src/metrics.js';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

/** The value of one series in a Prometheus text page, or undefined when it is absent. */
function sample(page: string, series: string): number | undefined {
  const line = page.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('worker metrics', () => {
  it('count attempts by outcome, time them, count auto-disables, and read queue depth and outbox lag', async () => {
    const { db, workspace } = world.current;
    const healthy = await world.current.createEndpoint('/metrics-ok', { behaviour: { kind: 'status', status: 200 } });
    const broken = await world.current.createEndpoint('/metrics-broken', {
      behaviour: { kind: 'status', status: 500 },
    });
    const worker = await world.current.startWorker();
    const registry = createMetricsRegistry('worker');
    registerWorkerMetrics({
      registry,
      events: worker.handle.events,
      deliveryQueue: worker.handle.deliveryQueue,
      db,
      logger: createLogger('worker', 'silent'),
    });

    // One event reaches both endpoints: the broken one fails ten times and is disabled.
    await world.current.record([numberedEvent(workspace)]);
    const page = await eventually(async () => {
      const text = (await renderMetrics(registry)).body;
      return sample(text, 'webhook_endpoints_auto_disabled_total{service="worker"}') === 1 ? text : null;
    }, 20_000);
    expect(sample(page, 'webhook_delivery_attempts_total{outcome="succeeded",service="worker"}')).toBe(1);
    expect(sample(page, 'webhook_delivery_attempts_total{outcome="failed",service="worker"}')).toBe(10);
    expect(sample(page, 'webhook_delivery_attempt_duration_seconds_count{service="worker",outcome="failed"}')).toBe(10);
    for (const state of ['waiting', 'delayed', 'active']) {
      expect(sample(page, `webhook_delivery_queue_jobs{state="${state}",service="worker"}`)).toEqual(
        expect.any(Number),
      );
    }
    expect(sample(page, 'webhook_outbox_lag_seconds{service="worker"}')).toBe(0);
    expect(await db('webhook_endpoints').where({ id: broken.id }).first()).toMatchObject({ enabled: false });
    expect(await db('webhook_endpoints').where({ id: healthy.id }).first()).toMatchObject({ enabled: true });

    // With no worker dispatching, an event waits in the outbox and its age shows as lag.
    await worker.handle.close();
    await world.current.record([numberedEvent(workspace)]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const lag = sample((await renderMetrics(registry)).body, 'webhook_outbox_lag_seconds{service="worker"}');
    expect(lag).toBeGreaterThanOrEqual(1);
    expect(lag).toBeLessThan(30);
  });
});
