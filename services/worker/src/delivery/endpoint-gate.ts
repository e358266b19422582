import type { Queue } from 'bullmq';
import type { Logger, Redis } from '@retention/runtime';

/**
 * Per-endpoint isolation. BullMQ (open source) has one concurrency for a whole queue, so an
 * endpoint that hangs until the timeout, with thousands of deliveries queued, could occupy
 * every slot and starve the others. The gate caps the attempts in flight per endpoint across
 * all replicas; a job over the cap is parked (moved to delayed) instead of holding a slot,
 * and each finished attempt hands its slot to the endpoint's oldest parked job by promoting
 * it. A hanging endpoint therefore holds at most `maxInFlight` of a worker's slots.
 *
 * State lives in two sorted sets per endpoint, changed only by the scripts below:
 * - running: delivery ids holding a slot, scored by when the slot expires. A worker killed
 *   mid-attempt cannot leak a slot: expired members are dropped on the next acquire.
 * - parked: delivery ids waiting for a slot, scored by when they first parked (FIFO).
 */

const ACQUIRE = `
local running, parked = KEYS[1], KEYS[2]
local member, now, expiry, cap, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
redis.call('ZREMRANGEBYSCORE', running, '-inf', now)
if redis.call('ZSCORE', running, member) or redis.call('ZCARD', running) < cap then
  redis.call('ZADD', running, expiry, member)
  redis.call('PEXPIRE', running, ttl)
  redis.call('ZREM', parked, member)
  return 0
end
redis.call('ZADD', parked, 'NX', now, member)
redis.call('PEXPIRE', parked, ttl)
return redis.call('ZRANK', parked, member) + 1
`;

/** Frees the slot and, if one is free now, takes the oldest parked delivery off the list. */
const RELEASE = `
local running, parked = KEYS[1], KEYS[2]
local member, now, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREM', running, member)
redis.call('ZREMRANGEBYSCORE', running, '-inf', now)
if redis.call('ZCARD', running) >= cap then return false end
local head = redis.call('ZRANGE', parked, 0, 0, 'WITHSCORES')
if #head == 0 then return false end
redis.call('ZREM', parked, head[1])
return head
`;

/** Puts a delivery back in line with its old place, unless it has meanwhile taken a slot. */
const REPARK = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1])
return 1
`;

interface GateCommands {
  webhookGateAcquire(
    running: string,
    parked: string,
    member: string,
    now: number,
    expiry: number,
    cap: number,
    ttl: number,
  ): Promise<number>;
  webhookGateRelease(
    running: string,
    parked: string,
    member: string,
    now: number,
    cap: number,
  ): Promise<string[] | null>;
  webhookGateRepark(running: string, parked: string, member: string, score: string): Promise<number>;
}

/** Parked jobs also wake on their own after this long at most, in case no hand-off comes. */
const MAX_PARK_MS = 60_000;
/** Parked sets outlive any parked job's own wake-up. */
const PARKED_TTL_MS = 60 * 60_000;

export interface EndpointGateOptions {
  redis: Redis;
  keyPrefix: string;
  queue: Queue;
  logger: Logger;
  maxInFlight: number;
  /** How long a slot is held at most: an attempt's lease. */
  slotMs: number;
}

export class EndpointGate {
  private readonly redis: Redis & GateCommands;

  constructor(private readonly options: EndpointGateOptions) {
    options.redis.defineCommand('webhookGateAcquire', { numberOfKeys: 2, lua: ACQUIRE });
    options.redis.defineCommand('webhookGateRelease', { numberOfKeys: 2, lua: RELEASE });
    options.redis.defineCommand('webhookGateRepark', { numberOfKeys: 2, lua: REPARK });
    this.redis = options.redis as Redis & GateCommands;
  }

  private keys(endpointId: string): [string, string] {
    const base = `${this.options.keyPrefix}:webhook-gate:${endpointId}`;
    return [`${base}:running`, `${base}:parked`];
  }

  /** 0 when a slot was taken; otherwise the delivery's place in the endpoint's parked line. */
  async acquire(endpointId: string, deliveryId: string): Promise<number> {
    const now = Date.now();
    const { maxInFlight, slotMs } = this.options;
    return this.redis.webhookGateAcquire(
      ...this.keys(endpointId),
      deliveryId,
      now,
      now + slotMs,
      maxInFlight,
      Math.max(PARKED_TTL_MS, slotMs * 2),
    );
  }

  /**
   * When a parked job should wake by itself: about when its turn would come if every slot
   * ahead of it ran to the timeout, so a long line costs a wake-up per slot-length, not a
   * stampede. The hand-off in `release` normally promotes it much sooner.
   */
  parkDelayMs(position: number): number {
    const { maxInFlight, slotMs } = this.options;
    const turnsAhead = Math.ceil(position / maxInFlight);
    return Math.round(Math.min(MAX_PARK_MS, Math.max(1, turnsAhead) * slotMs) * (1 + 0.1 * Math.random()));
  }

  /** Frees the slot and promotes the next parked job of the endpoint, if any. Never throws. */
  async release(endpointId: string, deliveryId: string): Promise<void> {
    const [running, parked] = this.keys(endpointId);
    try {
      // A parked delivery whose job is gone (finished elsewhere) passes the slot on.
      for (let handOffs = 0; handOffs < 5; handOffs += 1) {
        const head = await this.redis.webhookGateRelease(
          running,
          parked,
          deliveryId,
          Date.now(),
          this.options.maxInFlight,
        );
        if (!head || (await this.handOff(running, parked, head[0]!, head[1]!))) return;
      }
    } catch (error) {
      // The parked jobs still wake by themselves; only latency is lost.
      this.options.logger.warn({ err: error, endpoint_id: endpointId }, 'could not hand off an endpoint slot');
    }
  }

  /** True when the slot went to this delivery's job; false when the job no longer exists. */
  private async handOff(running: string, parked: string, deliveryId: string, score: string): Promise<boolean> {
    for (let tries = 0; tries < 3; tries += 1) {
      const job = await this.options.queue.getJob(deliveryId);
      if (!job) return false;
      const state = await job.getState();
      if (state === 'unknown') return false;
      if (state === 'delayed') {
        // Fails only if it woke by itself in between, in which case it takes the slot anyway.
        await job.promote().catch(() => undefined);
        return true;
      }
      if (state !== 'active') return true;
      // Caught between parking itself and landing in the delayed set: give it a moment.
      await new Promise((resolve) => setTimeout(resolve, 20 * (tries + 1)));
    }
    await this.redis.webhookGateRepark(running, parked, deliveryId, score);
    return true;
  }
}
