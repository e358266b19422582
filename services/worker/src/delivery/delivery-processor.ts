import type { EventEmitter } from 'node:events';
import type { Job } from 'bullmq';
import { unreadableSecretAttempt, type AttemptResult, type WebhookSender } from '@retention/domain';
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
  /**
   * A spare is sent only this soon after its claim, so that its lease (the timeout plus the
   * lease's margin) still covers the name's look-up and the whole attempt (worker.ts derives
   * it). A spare held longer waited for a slow request: the endpoint is no longer quick, and
   * the spare goes back to the backlog.
   */
  spareFreshMs: number;
  /**
   * How many spares a job keeps claimed ahead for the endpoint, asked at each success: two
   * while this process runs few attempts and the endpoint's are quick (its slots then wait on
   * the statements more than on the receiver or the CPU), one otherwise (with many attempts
   * running, the extra claims cost more CPU than the waits they save; with slower requests a
   * statement ends well within one, and a second spare would only wait). See
   * docs/delivery-scheduler.md, "Spares".
   */
  spareDepth: (endpointId: string) => SpareDepth;
}

/** Spares a job keeps claimed ahead (see DeliveryProcessorDeps.spareDepth). */
type SpareDepth = 1 | 2;
const DEEPEST: SpareDepth = 2;

/**
 * A delivery the statement recording the one before claimed ahead, so that it is sent as soon
 * as the request in flight succeeds, without waiting for a statement: the record of each
 * success overlaps the next request (docs/delivery-scheduler.md, "Spares").
 */
interface Spare {
  delivery: ClaimedDelivery;
  /** Just before the statement that claimed it was sent: its lease started no earlier. */
  claimedAt: number;
  /**
   * Sent, or given back. Once given back, another job may claim it with the same attempt
   * number: a second give-back would undo that job's claim.
   */
  settled: boolean;
}

/** A spare claimed by a statement that may still be running; null if it claimed none. */
type SpareLater = Promise<Spare | null>;

/**
 * What one step of a job hands to the next: the delivery to send now, and the spares claimed
 * ahead of it, oldest first.
 */
interface Step {
  next: ClaimedDelivery | null;
  ahead: SpareLater[];
}

const LAST_STEP: Step = { next: null, ahead: [] };

/** One statement's spares, each on its own, in the order it claimed them. */
function eachOf(statement: Promise<Spare[]>, count: number): SpareLater[] {
  return Array.from({ length: count }, (_, index) => statement.then((spares) => spares[index] ?? null));
}

/**
 * Runs one delivery job: take a slot of the endpoint, claim the attempt in Postgres, send,
 * record (a retry goes back to the backlog, due when the schedule says), and give the slot
 * back, waking the scheduler for the endpoints that have room again (after a success, as
 * soon as the request has ended, while the record is written), or go on with the endpoint's
 * next delivery (up to MAX_DELIVERIES_PER_JOB), claimed ahead while the request before it was
 * in flight. It never fails for a receiver's sake: retries are this service's schedule, not
 * BullMQ's. It fails only when Postgres fails under it; its delivery stays queued, and the
 * sweeper gives it a job again.
 */
export function createDeliveryProcessor(deps: DeliveryProcessorDeps) {
  const { store, gate, scheduler, sender, logger, events, spareFreshMs, spareDepth } = deps;

  /** The job's own delivery claimed, or null when there is nothing to send (and when to look again). */
  async function claimOwn(deliveryId: string): Promise<{ delivery: ClaimedDelivery | null; dueAt: number | null }> {
    const claim: ClaimResult = await store.claim(deliveryId);
    if (claim.kind === 'done') {
      if (claim.skipped) events.emit('ended', { outcome: 'skipped', count: 1 });
      return { delivery: null, dueAt: null };
    }
    if (claim.kind === 'wait') {
      await store.giveBack(deliveryId);
      return { delivery: null, dueAt: claim.until.getTime() };
    }
    return { delivery: claim.delivery, dueAt: null };
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

  /** Records a success and claims up to `claims` of the endpoint's next deliveries in the same statement. */
  async function recordAndClaim(
    delivery: ClaimedDelivery,
    result: AttemptResult,
    claims: number,
  ): Promise<{ record: RecordResult; next: ClaimedDelivery[]; claimedAt: number }> {
    try {
      return await store.recordSuccessAndGoOn(delivery, result, claims);
    } catch (error) {
      logger.warn(
        { err: error, delivery_id: delivery.id, endpoint_id: delivery.endpointId },
        'could not record the attempt and claim the next delivery; recording it alone',
      );
      return { record: await recordWithRetries(delivery, result, 2), next: [], claimedAt: Date.now() };
    }
  }

  /**
   * Logs the attempt, tells the worker's metrics and alerts, and wakes the scheduler when a
   * retry falls due. Never throws: the attempt is recorded by now, and a listener's fault must
   * not leave a slot or a spare behind.
   */
  function report(delivery: ClaimedDelivery, result: AttemptResult, outcome: RecordResult): void {
    try {
      const attempt: AttemptReport = { delivery, result, ...outcome };
      log(attempt);
      events.emit('attempt', attempt);
      if (outcome.ended) events.emit('ended', { outcome: outcome.ended, count: 1 });
      if (outcome.othersSkipped > 0) events.emit('ended', { outcome: 'skipped', count: outcome.othersSkipped });
      if (outcome.nextAttemptAt) scheduler.wakeAt(outcome.nextAttemptAt.getTime());
    } catch (error) {
      logger.error({ err: error, delivery_id: delivery.id }, 'could not report a recorded attempt');
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
    if (delivery.secret === null) {
      logger.error(
        fields,
        "delivery attempt not sent: SECRETS_KEY cannot open the endpoint's signing secret (it was sealed " +
          'with another key); it is retried per the schedule. Set the key the secrets were sealed with, ' +
          'or roll the secret with no overlap (docs/operator-cli.md)',
      );
    } else if (!recorded) {
      // Its row no longer holds this attempt's lease: another worker took the delivery over,
      // or the delivery is gone with its endpoint (deleted while the request was in flight).
      logger.warn(
        fields,
        'delivery attempt finished after its lease was taken over or its endpoint was deleted; not recorded',
      );
    } else if (result.succeeded) logger.info(fields, 'delivery attempt succeeded');
    else logger.info(fields, 'delivery attempt failed');
    if (endpointDisabled) {
      logger.warn(
        { endpoint_id: delivery.endpointId },
        'endpoint disabled after consecutive failures; its pending deliveries were skipped',
      );
    }
  }

  /** Tracks spares claimed by a statement, from when they are known (see EndpointGate.holdSpare). */
  function held(claimedAt: number, claimed: ClaimedDelivery[]): Spare[] {
    return claimed.map((delivery) => {
      gate.holdSpare(delivery.id);
      return { delivery, claimedAt, settled: false };
    });
  }

  /**
   * A spare not sent goes back to the backlog, and its endpoint is woken for it. Never throws:
   * a spare that could not be given back (Postgres away) waits for its lease to run out, and
   * the sweeper gives it a job then, as for a worker that died.
   */
  async function giveBackSpare(spare: Spare | null): Promise<void> {
    if (!spare || spare.settled) return;
    spare.settled = true;
    try {
      await store.unclaim(spare.delivery);
    } catch (error) {
      logger.warn(
        { err: error, delivery_id: spare.delivery.id, endpoint_id: spare.delivery.endpointId },
        'could not give a spare back; it is sent once its lease runs out',
      );
    } finally {
      gate.spareGone(spare.delivery.id);
      scheduler.wake([spare.delivery.endpointId]);
    }
  }

  /** Every spare claimed ahead and not sent goes back, once its statement has said what it claimed. */
  async function giveBackAll(ahead: SpareLater[]): Promise<void> {
    await Promise.all(ahead.map(async (later) => giveBackSpare(await later)));
  }

  /**
   * Records a success while the spare it handed its slot to is sent; claims `claims` more
   * spares in the same statement. Never fails: if the record cannot be written (Postgres away, after
   * retries), the delivery stays queued under its lease, and the sweeper gives it a job once
   * the lease has run out (at least once); the job goes on without a spare.
   */
  function recordWhileNextIsSent(delivery: ClaimedDelivery, result: AttemptResult, claims: number): Promise<Spare[]> {
    return recordAndClaim(delivery, result, claims)
      .then(({ record, next, claimedAt }) => {
        const spares = held(claimedAt, next);
        report(delivery, result, record);
        return spares;
      })
      .catch((error: unknown) => {
        logger.error(
          { err: error, delivery_id: delivery.id, endpoint_id: delivery.endpointId },
          'could not record the attempt; the delivery is sent again once its lease runs out',
        );
        return [];
      })
      .finally(() => gate.recorded(delivery.id));
  }

  /**
   * One attempt of one delivery: the job's own (an id: a slot is taken and the attempt
   * claimed), or one it went on with (already claimed, holding the slot handed over to it).
   *
   * After a success to an endpoint known to be quick, the job goes on with the endpoint's
   * next delivery: the oldest spare claimed by the statements that recorded the deliveries
   * before, sent at once while this one's success is recorded, in a statement that claims
   * spares up to the depth asked (`spareDepth`). Without a spare (the job's first success),
   * the statement claims the next and the spares, and the job waits for it. The slot is
   * handed over from one delivery to the next. The job's own entry in Redis (active, locked)
   * stands for them all; if this process dies, the sweeper gives each a job of its own once
   * its lease has run out. A spare is sent only after a success, while fresh, the endpoint
   * still quick and the scheduler running (at the job's limit those held are sent, with no new
   * spare claimed); otherwise, or after a failure, every spare held goes back to the backlog.
   */
  async function deliverOne(
    endpointId: string,
    work: string | ClaimedDelivery,
    mayGoOn: boolean,
    ahead: SpareLater[],
  ): Promise<Step> {
    const deliveryId = typeof work === 'string' ? work : work.id;
    if (typeof work === 'string' && !gate.acquire(endpointId, deliveryId)) {
      // The gate wakes the endpoint again when it has room. (A job's own delivery comes with no spare.)
      await store.giveBack(deliveryId);
      return LAST_STEP;
    }
    let slotHeld = true;
    let recording = false;
    try {
      let delivery: ClaimedDelivery | null;
      if (typeof work === 'string') {
        const own = await claimOwn(work);
        if (own.dueAt !== null) scheduler.wakeAt(own.dueAt);
        delivery = own.delivery;
      } else {
        delivery = work;
      }
      if (!delivery) {
        slotHeld = false;
        scheduler.wake(gate.release(endpointId, deliveryId));
        return LAST_STEP;
      }
      // A secret SECRETS_KEY cannot open: nothing is sent (never unsigned), the attempt fails.
      const result =
        delivery.secret === null
          ? unreadableSecretAttempt()
          : await sender.send({ url: delivery.url, secret: delivery.secret, body: delivery.body });
      if (!result.succeeded) {
        // The failure keeps the slot until it is recorded: the next attempt sees its count.
        report(delivery, result, await recordWithRetries(delivery, result));
        await giveBackAll(ahead);
        slotHeld = false;
        scheduler.wake(gate.release(endpointId, deliveryId, result.durationMs));
        return LAST_STEP;
      }

      // The oldest spare (a statement that claimed none, having found nothing due, is passed over).
      const behind = [...ahead];
      let waiting: Spare | null = null;
      while (!waiting && behind.length > 0) waiting = await behind.shift()!;
      const mayStillGo = scheduler.isRunning() && gate.isQuick(endpointId);
      const fresh = waiting && mayStillGo && Date.now() - waiting.claimedAt < spareFreshMs ? waiting : null;
      const goOn = mayGoOn && mayStillGo && waiting === fresh;
      if (fresh) {
        fresh.settled = true;
        gate.handOver(endpointId, deliveryId, fresh.delivery.id, result.durationMs);
        slotHeld = false;
        const claims = goOn ? Math.max(0, spareDepth(endpointId) - behind.length) : 0;
        const statement = recordWhileNextIsSent(delivery, result, claims);
        return { next: fresh.delivery, ahead: [...behind, ...eachOf(statement, claims)] };
      }
      if (!goOn) {
        // The slot is the receiver's no more: it frees now, while the result is recorded.
        slotHeld = false;
        recording = true;
        scheduler.wake(gate.release(endpointId, deliveryId, result.durationMs, { recording: true }));
        await giveBackAll([Promise.resolve(waiting), ...behind]);
        report(delivery, result, await recordWithRetries(delivery, result));
        return LAST_STEP;
      }
      // Going on with no spare yet: the next and its spares, claimed as this success is recorded.
      const { record, next, claimedAt } = await recordAndClaim(delivery, result, 1 + spareDepth(endpointId));
      const spares = held(claimedAt, next.slice(1));
      report(delivery, result, record);
      slotHeld = false;
      if (!next[0]) {
        scheduler.wake(gate.release(endpointId, deliveryId, result.durationMs));
        return LAST_STEP;
      }
      gate.handOver(endpointId, deliveryId, next[0].id, result.durationMs);
      gate.recorded(deliveryId);
      return { next: next[0], ahead: spares.map((spare) => Promise.resolve(spare)) };
    } catch (error) {
      // This job fails (Postgres is away): a claimed delivery's lease runs out, and the sweeper
      // gives it a job of its own.
      if (slotHeld) scheduler.wake(gate.release(endpointId, deliveryId));
      throw error;
    } finally {
      if (recording) gate.recorded(deliveryId);
    }
  }

  return async function processDelivery(job: Job<DeliveryJobData>): Promise<void> {
    const { endpointId } = job.data;
    const started = Date.now();
    let step: Step = LAST_STEP;
    let work: string | ClaimedDelivery | null = job.data.deliveryId;
    try {
      for (let done = 0; work !== null; done += 1) {
        // Near the limit no new spare is claimed; those held are sent (see deliverOne).
        const mayGoOn = done + 1 + DEEPEST < MAX_DELIVERIES_PER_JOB && Date.now() - started < MAX_JOB_MS;
        step = await deliverOne(endpointId, work, mayGoOn, step.ahead);
        work = step.next;
      }
    } finally {
      // A failed step leaves the spares its statements claim: back to the backlog.
      await giveBackAll(step.ahead);
    }
  };
}
