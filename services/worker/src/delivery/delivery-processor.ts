import type { EventEmitter } from 'node:events';
import { DelayedError, type Job } from 'bullmq';
import type { AttemptResult, WebhookSender } from '@retention/domain';
import type { Logger } from '@retention/runtime';
import type { DeliveryJobData } from '../queues.js';
import type { ClaimedDelivery, DeliveryEnd, DeliveryStore, RecordResult } from './delivery-store.js';
import type { EndpointGate } from './endpoint-gate.js';

/** What the worker reports about each attempt, for its log and its metrics. */
export interface AttemptReport extends RecordResult {
  delivery: ClaimedDelivery;
  result: AttemptResult;
}

export interface DeliveryEvents {
  attempt: [AttemptReport];
  /** Deliveries this process brought to a final state, `count` of them at once. */
  ended: [{ outcome: DeliveryEnd; count: number }];
}

/** How long a job waits before trying again after Postgres or Redis failed under it. */
const INFRASTRUCTURE_RETRY_MS = 5_000;
const RECORD_TRIES = 3;

export interface DeliveryProcessorDeps {
  store: DeliveryStore;
  gate: EndpointGate;
  sender: WebhookSender;
  logger: Logger;
  events: EventEmitter<DeliveryEvents>;
}

/**
 * Runs one delivery job: take a slot of the endpoint (or park), claim the attempt in
 * Postgres, send, record, give the slot back, and move the job to when the next attempt is
 * due. The job never fails for a receiver's sake: retries are this service's schedule, not
 * BullMQ's. A job fails only when Postgres and Redis both fail under it, and then the sweeper
 * brings it back once the delivery is due.
 */
export function createDeliveryProcessor(deps: DeliveryProcessorDeps) {
  const { store, gate, sender, logger, events } = deps;

  /** Returns when the job should run again (null: never), and how long the request took. */
  async function attemptOnce(deliveryId: string): Promise<{ dueAt: number | null; attemptMs?: number }> {
    const claim = await store.claim(deliveryId);
    if (claim.kind === 'done') {
      if (claim.skipped) events.emit('ended', { outcome: 'skipped', count: 1 });
      return { dueAt: null };
    }
    if (claim.kind === 'wait') return { dueAt: claim.until.getTime() };
    const { delivery } = claim;
    const result = await sender.send({ url: delivery.url, secret: delivery.secret, body: delivery.body });
    const outcome = await recordWithRetries(delivery, result);
    const report: AttemptReport = { delivery, result, ...outcome };
    log(report);
    events.emit('attempt', report);
    if (outcome.ended) events.emit('ended', { outcome: outcome.ended, count: 1 });
    if (outcome.othersSkipped > 0) events.emit('ended', { outcome: 'skipped', count: outcome.othersSkipped });
    return { dueAt: outcome.nextAttemptAt?.getTime() ?? null, attemptMs: result.durationMs };
  }

  async function recordWithRetries(delivery: ClaimedDelivery, result: AttemptResult) {
    for (let tries = 1; ; tries += 1) {
      try {
        return await store.record(delivery, result);
      } catch (error) {
        // The receiver has its answer; losing the record would mean sending again later.
        if (tries >= RECORD_TRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250 * tries));
      }
    }
  }

  function log({ delivery, result, recorded, nextAttemptAt, endpointDisabled }: AttemptReport): void {
    const fields = {
      delivery_id: delivery.id,
      endpoint_id: delivery.endpointId,
      event_type: delivery.eventType,
      attempt: delivery.attempt,
      http_status: result.httpStatus,
      duration_ms: result.durationMs,
      ...(result.error && { error: result.error }),
      // Where a refused host pointed: the operator's to see, never the endpoint owner's.
      ...(result.refusedAddress && {
        refused_address: result.refusedAddress.address,
        refused_range: result.refusedAddress.range,
      }),
      ...(result.dnsError && { dns_error: result.dnsError }),
      ...(nextAttemptAt && { next_attempt_at: nextAttemptAt.toISOString() }),
    };
    if (!recorded) logger.warn(fields, 'delivery attempt finished after its lease was taken over; not recorded');
    else if (result.succeeded) logger.info(fields, 'delivery attempt succeeded');
    else logger.info(fields, 'delivery attempt failed');
    if (endpointDisabled) {
      logger.warn(
        { endpoint_id: delivery.endpointId },
        'endpoint disabled after consecutive failures; its pending deliveries were skipped',
      );
    }
  }

  return async function processDelivery(job: Job<DeliveryJobData>, token?: string): Promise<void> {
    const { deliveryId, endpointId } = job.data;
    const place = await gate.acquire(endpointId, deliveryId);
    if (place > 0) {
      try {
        await job.moveToDelayed(Date.now() + gate.parkDelayMs(endpointId, place), token);
      } finally {
        await gate.parked(endpointId, deliveryId);
      }
      throw new DelayedError();
    }
    let dueAt: number | null;
    let attemptMs: number | undefined;
    try {
      ({ dueAt, attemptMs } = await attemptOnce(deliveryId));
    } catch (error) {
      logger.error({ err: error, delivery_id: deliveryId }, 'delivery job failed; trying again shortly');
      dueAt = Date.now() + INFRASTRUCTURE_RETRY_MS;
    } finally {
      await gate.release(endpointId, deliveryId, attemptMs);
    }
    if (dueAt === null) return;
    await job.moveToDelayed(dueAt, token);
    throw new DelayedError();
  };
}
