import type Stripe from 'stripe';
import { inTransaction, type Db } from '@retention/db';
import {
  apiKeyOf,
  applyProcessorChanges,
  finishBackfill,
  rejectProcessorKey,
  saveBackfillProgress,
  type BackfillPhase,
  type ConnectionRow,
  type ProcessorChange,
} from '@retention/domain';
import { createStripeClient, isKeyRejected, isRateLimited, retryAfterMs } from './client.js';
import { invoiceFailed } from './normalise.js';
import { customerFacts, int, isObject, str, subscriptionFacts, time, type StripeObject } from './objects.js';
import type { StripeSettings } from './apply.js';

/**
 * The backfill (docs/processor.md): customers, then subscriptions, then open invoices, each
 * listed with the library's auto-pagination from the cursor saved by the last item that
 * committed, so a run that dies resumes where it stopped. Each item is imported and its
 * cursor saved in one transaction. Imported history emits no webhook event (like `fixtures
 * load`). A 429 waits (Retry-After, or doubling from 1 s) and resumes from the cursor.
 */

const PHASES: readonly BackfillPhase[] = ['customers', 'subscriptions', 'invoices'];
const PAGE_SIZE = 100;
const MAX_RATE_LIMIT_WAITS = 12;

export interface BackfillOptions extends StripeSettings {
  leaseMs: number;
  /** Waits between 429s; tests shorten it. */
  sleep?: (ms: number) => Promise<void>;
  /** Stops the run between two items (the worker is shutting down); it resumes from its cursor later. */
  signal?: AbortSignal;
}

type Listing = AsyncIterable<StripeObject>;

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
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  const apiKey = apiKeyOf(options.secretsKey, connection);
  if (apiKey === null) return finishBackfill(db, connection, 'the connection has no API key');
  const stripe = createStripeClient(apiKey, options.apiBase);
  let phaseIndex = connection.backfill_phase === null ? 0 : PHASES.indexOf(connection.backfill_phase);
  let cursor = connection.backfill_cursor;
  let waits = 0;
  const rejectKey = () => inTransaction(db, (trx) => rejectProcessorKey(trx, connection.id));

  while (phaseIndex < PHASES.length) {
    const phase = PHASES[phaseIndex]!;
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
        await inTransaction(db, async (trx) => {
          const current = await saveBackfillProgress(
            trx,
            connection,
            { phase, cursor: id, ...(found && { imported: phase }) },
            options.leaseMs,
          );
          if (!current) throw new BackfillSuperseded();
          if (found) {
            await applyProcessorChanges(
              { trx, connection_id: connection.id, workspace_id: connection.workspace_id, at: found.at, silent: true },
              found.changes,
            );
          }
        });
        cursor = id;
        waits = 0;
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
      if (isRateLimited(error) && waits < MAX_RATE_LIMIT_WAITS) {
        await sleep(retryAfterMs(error) ?? Math.min(30_000, 1_000 * 2 ** waits));
        waits += 1;
        continue;
      }
      throw error;
    }
  }
  await finishBackfill(db, connection, null);
}
