import type { EventEmitter } from 'node:events';
import type { Job } from 'bullmq';
import type { AttemptResult, WebhookSender } from '@retention/domain';
import type { Logger } from '@retention/runtime';
import type { DeliveryJobData } from '../queues.js';
import type { ClaimedDelivery, ClaimResult, DeliveryEnd, DeliveryStore, RecordResult } from './delivery-store.js';
import type { DeliveryScheduler } from './delivery-scheduler.js';
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

const RECORD_TRIES = 3;
/**
 * A job goes on with its endpoint's next deliveries (see deliverOne) this many times at most,
 * and for this long: then it ends, and the scheduler releases the endpoint's next in a job of
 * its own, so that what the gate decides (slow share, probes) is looked at again.
 */
const MAX_DELIVERIES_PER_JOB = 100;
const MAX_JOB_MS = 10_000;

export interface DeliveryProcessorDeps {
  store: DeliveryStore;
  gate: EndpointGate;
  scheduler: DeliveryScheduler;
  sender: WebhookSender;
  logger: Logger;
  events: EventEmitter<DeliveryEvents>;
}

/**
 * Runs one delivery job: take a slot of the endpoint, claim the attempt in Postgres, send,
 * record (a retry goes back to the backlog, due when the schedule says), and give the slot
 * back, waking the scheduler for the endpoints that have room again (after a success, as
 * soon as the request has ended, while the record is written), or go on with the endpoint's
 * next delivery (up to MAX_DELIVERIES_PER_JOB). It never fails for a receiver's sake: retries are this
 * service's schedule, not BullMQ's. It fails only when Postgres fails under it; its delivery
 * stays queued, and the sweeper gives it a job again.
 */
export function createDeliveryProcessor(deps: DeliveryProcessorDeps) {
  const { store, gate, scheduler, sender, logger, events } = deps;

  /**
   * Claims the delivery's attempt unless it is claimed already, sends, records. `succeeded` is
   * told as soon as a request succeeds, and says whether to go on with the endpoint's next
   * delivery (claimed in the statement that records this one). Returns when the delivery is
   * due again (null: never), how long the request took, and the next delivery if any.
   */
  async function attemptOnce(
    work: string | ClaimedDelivery,
    succeeded: (attemptMs: number) => boolean,
  ): Promise<{ dueAt: number | null; attemptMs?: number; next: ClaimedDelivery | null }> {
    const claim: ClaimResult = typeof work === 'string' ? await store.claim(work) : { kind: 'claimed', delivery: work };
    if (claim.kind === 'done') {
      if (claim.skipped) events.emit('ended', { outcome: 'skipped', count: 1 });
      return { dueAt: null, next: null };
    }
    if (claim.kind === 'wait') {
      await store.giveBack(work as string);
      return { dueAt: claim.until.getTime(), next: null };
    }
    const { delivery } = claim;
    const result = await sender.send({ url: delivery.url, secret: delivery.secret, body: delivery.body });
    const goOn = result.succeeded && succeeded(result.durationMs);
    const { record: outcome, next } = await recordOutcome(delivery, result, goOn);
    const report: AttemptReport = { delivery, result, ...outcome };
    log(report);
    events.emit('attempt', report);
    if (outcome.ended) events.emit('ended', { outcome: outcome.ended, count: 1 });
    if (outcome.othersSkipped > 0) events.emit('ended', { outcome: 'skipped', count: outcome.othersSkipped });
    return { dueAt: outcome.nextAttemptAt?.getTime() ?? null, attemptMs: result.durationMs, next };
  }

  /** Records the attempt; going on, claims the endpoint's next delivery in the same statement. */
  async function recordOutcome(
    delivery: ClaimedDelivery,
    result: AttemptResult,
    goOn: boolean,
  ): Promise<{ record: RecordResult; next: ClaimedDelivery | null }> {
    if (goOn) {
      try {
        return await store.recordSuccessAndGoOn(delivery, result);
      } catch (error) {
        logger.warn(
          { err: error, delivery_id: delivery.id, endpoint_id: delivery.endpointId },
          'could not record the attempt and claim the next delivery; recording it alone',
        );
        return { record: await recordWithRetries(delivery, result, 2), next: null };
      }
    }
    return { record: await recordWithRetries(delivery, result), next: null };
  }

  async function recordWithRetries(delivery: ClaimedDelivery, result: AttemptResult, firstTry = 1) {
    for (let tries = firstTry; ; tries += 1) {
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

  /**
   * One attempt of one delivery: the job's own (an id: a slot is taken and the attempt
   * claimed), or one it went on with (already claimed, holding the slot handed over to it).
   * Returns the endpoint's next delivery when this job goes on with it: after a success to an
   * endpoint known to be quick, the endpoint's oldest due delivery is released to this job and
   * its attempt claimed, in the statement that records this one's success; the slot is handed
   * over to it. Its job in Redis (active, locked) stands for both; if this process dies, the
   * sweeper gives the delivery a job of its own once its lease has run out.
   */
  async function deliverOne(
    endpointId: string,
    work: string | ClaimedDelivery,
    mayGoOn: boolean,
  ): Promise<ClaimedDelivery | null> {
    const deliveryId = typeof work === 'string' ? work : work.id;
    if (typeof work === 'string' && !gate.acquire(endpointId, deliveryId)) {
      // The gate wakes the endpoint again when it has room.
      await store.giveBack(deliveryId);
      return null;
    }
    let requestSucceeded = false;
    let slotHeld = true;
    // After a success the slot is the receiver's no more: it frees when the request ends, while
    // the result is recorded, unless this job goes on with the endpoint's next delivery.
    const freeSlotWhileRecording = (attemptMs: number) => {
      slotHeld = false;
      scheduler.wake(gate.release(endpointId, deliveryId, attemptMs, { recording: true }));
    };
    const succeeded = (attemptMs: number): boolean => {
      requestSucceeded = true;
      if (mayGoOn && scheduler.isRunning() && gate.isQuick(endpointId)) return true;
      freeSlotWhileRecording(attemptMs);
      return false;
    };
    let outcome: Awaited<ReturnType<typeof attemptOnce>>;
    try {
      outcome = await attemptOnce(work, succeeded);
    } catch (error) {
      // This job fails (Postgres is away): a claimed delivery's lease runs out, and the sweeper
      // gives it a job of its own.
      if (slotHeld) scheduler.wake(gate.release(endpointId, deliveryId));
      if (requestSucceeded) gate.recorded(deliveryId);
      throw error;
    }
    if (slotHeld) {
      // Recorded by now: the slot frees as any other does (not as one still being recorded).
      if (outcome.next) gate.handOver(endpointId, deliveryId, outcome.next.id, outcome.attemptMs!);
      else scheduler.wake(gate.release(endpointId, deliveryId, outcome.attemptMs));
    }
    if (requestSucceeded) gate.recorded(deliveryId);
    if (outcome.dueAt !== null) scheduler.wakeAt(outcome.dueAt);
    return outcome.next;
  }

  return async function processDelivery(job: Job<DeliveryJobData>): Promise<void> {
    const { endpointId } = job.data;
    const started = Date.now();
    let work: string | ClaimedDelivery | null = job.data.deliveryId;
    for (let done = 0; work !== null; done += 1) {
      const mayGoOn = done + 1 < MAX_DELIVERIES_PER_JOB && Date.now() - started < MAX_JOB_MS;
      work = await deliverOne(endpointId, work, mayGoOn);
    }
  };
}
