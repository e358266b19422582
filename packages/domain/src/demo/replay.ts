import { DEFAULT_RETRY_SCHEDULE, newId, parseDurationList, type EventType } from '@retention/core';
import { insertInBatches, type Transaction } from '@retention/db';
import { noteNextAttempt, recordFailedAttempt } from '../campaigns/attempts.js';
import { closeStaleCampaigns } from '../campaigns/close-stale.js';
import { loseCampaign, recoverCampaign } from '../campaigns/close.js';
import { markCampaignRecovered } from '../campaigns/mark.js';
import { openCampaign } from '../campaigns/open.js';
import { recordCancelSession } from '../cancel-sessions.js';
import type { FixtureCampaign, FixtureCancelSession, FixtureWorkspaceResult } from '../fixtures/schema.js';
import { RETRY_DAYS, RETRY_WITHIN_HOURS, STALE_AFTER_DAYS } from './generate.js';
import type { SeededRandom } from './random.js';

/**
 * The demo's history, played through the domain actions rather than imported, so that a demo
 * campaign's or cancel session's page reads like a real one's: its timeline (each event, each
 * delivery to the business's endpoints and who closed it by hand) comes from the same actions
 * and the same tables as a real one's.
 */

export interface History {
  workspaceId: string;
  loaded: FixtureWorkspaceResult;
  /** The generator's campaigns, with the fate each met (status, times, how it was recovered). */
  campaigns: FixtureCampaign[];
  /** The generator's cancel sessions, each with its outcome and when it began and ended. */
  cancelSessions: FixtureCancelSession[];
  /** Who marks campaigns recovered by hand (a user allowed to), and from where. */
  operator: { user_id: string; ip: string; user_agent: string };
  /** The end of the history (ms): what Stripe's retry schedule has still to try is after it. */
  now: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * A demo campaign's payment attempts, as Stripe would have reported them (docs/processor.md,
 * "Payment attempts"): the first failure, then each retry of the schedule (RETRY_DAYS) that ran
 * before the campaign closed (or before now, still open) and failed. A recovery by retry is the
 * retry of its day, within hours of it: that one succeeded, the earlier ones failed. `next`: the
 * retry Stripe had scheduled after the last failure (null once the schedule is over), told at
 * that failure.
 */
function demoPaymentAttempts(campaign: FixtureCampaign, now: number): { failed: number[]; next: number | null } {
  const firstFailedAt = Date.parse(campaign.first_failed_at!);
  const end = campaign.closed_at ? Date.parse(campaign.closed_at) : now;
  const retries = RETRY_DAYS.map((days) => firstFailedAt + days * DAY);
  const ran = retries.filter((at) =>
    campaign.recovered_via === 'retry' ? at + (RETRY_WITHIN_HOURS + 1) * HOUR <= end : at < end,
  );
  return { failed: [firstFailedAt, ...ran], next: retries[ran.length] ?? null };
}

interface Step {
  at: number;
  order: number;
  run: () => Promise<unknown>;
}

/**
 * Plays the history in time order, each action at the time it happened. A cancel session is
 * recorded when it ended (`recordCancelSession`, as the CLI's `cancel-session record` and the
 * processor's sync of a cancellation do): a `saved_*` one emits `cancel.saved`, a `canceled` one
 * `cancel.lost`, an abandoned one nothing. Each campaign's story: the failure
 * opens it (`openCampaign`, `recovery.opened`); then the processor collects it
 * (`recoverCampaign` by retry, card update or out of band), the operator marks it recovered
 * (`markCampaignRecovered`: `recovery.recovered` and the security log's record), the processor
 * gives up (`loseCampaign`), or the worker's stale-campaign job abandons it
 * (`closeStaleCampaigns` run at that moment, `recovery.lost` with `auto_close_stale`). Campaigns
 * still open stay open. Each campaign's payment attempts are recorded as Stripe's events would
 * have (demoPaymentAttempts): every one that failed, and the next retry Stripe scheduled. Returns
 * the campaigns' ids in the order given.
 */
export async function replayHistory(trx: Transaction, history: History): Promise<string[]> {
  const { workspaceId, loaded, operator } = history;
  const ids: string[] = [];
  const steps: Step[] = [];
  const staleRuns = new Set<number>();
  history.campaigns.forEach((campaign, index) => {
    const failedAt = new Date(campaign.first_failed_at!);
    steps.push({
      at: failedAt.getTime(),
      order: 2 * index,
      run: async () => {
        const opened = await openCampaign(trx, {
          workspace_id: workspaceId,
          customer_id: loaded.customers[campaign.customer]!,
          subscription_id: loaded.subscriptions[campaign.subscription!]!,
          psp_invoice_id: campaign.psp_invoice_id!,
          amount_cents: campaign.amount_cents!,
          currency: campaign.currency!,
          decline_code: campaign.decline_code!,
          failed_at: failedAt,
          at: failedAt,
        });
        ids[index] = opened.id;
      },
    });
    // Each failed attempt at its time, the first with the opening; Stripe's next one as the last said.
    const attempts = demoPaymentAttempts(campaign, history.now);
    attempts.failed.forEach((attemptAt, attempt) => {
      const last = attempt === attempts.failed.length - 1;
      steps.push({
        at: attemptAt,
        order: 2 * index,
        run: async () => {
          const reported = { workspace_id: workspaceId, campaign_id: ids[index]! };
          await recordFailedAttempt(trx, {
            ...reported,
            attempt_number: attempt + 1,
            failed_at: new Date(attemptAt),
            decline_code: campaign.decline_code!,
          });
          if (!last) return;
          await noteNextAttempt(trx, {
            ...reported,
            next_attempt_at: attempts.next === null ? null : new Date(attempts.next),
            as_of: new Date(attemptAt),
            attempt_count: attempt + 1,
          });
        },
      });
    });
    if (!campaign.closed_at) return;
    const at = new Date(campaign.closed_at);
    const close = (run: (id: string) => Promise<unknown>): Step => ({
      at: at.getTime(),
      order: 2 * index + 1,
      run: () => run(ids[index]!),
    });
    switch (campaign.status) {
      case 'recovered': {
        const via = campaign.recovered_via!;
        steps.push(
          close((id) =>
            via === 'manual'
              ? markCampaignRecovered(trx, { id, workspace_id: workspaceId, actor: { type: 'user', ...operator }, at })
              : recoverCampaign(trx, { id, workspace_id: workspaceId, via, at }),
          ),
        );
        break;
      }
      case 'lost':
        steps.push(close((id) => loseCampaign(trx, { id, workspace_id: workspaceId, by: 'processor', at })));
        break;
      case 'abandoned':
        // One run of the job closes every campaign that turned stale since its last run.
        if (staleRuns.has(at.getTime())) break;
        staleRuns.add(at.getTime());
        steps.push(
          close(() =>
            closeStaleCampaigns(trx, { olderThanDays: STALE_AFTER_DAYS, workspaceId, now: at, replay: true }),
          ),
        );
        break;
      default:
        break;
    }
  });
  const sessionsFrom = 2 * history.campaigns.length;
  history.cancelSessions.forEach((session, index) => {
    const endedAt = new Date(session.ended_at!);
    steps.push({
      at: endedAt.getTime(),
      order: sessionsFrom + index,
      run: () =>
        recordCancelSession(trx, {
          workspace_id: workspaceId,
          customer_id: loaded.customers[session.customer]!,
          ...(session.subscription != null && { subscription_id: loaded.subscriptions[session.subscription]! }),
          outcome: session.outcome!,
          reason_code: session.reason_code!,
          monthly_mrr_cents: session.monthly_mrr_cents!,
          currency: session.currency!,
          ...(session.feedback != null && { feedback: session.feedback }),
          started_at: new Date(session.created_at!),
          at: endedAt,
        }),
    });
  });
  steps.sort((a, b) => a.at - b.at || a.order - b.order);
  for (const step of steps) await step.run();
  return ids;
}

interface DemoEndpoint {
  id: string;
  /** Its URL, which the demo never changes: every replayed attempt was sent there. */
  url: string;
  /** The event types it is subscribed to. */
  events: readonly EventType[];
  /** What its receiver answers when it takes a delivery. */
  accepts: { status: number; body: string };
}

export interface WebhookHistory {
  workspaceId: string;
  endpoints: DemoEndpoint[];
  /** When the business added its endpoints. */
  connectedAt: number;
  /** The webhook log keeps this far back (WEBHOOK_LOG_RETENTION_DAYS): older deliveries were pruned. */
  keptSince: number;
  now: number;
  rng: SeededRandom;
}

/** How a receiver fails now and then: what the delivery log records for the attempt. */
const FAILURES: ReadonlyArray<
  readonly [{ http_status: number | null; error: string; response_body: string | null; duration_ms?: number }, number]
> = [
  [
    { http_status: 503, error: 'HTTP 503', response_body: 'upstream connect error or disconnect/reset before headers' },
    5,
  ],
  [{ http_status: 502, error: 'HTTP 502', response_body: '<html><body><h1>502 Bad Gateway</h1></body></html>' }, 2],
  [{ http_status: null, error: 'timed out after 8000 ms', response_body: null, duration_ms: 8000 }, 2],
  [{ http_status: null, error: 'connection reset by the receiver', response_body: null }, 1],
];

/** The default WEBHOOK_RETRY_DELAYS: the pause before each retry. */
const RETRY_DELAYS = parseDurationList(DEFAULT_RETRY_SCHEDULE)!;
const DISPATCH_DELAY_MS = 200;

/**
 * What the worker did with the replayed events: each event is dispatched (a moment after it
 * was recorded, so no webhook goes out for the past now), and each one the webhook log still
 * keeps was delivered to every endpoint subscribed to it that existed then, as the worker
 * records it: most at the first attempt, now and then after a retry or two. These rows are
 * written here, not by the worker's code, which makes them by sending real requests.
 */
export async function replayWebhookLog(trx: Transaction, history: WebhookHistory): Promise<void> {
  const { workspaceId, endpoints, rng } = history;
  await trx('webhook_endpoints')
    .where({ workspace_id: workspaceId })
    .update({ created_at: new Date(history.connectedAt), updated_at: new Date(history.connectedAt) });
  const events = await trx('events')
    .where({ workspace_id: workspaceId })
    .andWhere('created_at', '>=', new Date(Math.max(history.connectedAt, history.keptSince)))
    .orderBy('seq')
    .select<Array<{ id: string; seq: string; type: EventType; created_at: Date }>>('id', 'seq', 'type', 'created_at');

  const deliveries: Array<Record<string, unknown>> = [];
  const attempts: Array<Record<string, unknown>> = [];
  const lastSuccess = new Map<string, number>();
  const lastFailure = new Map<string, number>();
  for (const event of events) {
    for (const endpoint of endpoints) {
      if (!endpoint.events.includes(event.type)) continue;
      const deliveryId = newId();
      const createdAt = event.created_at.getTime() + DISPATCH_DELAY_MS;
      const drawn = rng.chance(0.92) ? 0 : rng.chance(0.75) ? 1 : 2;
      // A retry waits (5 s, then 5 min): the last few minutes' deliveries took their first attempt.
      const failures = createdAt + RETRY_DELAYS[0]! + RETRY_DELAYS[1]! + 2 * 8_000 > history.now ? 0 : drawn;
      let attemptedAt = createdAt + rng.integer(5, 60);
      for (let attempt = 1; attempt <= failures + 1; attempt += 1) {
        const failed = attempt <= failures;
        const failure = rng.weighted(FAILURES);
        const durationMs = failed ? (failure.duration_ms ?? rng.integer(20, 900)) : rng.integer(40, 450);
        const nextAttemptAt = failed ? attemptedAt + durationMs + RETRY_DELAYS[attempt - 1]! : null;
        attempts.push({
          delivery_id: deliveryId,
          endpoint_id: endpoint.id,
          event_type: event.type,
          attempt,
          outcome: failed ? 'failed' : 'succeeded',
          http_status: failed ? failure.http_status : endpoint.accepts.status,
          error: failed ? failure.error : null,
          response_body: failed ? failure.response_body : endpoint.accepts.body,
          duration_ms: durationMs,
          attempted_at: new Date(attemptedAt),
          next_attempt_at: nextAttemptAt === null ? null : new Date(nextAttemptAt),
          url: endpoint.url,
        });
        const seen = failed ? lastFailure : lastSuccess;
        seen.set(endpoint.id, Math.max(seen.get(endpoint.id) ?? 0, attemptedAt + durationMs));
        if (nextAttemptAt !== null) attemptedAt = nextAttemptAt;
        else attemptedAt += durationMs;
      }
      deliveries.push({
        id: deliveryId,
        workspace_id: workspaceId,
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_seq: event.seq,
        event_type: event.type,
        status: 'succeeded',
        attempt_count: failures + 1,
        next_attempt_at: null,
        created_at: new Date(createdAt),
        completed_at: new Date(attemptedAt),
      });
    }
  }
  await insertInBatches(trx, 'webhook_deliveries', deliveries);
  await insertInBatches(trx, 'webhook_attempts', attempts);
  for (const endpoint of endpoints) {
    const success = lastSuccess.get(endpoint.id);
    const failure = lastFailure.get(endpoint.id);
    await trx('webhook_endpoints')
      .where({ id: endpoint.id })
      .update({
        last_success_at: success === undefined ? null : new Date(success),
        last_failure_at: failure === undefined ? null : new Date(failure),
      });
  }
  // Every replayed event leaves the outbox here: its deliveries, if any, are the ones above.
  await trx('event_outbox')
    .whereIn('seq', trx('events').select('seq').where({ workspace_id: workspaceId }))
    .delete();
}
