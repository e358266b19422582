import { invalidParam, newSigningSecret, toIsoMillisOrNull } from '@retention/core';
import { inTransaction, type Db, type Queryable } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { assertUuid } from '../validate.js';
import { findEndpointRow } from './endpoints.js';
import { assertWebhookManager } from './permissions.js';

/** Roll secret: a new signing secret, the old one kept valid for an overlap of at most 24 h. */
export const MAX_SECRET_OVERLAP_SECONDS = 86_400;

/** The secrets that sign a delivery now: the current one, then the previous while its overlap lasts. */
export async function signingSecretsOf(db: Queryable, endpointId: string): Promise<string[]> {
  const row = await db('webhook_endpoints')
    .where({ id: endpointId })
    .first<{ signing_secret: string; previous_signing_secret: string | null; previous_secret_expires_at: Date | null }>(
      'signing_secret',
      'previous_signing_secret',
      'previous_secret_expires_at',
    );
  if (!row) return [];
  const previousValid =
    row.previous_signing_secret &&
    row.previous_secret_expires_at &&
    row.previous_secret_expires_at.getTime() > Date.now();
  return previousValid ? [row.signing_secret, row.previous_signing_secret!] : [row.signing_secret];
}

export async function rollSigningSecret(
  db: Db,
  input: { endpoint_id: string; actor_id: string; overlap_seconds?: number },
  audit?: Actor,
): Promise<{ id: string; secret: string; previous_secret_expires_at: string | null }> {
  assertUuid(input.endpoint_id);
  const overlap = input.overlap_seconds ?? 0;
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_SECONDS) {
    throw invalidParam(`overlap_seconds: must be an integer from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (24 h)`);
  }
  return inTransaction(db, async (trx) => {
    const current = await findEndpointRow(trx, input.endpoint_id, 'for-no-key-update');
    await assertWebhookManager(trx, current.workspace_id, input.actor_id);
    const secret = newSigningSecret();
    const expiresAt = overlap > 0 ? new Date(Date.now() + overlap * 1000) : null;
    await trx('webhook_endpoints')
      .where({ id: current.id })
      .update({
        signing_secret: secret,
        previous_signing_secret: expiresAt ? current.signing_secret : null,
        previous_secret_expires_at: expiresAt,
        updated_at: trx.fn.now(),
      });
    await recordSecurityEvent(trx, {
      workspace_id: current.workspace_id,
      action: 'webhook.secret_rolled',
      actor: audit ?? { type: 'operator', user_id: input.actor_id, label: 'operator CLI' },
      target: { type: 'webhook_endpoint', id: current.id, label: current.url },
      details: { overlap_seconds: overlap },
    });
    return { id: current.id, secret, previous_secret_expires_at: toIsoMillisOrNull(expiresAt) };
  });
}
