import { invalidField, processorUnavailable, scrubSecrets, type SecretsKeyring } from '@retention/core';
import type { Db } from '@retention/db';
import {
  connectProcessor,
  keptKeyToCheck,
  validateProcessorConnection,
  type Actor,
  type ConnectionRow,
  type KeyCheck,
} from '@retention/domain';
import { checkStripeKey, isStripeUnreachable, type KeyVerdict } from './client.js';

export interface ConnectStripeInput {
  workspace_id: string;
  webhook_secret: string;
  api_key?: string;
  /** A key of the other mode than the connection's is refused without it (connectProcessor). */
  confirm_mode_switch?: boolean;
}

/**
 * Connects a workspace's Stripe account, for the CLI and the dashboard alike. The input is
 * checked before anything else; then a key is tried
 * before anything is saved: one Stripe refuses (401) is refused with nothing stored, and one it
 * accepts makes the connection `connected` at once (docs/processor.md, "Connecting"). Without a
 * key the stored one is kept; on a connection that is not `connected` it is tried again first,
 * the same way (docs/processor.md, "Reconnecting").
 */
export async function connectStripe(
  db: Db,
  settings: { secretsKey: SecretsKeyring; stripeApiBase: string },
  input: ConnectStripeInput,
  actor: Actor,
): Promise<ConnectionRow> {
  // The input's shape first: nothing malformed, and no full-access key, is sent to Stripe.
  validateProcessorConnection({ ...input, provider: 'stripe' });
  let keyCheck: KeyCheck = 'none';
  if (input.api_key !== undefined) {
    await tryKey(input.api_key, settings.stripeApiBase, 'the key');
    keyCheck = 'accepted';
  } else {
    const kept = await keptKeyToCheck(db, settings.secretsKey, input.workspace_id);
    if (kept) {
      await tryKey(
        kept.api_key,
        settings.stripeApiBase,
        'the stored key',
        ': give a new key, or remove the stored one',
      );
      keyCheck = { kept_key_accepted: kept.sealed };
    }
  }
  return connectProcessor(db, settings.secretsKey, { ...input, provider: 'stripe' }, keyCheck, actor);
}

async function tryKey(apiKey: string, apiBase: string, which: string, advice = ''): Promise<void> {
  let verdict: KeyVerdict;
  try {
    verdict = await checkStripeKey(apiKey, apiBase);
  } catch (error) {
    // Stripe's failure, not the key's: the field is not marked wrong, the form says it as a whole.
    throw processorUnavailable(unansweredKeyCheckReason(error, which));
  }
  if (verdict === 'rejected')
    throw invalidField('api_key', `Stripe refused ${which} (401); nothing was saved${advice}`);
  if (verdict !== 'accepted') throw invalidField('api_key', missingPermissionsReason(verdict.missing, which));
}

/**
 * A restricted key without a read permission the service needs: which, and how to give it.
 * Waiting does not fix this, so the words do not say to try again later.
 */
function missingPermissionsReason(missing: string[], which: string): string {
  const list = missing.join(', ');
  const subject = which.charAt(0).toUpperCase() + which.slice(1);
  return (
    `${subject} has no read access to ${list}, so nothing was saved. In Stripe, open Developers, API keys, ` +
    `edit the restricted key and set ${missing.length === 1 ? 'it' : 'each of these'} to Read ` +
    `(the service reads customers, subscriptions, invoices, invoice payments, payment intents and events), ` +
    'then connect again'
  );
}

/**
 * Why a key could not be tried, in words for the owner at the form (and the operator at the
 * CLI): the sentence first, Stripe's own detail (when Stripe answered at all) after it, with
 * anything shaped like a key taken out (Stripe names a key by its last four in some errors).
 */
function unansweredKeyCheckReason(error: unknown, which: string): string {
  if (isStripeUnreachable(error))
    return `Stripe could not be reached to check ${which}, so nothing was saved; try again in a few minutes`;
  const detail = scrubSecrets(error instanceof Error ? error.message : String(error));
  return `Stripe could not check ${which}, so nothing was saved; try again in a few minutes (Stripe said: ${detail})`;
}
