import { invalidParam } from '@retention/core';
import type { Db } from '@retention/db';
import { connectProcessor, type Actor, type ConnectionRow } from '@retention/domain';
import { checkStripeKey } from './client.js';

export interface ConnectStripeInput {
  workspace_id: string;
  webhook_secret: string;
  api_key?: string;
}

/**
 * Connects a workspace's Stripe account, for the CLI and the dashboard alike. A key is tried
 * before anything is saved: one Stripe refuses (401) is refused with nothing stored, and one it
 * accepts makes the connection `connected` at once (docs/processor.md, "Connecting").
 */
export async function connectStripe(
  db: Db,
  settings: { secretsKey: Buffer; stripeApiBase: string },
  input: ConnectStripeInput,
  actor: Actor,
): Promise<ConnectionRow> {
  let keyCheck: 'none' | 'accepted' = 'none';
  if (input.api_key !== undefined) {
    let verdict: 'accepted' | 'rejected';
    try {
      verdict = await checkStripeKey(input.api_key, settings.stripeApiBase);
    } catch (error) {
      throw invalidParam(
        `api_key: Stripe could not be asked about the key (${(error as Error).message}); nothing was saved, try again`,
      );
    }
    if (verdict === 'rejected') throw invalidParam('api_key: Stripe refused the key (401); nothing was saved');
    keyCheck = 'accepted';
  }
  return connectProcessor(db, settings.secretsKey, { ...input, provider: 'stripe' }, keyCheck, actor);
}
