import type { JobsOptions } from 'bullmq';

/**
 * The queues and job shapes shared by every worker replica: a frozen contract, because a
 * replica of the next release must still read the jobs the previous one wrote.
 */
export const QUEUE_NAMES = Object.freeze({
  deliveries: 'webhook-deliveries',
  periodic: 'periodic',
});

export const DELIVERY_JOB_NAME = 'deliver';

export interface DeliveryJobData {
  deliveryId: string;
  endpointId: string;
}

/**
 * One job per delivery, its id the delivery's id: adding it twice is a no-op, so the
 * dispatcher and the sweeper may both enqueue it. Finished jobs are removed at once;
 * Postgres keeps the history.
 */
export function deliveryJob(deliveryId: string, endpointId: string) {
  const opts: JobsOptions = { jobId: deliveryId, removeOnComplete: true, removeOnFail: true };
  return { name: DELIVERY_JOB_NAME, data: { deliveryId, endpointId } satisfies DeliveryJobData, opts };
}
