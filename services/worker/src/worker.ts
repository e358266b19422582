import { EventEmitter } from 'node:events';
import { Queue, Worker } from 'bullmq';
import type { Config } from '@retention/core';
import { withoutStatement, type Db } from '@retention/db';
import {
  createWebhookSender,
  DNS_DEADLINE_MS,
  PROCESSOR_EVENTS_CHANNEL,
  webhookSenderOptions,
} from '@retention/domain';
import { createStripeEventApplier } from '@retention/processors';
import {
  createMailer,
  createRedis,
  OpenedResources,
  throttledWarn,
  waitForRedis,
  type Logger,
  type Redis,
} from '@retention/runtime';
import { emailOnAutoDisable } from './alerts.js';
import { createDeliveryProcessor, type DeliveryEvents } from './delivery/delivery-processor.js';
import { DeliveryBacklog } from './delivery/delivery-backlog.js';
import { DeliveryScheduler } from './delivery/delivery-scheduler.js';
import { DeliveryStore } from './delivery/delivery-store.js';
import { EndpointGate } from './delivery/endpoint-gate.js';
import { sweepLostDeliveries } from './delivery/sweeper.js';
import { OutboxDispatcher } from './dispatch/outbox-dispatcher.js';
import { OutboxListener } from './dispatch/outbox-listener.js';
import { BackfillRunner } from './processor/backfills.js';
import { KeyRejectionMail } from './processor/key-rejection-mail.js';
import { ProcessorEventApplier } from './processor/processor-events.js';
import { startPeriodicJobs, type PeriodicJob } from './periodic-jobs.js';
import { QUEUE_NAMES, type DeliveryJobData } from './queues.js';

/**
 * The delivery worker, composed from its parts but not started by itself: `main.ts` runs it
 * as a process, tests run it in their own process with their own database and Redis prefix.
 *
 *   outbox (Postgres) --LISTEN/poll--> dispatcher --> deliveries, the backlog (Postgres)
 *   scheduler --> releases due deliveries, as many per endpoint as it has room for --> jobs (Redis)
 *   job --> endpoint gate --> claim --> signed POST --> record --> done, auto-disable, or a retry
 *           back in the backlog --> slot freed: the scheduler releases the endpoint's next
 *   sweeper (periodic) --> re-enqueues released deliveries whose job Redis lost
 *   processor inbox (Postgres) --LISTEN/poll--> claim, apply through the domain, mark applied
 *           (one transaction)
 *   backfill runner --> one leased run at a time: Stripe's lists, item by item, cursor saved
 *           with each
 *   key-refusal email (with SMTP_URL) --poll--> takes the emails a refused Stripe key owes
 *           (Postgres) --> owners
 */

export interface WorkerOptions {
  /** Attempts in flight at once in this process. */
  concurrency?: number;
  /** Attempts in flight at once per endpoint in this process. */
  maxInFlightPerEndpoint?: number;
  /**
   * Attempts in flight at once to slow endpoints, all together (see EndpointGate); half the
   * concurrency by default.
   */
  maxSlowInFlight?: number;
  /**
   * Jobs keep two spares ahead while this process has at most this many attempts in flight
   * (a quarter of the concurrency by default) and their endpoint's attempts take less than
   * `twoSparesUnderMs` on average (100 ms by default); one otherwise
   * (docs/delivery-scheduler.md, "Spares").
   */
  twoSparesUpTo?: number;
  twoSparesUnderMs?: number;
  /** The safety-net poll of the outbox, beside LISTEN. */
  dispatchPollMs?: number;
  dispatchBatchSize?: number;
  /**
   * The longest between two looks at what is due in the backlog (retries are looked at when due).
   */
  schedulePollMs?: number;
  sweepEveryMs?: number;
  sweepGraceMs?: number;
  /** How often this replica checks that the periodic jobs' schedulers still exist. */
  scheduleCheckEveryMs?: number;
  /** More periodic jobs to run beside the sweeper (the stale-campaign job). */
  periodicJobs?: PeriodicJob[];
  /**
   * Trust this CA for receivers instead of the system's: tests only (see WebhookSenderOptions.ca).
   */
  receiverCa?: string | Buffer;
  /** Batches of processor events applied at once by this process. */
  processorEventConcurrency?: number;
  /**
   * Processor events of one connection claimed, applied and committed together (docs/processor.md).
   */
  processorEventBatchSize?: number;
  /**
   * The safety-net poll of the processor's inbox, beside LISTEN (also brings back-off retries due).
   */
  processorEventPollMs?: number;
  /**
   * A running backfill's lease, renewed every third of it; a dead worker's run is resumed after it
   * lapses.
   */
  backfillLeaseMs?: number;
  backfillCheckEveryMs?: number;
  /**
   * How often this process looks for key-refusal emails owed to workspaces' owners (with SMTP_URL).
   */
  keyRejectionMailPollMs?: number;
}

export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  options?: WorkerOptions;
}

export interface WorkerHandle {
  /** Every recorded attempt, as it happens. */
  events: EventEmitter<DeliveryEvents>;
  deliveryQueue: Queue<DeliveryJobData>;
  /** Runs one sweep now (the periodic job does this on its own); see sweepLostDeliveries. */
  sweep(): ReturnType<typeof sweepLostDeliveries>;
  /** Finishes the attempts in flight, then stops; the database stays open (it is the caller's). */
  close(): Promise<void>;
}

const DEFAULTS = {
  concurrency: 100,
  maxInFlightPerEndpoint: 10,
  dispatchPollMs: 1_000,
  dispatchBatchSize: 500,
  schedulePollMs: 1_000,
  sweepEveryMs: 5_000,
  sweepGraceMs: 2_000,
  scheduleCheckEveryMs: 30_000,
  twoSparesUnderMs: 100,
  processorEventConcurrency: 4,
  processorEventBatchSize: 100,
  processorEventPollMs: 500,
  backfillLeaseMs: 6_000,
  backfillCheckEveryMs: 1_000,
  keyRejectionMailPollMs: 1_000,
} satisfies WorkerOptions;

/**
 * Margin on top of the request timeout, in an attempt's lease: for resolving the receiver's
 * name (DNS_DEADLINE_MS at most, before the timeout starts), claiming and recording it, and
 * for how long a spare may wait to be sent (SPARE_FRESH_MS).
 */
const LEASE_MARGIN_MS = 5_000;
/** What is left of the margin for a spare's wait, once the name's look-up has had its deadline. */
const SPARE_FRESH_MS = LEASE_MARGIN_MS - DNS_DEADLINE_MS - 1_000;

const SWEEPER_JOB_NAME = 'sweep-lost-deliveries';

export async function createWorker(deps: WorkerDeps): Promise<WorkerHandle> {
  // Everything opened is added here; it closes newest first, on a failed start or at close().
  // The order of adding is the shutdown's order reversed: what feeds work in is added last, so
  // it stops first, and the attempts in flight finish before their connections close.
  const opened = new OpenedResources((error) => deps.logger.warn({ err: error }, 'could not close a worker resource'));
  // The whole build is one step: whatever fails in it, a synchronous throw included (a
  // constructor refusing a setting), closes everything opened before the failure.
  return opened.step(() => buildWorker(deps, opened));
}

/** Opens and wires the worker's parts, adding each to `opened` as soon as it exists. */
async function buildWorker(
  { config, db, logger, options = {} }: WorkerDeps,
  opened: OpenedResources,
): Promise<WorkerHandle> {
  const settings = { ...DEFAULTS, ...options };
  const prefix = config.redisKeyPrefix;
  const quit = (redis: Redis) => redis.quit().catch(() => redis.disconnect());
  const producer = opened.add(createRedis(config.redisUrl, 'command', 'retention-worker-producer', logger), quit);
  const consumer = opened.add(createRedis(config.redisUrl, 'blocking', 'retention-worker', logger), quit);
  await Promise.all([waitForRedis(producer), waitForRedis(consumer)]);

  const leaseMs = config.webhookTimeoutMs + LEASE_MARGIN_MS;
  // Renewed while the attempt runs; when its worker dies, the job is handed to another after
  // this long, by which time the attempt's own lease has (nearly) run out too.
  const lockDuration = Math.max(5_000, 3 * config.webhookTimeoutMs);

  // BullMQ reports every failed poll while Redis is away: a few lines per outage, not dozens a second.
  const warn = throttledWarn(logger);
  const sender = opened.add(
    createWebhookSender({
      ...webhookSenderOptions(config),
      ...(settings.receiverCa !== undefined && { ca: settings.receiverCa }),
    }),
    (it) => it.close(),
  );
  const deliveryQueue = opened.add(
    new Queue<DeliveryJobData>(QUEUE_NAMES.deliveries, { connection: producer, prefix }),
    (it) => it.close(),
  );
  deliveryQueue.on('error', (error) => warn('delivery queue', error, 'delivery queue error'));
  const events = new EventEmitter<DeliveryEvents>();
  const mailer = createMailer(config, logger);
  if (mailer) {
    opened.add(mailer, (it) => it.close());
    emailOnAutoDisable(events, { db, mailer, logger, baseUrl: config.baseUrl });
  }
  const store = new DeliveryStore(db, {
    leaseMs,
    retryDelaysMs: config.webhookRetryDelaysMs,
    secretsKey: config.secretsKey,
  });
  const gate = new EndpointGate({
    maxInFlight: settings.maxInFlightPerEndpoint,
    maxSlowInFlight: settings.maxSlowInFlight ?? Math.max(1, Math.floor(settings.concurrency / 2)),
  });
  const twoSparesUpTo = settings.twoSparesUpTo ?? Math.floor(settings.concurrency / 4);
  const scheduler = new DeliveryScheduler({
    port: new DeliveryBacklog(db, deliveryQueue),
    allowances: (endpointIds) => gate.allowances(endpointIds),
    notInFlight: () => gate.notInFlight(),
    logger,
    pollMs: settings.schedulePollMs,
  });

  const deliveryWorker = new Worker<DeliveryJobData>(
    QUEUE_NAMES.deliveries,
    createDeliveryProcessor({
      store,
      gate,
      scheduler,
      sender,
      logger,
      events,
      spareFreshMs: SPARE_FRESH_MS,
      spareDepth: (endpointId) =>
        gate.inFlight() <= twoSparesUpTo && (gate.attemptMs(endpointId) ?? Infinity) < settings.twoSparesUnderMs
          ? 2
          : 1,
    }),
    {
      connection: consumer,
      prefix,
      concurrency: settings.concurrency,
      lockDuration,
      stalledInterval: lockDuration,
      // A job whose worker died goes back to the queue however often that happens:
      // Postgres decides when a delivery is finished, not a stall counter.
      maxStalledCount: Number.MAX_SAFE_INTEGER,
    },
  );
  opened.add(deliveryWorker, (it) => it.close());
  deliveryWorker.on('error', (error) => warn('delivery worker', error, 'delivery worker error'));
  deliveryWorker.on('failed', (job, error) =>
    logger.warn(
      { err: error, delivery_id: job?.data.deliveryId },
      'delivery job failed; the sweeper will bring it back',
    ),
  );

  const stripeSettings = { secretsKey: config.secretsKey, apiBase: config.stripeApiBase };
  const processorEvents = new ProcessorEventApplier({
    db,
    apply: createStripeEventApplier(stripeSettings),
    logger,
    concurrency: settings.processorEventConcurrency,
    batchSize: settings.processorEventBatchSize,
    pollMs: settings.processorEventPollMs,
  });
  const processorListener = new OutboxListener(
    config.databaseUrl,
    (connectionId) => processorEvents.wake(connectionId || undefined),
    logger,
    PROCESSOR_EVENTS_CHANNEL,
  );
  const backfills = new BackfillRunner({
    db,
    logger,
    stripe: stripeSettings,
    leaseMs: settings.backfillLeaseMs,
    checkEveryMs: settings.backfillCheckEveryMs,
  });

  const dispatcher = new OutboxDispatcher({
    db,
    logger,
    batchSize: settings.dispatchBatchSize,
    delivered: (endpointIds) => scheduler.wake(endpointIds),
    // Made already skipped (their endpoint off): brought to a final state here, as a skipped retry is.
    skipped: (count) => events.emit('ended', { outcome: 'skipped', count }),
  });
  const listener = new OutboxListener(config.databaseUrl, () => dispatcher.wake(), logger);
  opened.add(scheduler, (it) => it.stop());
  opened.add(dispatcher, (it) => it.stop());
  opened.add(processorEvents, (it) => it.stop());
  opened.add(backfills, (it) => it.stop());
  // Without SMTP_URL nothing is emailed, as for every email (the banner still says it).
  const keyRejectionMail =
    mailer &&
    opened.add(
      new KeyRejectionMail({ db, mailer, logger, baseUrl: config.baseUrl, pollMs: settings.keyRejectionMailPollMs }),
      (it) => it.stop(),
    );
  opened.add(processorListener, (it) => it.close());
  opened.add(listener, (it) => it.close());
  opened.add(
    setInterval(() => dispatcher.wake(), settings.dispatchPollMs),
    (it) => clearInterval(it),
  );

  const sweep = () =>
    sweepLostDeliveries({ db, queue: deliveryQueue, redis: producer, logger, graceMs: settings.sweepGraceMs });
  await listener.start();
  await processorListener.start();
  const periodic = await startPeriodicJobs({
    jobs: [
      { name: SWEEPER_JOB_NAME, everyMs: settings.sweepEveryMs, run: () => sweep() },
      ...(settings.periodicJobs ?? []),
    ],
    producer,
    consumer,
    prefix,
    logger,
    checkEveryMs: settings.scheduleCheckEveryMs,
  });
  // Stops first: no sweep starts while the rest drains.
  opened.add(periodic, (it) => it.close());
  scheduler.start();
  dispatcher.wake();
  processorEvents.start();
  backfills.start();
  keyRejectionMail?.start();
  // Deliveries released by a worker that died before adding their jobs are sent now, not at the next sweep.
  // Told like the loops' failures (one line, the source named, no stack): PostgreSQL may be going away.
  sweep().catch((error: unknown) => warn('start-up sweep', withoutStatement(error), 'start-up sweep failed'));

  let closing: Promise<void> | undefined;
  return {
    events,
    deliveryQueue,
    sweep,
    // Idempotent: a second call waits for the first instead of closing closed connections.
    close() {
      closing ??= opened.closeAll();
      return closing;
    },
  };
}
