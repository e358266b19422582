import type { JobsOptions } from 'bullmq';

/**
 * The queues and job shapes shared by every worker replica: a frozen contract, because a
 * replica of the next release must still read the jobs the previous one wrote.
 */
export const QUEUE_NAMES = Object.freeze({
  deliveries: 'webhook-deliveries',
  periodic: 'periodic',
});

const DELIVERY_JOB_NAME = 'deliver';

export interface DeliveryJobData {
  deliveryId: string;
  endpointId: string;
}

/**
 * One job per release of a delivery (see delivery-scheduler.ts): its id is the delivery's id
 * and when it was marked queued, so adding it twice is a no-op (the scheduler and the sweeper
 * may both add it), while a delivery released again after its last job ended, even before
 * that job has left Redis, gets a job of its own. Finished jobs are removed at once; Postgres
 * keeps the history.
 */
export function deliveryJob(deliveryId: string, endpointId: string, queuedAt: Date) {
  const opts: JobsOptions = {
    jobId: `${deliveryId}.${queuedAt.getTime()}`,
    removeOnComplete: true,
    removeOnFail: true,
  };
  return { name: DELIVERY_JOB_NAME, data: { deliveryId, endpointId } satisfies DeliveryJobData, opts };
}
