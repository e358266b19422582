import { describe, expect, it } from '@jest/globals';
import { recordEvent } from '@retention/domain';
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

const series = (name: string, outcome: string) => `${name}{outcome="${outcome}",service="worker"}`;

describe('worker metrics', () => {
  it('count attempts and deliveries by outcome, time attempts, count auto-disables, and read the outbox lag', async () => {
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
    // Its tenth attempt was the delivery's last: one delivery failed for good.
    const deliveries = (text: string, outcome: string) => sample(text, series('webhook_deliveries_total', outcome));
    expect([deliveries(page, 'succeeded'), deliveries(page, 'failed'), deliveries(page, 'skipped')]).toEqual([1, 1, 0]);
    expect(sample(page, 'webhook_outbox_lag_seconds{service="worker"}')).toBe(0);
    expect(await db('webhook_endpoints').where({ id: broken.id }).first()).toMatchObject({ enabled: false });
    expect(await db('webhook_endpoints').where({ id: healthy.id }).first()).toMatchObject({ enabled: true });

    // An endpoint one failure from the limit gets two events: the first failure disables it,
    // and neither delivery is tried again: both are skipped. The endpoint disabled above, still
    // off, gets each event's delivery made skipped by the dispatcher: two more.
    const nearlyDead = await world.current.createEndpoint('/metrics-nearly-dead', {
      behaviour: { kind: 'status', status: 503 },
    });
    await db('webhook_endpoints').where({ id: nearlyDead.id }).update({ failure_count: 9 });
    await world.current.record([numberedEvent(workspace), numberedEvent(workspace)]);
    const later = await eventually(async () => {
      const text = (await renderMetrics(registry)).body;
      return deliveries(text, 'skipped') === 4 && deliveries(text, 'succeeded') === 3 ? text : null;
    });
    expect(deliveries(later, 'failed')).toBe(1);
    expect(sample(later, 'webhook_endpoints_auto_disabled_total{service="worker"}')).toBe(2);

    // With no worker dispatching, an event waits in the outbox and the time since it was
    // recorded shows as lag, with an outbox row whose event was deleted since (its workspace's,
    // say) at the head, and behind it an event that happened two days before it was recorded
    // (a processor's late event): it has waited a second, not two days.
    await worker.handle.close();
    const [deleted] = await world.current.record([numberedEvent(workspace)]);
    const late = numberedEvent(workspace);
    await db.transaction((trx) =>
      recordEvent(trx, workspace.id, late.type, late.data, new Date(Date.now() - 2 * 86_400_000)),
    );
    await db('events').where({ id: deleted!.id }).delete();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const lag = sample((await renderMetrics(registry)).body, 'webhook_outbox_lag_seconds{service="worker"}');
    expect(lag).toBeGreaterThanOrEqual(1);
    expect(lag).toBeLessThan(30);
  });

  it('read the queue depth: jobs waiting and active, and the backlog, where retries wait', async () => {
    const { db, workspace } = world.current;
    await world.current.createEndpoint('/queue-slow', { behaviour: { kind: 'status', status: 200, delayMs: 300 } });
    await world.current.createEndpoint('/queue-failing', { behaviour: { kind: 'status', status: 500 } });
    // One attempt at a time, so the others queue up; a failed one waits 10 minutes to retry.
    const worker = await world.current.startWorker({
      env: { WEBHOOK_RETRY_DELAYS: '10m' },
      options: { concurrency: 1 },
    });
    const registry = createMetricsRegistry('worker');
    registerWorkerMetrics({
      registry,
      events: worker.handle.events,
      deliveryQueue: worker.handle.deliveryQueue,
      db,
      logger: createLogger('worker', 'silent'),
    });
    const depth = async () => {
      const text = (await renderMetrics(registry)).body;
      const of = (state: string) => sample(text, `webhook_delivery_queue_jobs{state="${state}",service="worker"}`);
      const backlog = (state: string) => sample(text, `webhook_delivery_backlog{state="${state}",service="worker"}`);
      return {
        waiting: of('waiting')!,
        delayed: of('delayed')!,
        active: of('active')!,
        due: backlog('due')!,
        later: backlog('later')!,
      };
    };

    await world.current.record([numberedEvent(workspace), numberedEvent(workspace), numberedEvent(workspace)]);
    const busy = await eventually(async () => {
      const seen = await depth();
      return seen.waiting > 0 && seen.active === 1 ? seen : null;
    });
    expect(busy.waiting + busy.delayed + busy.active).toBeLessThanOrEqual(6);
    // Once the three to the slow endpoint are delivered and the three failed ones wait in
    // Postgres for a retry in 10 minutes, Redis holds none of them.
    const settled = async () => {
      const seen = await depth();
      return seen.later === 3 && seen.due === 0 && seen.active === 0 ? seen : null;
    };
    expect(await eventually(settled, 15_000)).toEqual({
      waiting: 0,
      delayed: 0,
      active: 0,
      due: 0,
      later: 3,
    });
  });
});
