import type Stripe from 'stripe';
import { inTransaction, type Db } from '@retention/db';
import {
  apiKeyOf,
  applyProcessorChanges,
  finishBackfill,
  rejectProcessorKey,
  saveBackfillProgress,
  setBackfillWaiting,
  type BackfillPhase,
  type ConnectionRow,
  type ProcessorChange,
} from '@retention/domain';
import { createStripeClient, isKeyRejected, isPermissionDenied, isRateLimited, retryAfterMs } from './client.js';
import { invoiceFailed } from './normalise.js';
import { customerFacts, int, isObject, str, subscriptionFacts, time, type StripeObject } from './objects.js';
import type { StripeSettings } from './apply.js';

/**
 * The backfill (docs/processor.md): customers, then subscriptions, then open invoices, each
 * listed with the library's auto-pagination from the cursor saved by the last item that
 * committed, so a run that dies resumes where it stopped. A page's items are imported together
 * with the cursor of its last in one transaction (one commit a page, not one an item: an import
 * of 100,000 customers made 100,000 commits); what a run had listed before it stops, fails or
 * waits is saved first. Imported history emits no webhook event (like `fixtures load`). A 429 waits as long as Stripe asks, however many times it asks (rateLimitWaitMs),
 * saying until when on the connection, and resumes from the cursor.
 */

const PHASES: readonly BackfillPhase[] = ['customers', 'subscriptions', 'invoices'];
const PAGE_SIZE = 100;
/** The longest one wait of a 429 lasts, whatever Stripe's Retry-After or the back-off say. */
export const MAX_RATE_LIMIT_WAIT_MS = 60_000;
/** Without Retry-After: 1 s, doubling to this, each with jitter. */
const RATE_LIMIT_BACKOFF_CAP_MS = 30_000;

/**
 * How long to wait after the n-th 429 in a row (n from 0): Retry-After when Stripe gives one,
 * else exponential back-off with full jitter (Stripe's advice: workers that were limited
 * together do not all come back in the same second). No limit on how many waits: a run gives up
 * on a 429 only when it is stopped, since Stripe's limit always lifts and giving up threw away
 * the owner's wait.
 */
export function rateLimitWaitMs(waits: number, retryAfter: number | null, random = Math.random): number {
  if (retryAfter !== null) return Math.min(MAX_RATE_LIMIT_WAIT_MS, retryAfter);
  const ceiling = Math.min(RATE_LIMIT_BACKOFF_CAP_MS, 1_000 * 2 ** Math.min(waits, 15));
  return Math.max(250, Math.round(ceiling / 2 + (random() * ceiling) / 2));
}

export interface BackfillOptions extends StripeSettings {
  leaseMs: number;
  /** Waits between 429s; tests shorten it. Ends early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Stops the run between two items (the worker is shutting down); it resumes from its cursor later. */
  signal?: AbortSignal;
}

type Listing = AsyncIterable<StripeObject>;
type ListedItem = { id: string; found: Awaited<ReturnType<typeof changesOf>> };

class BackfillSuperseded extends Error {}

function listPhase(stripe: Stripe, phase: BackfillPhase, cursor: string | null): Listing {
  const page = { limit: PAGE_SIZE, ...(cursor !== null && { starting_after: cursor }) };
  switch (phase) {
    case 'customers':
      return stripe.customers.list(page) as unknown as Listing;
    case 'subscriptions':
      return stripe.subscriptions.list({ ...page, status: 'all' }) as unknown as Listing;
    case 'invoices':
      return stripe.invoices.list({ ...page, status: 'open' }) as unknown as Listing;
  }
}

async function changesOf(
  phase: BackfillPhase,
  item: StripeObject,
  stripe: Stripe,
  onKeyRejected: () => Promise<void>,
): Promise<{ changes: ProcessorChange[]; at: Date } | null> {
  const now = new Date();
  if (phase === 'customers') {
    const customer = customerFacts(item, now);
    return customer && { changes: [{ kind: 'customer', customer }], at: now };
  }
  if (phase === 'subscriptions') {
    const subscription = subscriptionFacts(item, now);
    return subscription && { changes: [{ kind: 'subscription', subscription, created: false }], at: now };
  }
  // An open invoice is a recovery in progress once a payment of it has failed.
  if ((int(item.attempt_count) ?? 0) < 1 || item.status !== 'open') return null;
  const transitions = isObject(item.status_transitions) ? item.status_transitions : {};
  const failedAt = time(transitions.finalized_at) ?? time(item.created) ?? now;
  // A lookup that fails after the library's own retries gives `unknown` rather than failing the whole run.
  const changes = await invoiceFailed(item, failedAt, { stripe, onKeyRejected, lastAttempt: true });
  return changes && { changes, at: failedAt };
}

export async function runStripeBackfill(db: Db, connection: ConnectionRow, options: BackfillOptions): Promise<void> {
  const sleep = options.sleep ?? abortableSleep;
  const apiKey = apiKeyOf(options.secretsKey, connection);
  if (apiKey === null) return finishBackfill(db, connection, 'the connection has no API key');
  const stripe = await createStripeClient(apiKey, options.apiBase);
  let phaseIndex = connection.backfill_phase === null ? 0 : PHASES.indexOf(connection.backfill_phase);
  let cursor = connection.backfill_cursor;
  let waits = 0;
  const rejectKey = () => inTransaction(db, (trx) => rejectProcessorKey(trx, connection.id));

  /** Listed and looked up, not yet saved: at most a page. */
  let listed: ListedItem[] = [];
  const saveListed = async (phase: BackfillPhase) => {
    if (listed.length === 0) return;
    const items = listed;
    listed = [];
    await inTransaction(db, async (trx) => {
      const imported = { phase, count: items.filter((item) => item.found !== null).length };
      const current = await saveBackfillProgress(
        trx,
        connection,
        { phase, cursor: items.at(-1)!.id, imported },
        options.leaseMs,
      );
      if (!current) throw new BackfillSuperseded();
      for (const { found } of items) {
        if (!found) continue;
        await applyProcessorChanges(
          { trx, connection_id: connection.id, workspace_id: connection.workspace_id, at: found.at, silent: true },
          found.changes,
        );
      }
    });
    cursor = items.at(-1)!.id;
    waits = 0;
  };

  while (phaseIndex < PHASES.length) {
    const phase = PHASES[phaseIndex]!;
    try {
      try {
        for await (const item of listPhase(stripe, phase, cursor)) {
          if (options.signal?.aborted) return;
          const id = str(item.id);
          if (id === null) continue;
          let keyRejected = false;
          const found = await changesOf(phase, item, stripe, () => {
            keyRejected = true;
            return Promise.resolve();
          });
          if (keyRejected) throw Object.assign(new Error('key rejected'), { statusCode: 401 });
          listed.push({ id, found });
          if (listed.length === PAGE_SIZE) await saveListed(phase);
        }
      } finally {
        // Stopped, failed or told to wait: what was listed before is kept, so a resumed run goes on after it.
        await saveListed(phase);
      }
      phaseIndex += 1;
      cursor = null;
      if (phaseIndex < PHASES.length) {
        const current = await inTransaction(db, (trx) =>
          saveBackfillProgress(trx, connection, { phase: PHASES[phaseIndex]!, cursor: null }, options.leaseMs),
        );
        if (!current) return;
      }
    } catch (error) {
      // Taken over by another worker, or the owner reconnected or disconnected: not ours to finish.
      if (error instanceof BackfillSuperseded) return;
      if (isKeyRejected(error)) {
        await rejectKey();
        return finishBackfill(db, connection, 'Stripe refused the API key (401)');
      }
      if (isPermissionDenied(error)) {
        const resource = { customers: 'Customers', subscriptions: 'Subscriptions', invoices: 'Invoices' }[phase];
        return finishBackfill(
          db,
          connection,
          `Stripe refused the API key read access to ${resource} (403): in Stripe, edit the restricted key, ` +
            `set ${resource} to Read, then Import again`,
        );
      }
      if (isRateLimited(error)) {
        const waitMs = rateLimitWaitMs(waits, retryAfterMs(error));
        await setBackfillWaiting(db, connection, new Date(Date.now() + waitMs), options.leaseMs);
        await sleep(waitMs, options.signal);
        if (options.signal?.aborted) return;
        waits += 1;
        continue;
      }
      throw error;
    }
  }
  await finishBackfill(db, connection, null);
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
