import type { EventEmitter } from 'node:events';
import type { Queue } from 'bullmq';
import type { Db } from '@retention/db';
import { Counter, Gauge, Histogram, LATENCY_BUCKETS_SECONDS, type Logger, type Registry } from '@retention/runtime';
import type { DeliveryEvents } from './delivery/delivery-processor.js';
import type { DeliveryJobData } from './queues.js';

export interface WorkerMetricsSources {
  registry: Registry;
  /** The worker's attempt reports, as they happen. */
  events: EventEmitter<DeliveryEvents>;
  deliveryQueue: Queue<DeliveryJobData>;
  db: Db;
  logger: Logger;
}

const QUEUE_STATES = ['waiting', 'delayed', 'active'] as const;

/**
 * The worker's Prometheus series. Counters follow this process's attempts; the queue depth
 * and the outbox lag are read when scraped, so they describe the whole installation (every
 * replica reports the same values: aggregate them with max, not sum).
 */
export function registerWorkerMetrics({ registry, events, deliveryQueue, db, logger }: WorkerMetricsSources): void {
  const registers = [registry];
  const attempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this process, by outcome',
    labelNames: ['outcome'],
    registers,
  });
  const attemptSeconds = new Histogram({
    name: 'webhook_delivery_attempt_duration_seconds',
    help: 'Duration of one webhook delivery attempt, request and response',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const autoDisabled = new Counter({
    name: 'webhook_endpoints_auto_disabled_total',
    help: 'Endpoints this process disabled after consecutive failed deliveries',
    registers,
  });
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help:
      'Webhook deliveries this process brought to a final state, by outcome: succeeded, failed ' +
      '(every attempt used) or skipped (the endpoint was disabled)',
    labelNames: ['outcome'],
    registers,
  });
  for (const outcome of ['succeeded', 'failed']) attempts.labels(outcome).inc(0);
  for (const outcome of ['succeeded', 'failed', 'skipped']) deliveries.labels(outcome).inc(0);

  events.on('attempt', ({ result, endpointDisabled }) => {
    const outcome = result.succeeded ? 'succeeded' : 'failed';
    attempts.labels(outcome).inc();
    attemptSeconds.labels(outcome).observe(result.durationMs / 1000);
    if (endpointDisabled) autoDisabled.inc();
  });
  events.on('ended', ({ outcome, count }) => deliveries.labels(outcome).inc(count));

  // A scrape must answer even while Redis or Postgres is away: the gauge then keeps its last value.
  const unreadable = (what: string, error: unknown) =>
    logger.warn({ err: error }, `metrics: could not read ${what}; the gauge keeps its last value`);

  new Gauge({
    name: 'webhook_delivery_queue_jobs',
    help: 'Delivery jobs in the queue, by state',
    labelNames: ['state'],
    registers,
    async collect() {
      try {
        const counts = await deliveryQueue.getJobCounts(...QUEUE_STATES);
        for (const state of QUEUE_STATES) this.labels(state).set(counts[state] ?? 0);
      } catch (error) {
        unreadable('the queue depth', error);
      }
    },
  });

  // Redis holds only the jobs released to run now; the backlog is in Postgres (docs/delivery-scheduler.md).
  new Gauge({
    name: 'webhook_delivery_backlog',
    help: 'Pending deliveries waiting in Postgres for their endpoint to have room (due) or for their retry (later)',
    labelNames: ['state'],
    registers,
    async collect() {
      try {
        const { rows } = await db.raw<{ rows: Array<{ due: number; later: number }> }>(
          `SELECT count(*) FILTER (WHERE next_attempt_at <= now())::int AS due,
                  count(*) FILTER (WHERE next_attempt_at > now())::int AS later
             FROM webhook_deliveries WHERE status = 'pending' AND queued_at IS NULL`,
        );
        this.labels('due').set(rows[0]?.due ?? 0);
        this.labels('later').set(rows[0]?.later ?? 0);
      } catch (error) {
        unreadable('the delivery backlog', error);
      }
    },
  });

  new Gauge({
    name: 'webhook_outbox_lag_seconds',
    help: 'Age of the oldest event not yet turned into deliveries (0 when none waits)',
    registers,
    async collect() {
      try {
        // How long the head of the outbox has waited since it was recorded (its row's
        // `recorded_at`, migration 0020): not the event's `created_at`, which for a processor's
        // event is when it happened at the processor, possibly days before we learnt of it. A
        // row whose event was deleted since (its workspace's) still waits for a dispatcher.
        const { rows } = await db.raw<{ rows: Array<{ lag: number }> }>(
          `SELECT extract(epoch FROM now() - recorded_at)::float8 AS lag
             FROM event_outbox ORDER BY seq LIMIT 1`,
        );
        this.set(Math.max(0, rows[0]?.lag ?? 0));
      } catch (error) {
        unreadable('the outbox lag', error);
      }
    },
  });

  // The payment processor's inbox (docs/processor.md): events waiting to apply, and parked ones
  // (each needs a person: alert on parked > 0), and how long the oldest due one has waited.
  new Gauge({
    name: 'processor_events',
    help: 'Stored payment-processor events by state: pending (to apply) or parked (gave up, see processor status)',
    labelNames: ['state'],
    registers,
    async collect() {
      try {
        const counts: Array<{ state: string; count: number }> = await db('processor_events')
          .whereIn('state', ['pending', 'parked'])
          .groupBy('state')
          .select('state', db.raw('count(*)::int AS count'));
        for (const state of ['pending', 'parked']) {
          this.labels(state).set(counts.find((row) => row.state === state)?.count ?? 0);
        }
      } catch (error) {
        unreadable('the processor events', error);
      }
    },
  });
  new Gauge({
    name: 'processor_inbox_lag_seconds',
    help: 'How long the oldest due payment-processor event has waited to be applied (0 when none waits)',
    registers,
    async collect() {
      try {
        const oldest = await db('processor_events')
          .where({ state: 'pending' })
          .where('next_attempt_at', '<=', db.fn.now())
          .orderBy('next_attempt_at')
          .first<{ lag: number } | undefined>(db.raw('extract(epoch FROM now() - next_attempt_at)::float8 AS lag'));
        this.set(Math.max(0, oldest?.lag ?? 0));
      } catch (error) {
        unreadable('the processor inbox lag', error);
      }
    },
  });
}
