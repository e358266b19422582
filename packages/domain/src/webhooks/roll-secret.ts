import {
  conflict,
  invalidField,
  newSigningSecret,
  notFound,
  openSecret,
  sealSecret,
  SecretOpenError,
  toIsoMillisOrNull,
  type SecretsKeyring,
} from '@retention/core';
import { inTransaction, type Db, type Queryable } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { assertUuid } from '../validate.js';
import { endpointTarget, findEndpointRow } from './endpoints.js';
import { assertWebhookManager } from './permissions.js';
import { openOverlapEnd, openSigningSecrets, type SealedSigningSecrets } from './signing-secrets.js';

/** Roll secret: a new signing secret, the old one kept valid for an overlap of at most 24 h. */
export const MAX_SECRET_OVERLAP_SECONDS = 86_400;

/**
 * The secrets that sign a delivery now, opened: the current one, then the previous while its
 * overlap lasts. Throws SecretOpenError when SECRETS_KEY cannot open them.
 */
export async function signingSecretsOf(
  db: Queryable,
  secretsKey: SecretsKeyring,
  endpointId: string,
): Promise<string[]> {
  const row = await db('webhook_endpoints')
    .where({ id: endpointId })
    .first<SealedSigningSecrets | undefined>(
      'signing_secret_sealed',
      'previous_signing_secret_sealed',
      'previous_secret_expires_at',
    );
  if (!row) throw notFound(`No webhook endpoint with id ${endpointId}`);
  return openSigningSecrets(secretsKey, row);
}

/** One secret a receiver may verify with after a roll, and until when deliveries carry it. */
export interface AcceptedSecret {
  /** `new`: the secret this roll answers; `replaced`: the one it replaced, during the overlap. */
  which: 'new' | 'replaced';
  /** Null: until the next roll. */
  until: string | null;
}

export interface RolledSecret {
  id: string;
  secret: string;
  previous_secret_expires_at: string | null;
  /** Every secret that signs deliveries from now on, newest first (docs/webhooks.md). */
  accepted_secrets: AcceptedSecret[];
}

/**
 * The new secret is sealed with SECRETS_KEY; with an overlap the current one is kept as the
 * previous, as it is sealed. A current secret this key cannot open (a database sealed under
 * another key) cannot sign during an overlap: that roll is refused (409), and a roll with no
 * overlap, which needs nothing of the old secret, is how such an endpoint gets a usable secret.
 *
 * An endpoint keeps at most one previous secret, so a roll while an earlier roll's overlap is
 * still open would stop that secret before the time its roll promised. That roll is refused
 * (409, saying until when and how to end the overlap) unless `end_overlap` says to stop it now
 * (docs/decisions.md, "A roll never shortens an overlap it promised").
 */
export async function rollSigningSecret(
  db: Db,
  secretsKey: SecretsKeyring,
  input: { endpoint_id: string; actor_id: string; overlap_seconds?: number; end_overlap?: boolean },
  audit?: Actor,
): Promise<RolledSecret> {
  assertUuid(input.endpoint_id);
  const overlap = input.overlap_seconds ?? 0;
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_SECONDS) {
    throw invalidField('overlap_seconds', `must be an integer from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (24 h)`);
  }
  const endOverlap = input.end_overlap ?? false;
  if (typeof endOverlap !== 'boolean') throw invalidField('end_overlap', 'must be true or false');
  return inTransaction(db, async (trx) => {
    const current = await findEndpointRow(trx, input.endpoint_id, 'for-no-key-update');
    await assertWebhookManager(trx, current.workspace_id, input.actor_id);
    const now = Date.now();
    const openOverlapUntil = openOverlapEnd(current.previous_secret_expires_at, now);
    if (openOverlapUntil && !endOverlap) throw overlapStillOpen(openOverlapUntil);
    const secret = newSigningSecret();
    const expiresAt = overlap > 0 ? new Date(now + overlap * 1000) : null;
    if (expiresAt) assertOpens(secretsKey, current.signing_secret_sealed);
    await trx('webhook_endpoints')
      .where({ id: current.id })
      .update({
        signing_secret_sealed: sealSecret(secretsKey, secret),
        previous_signing_secret_sealed: expiresAt ? current.signing_secret_sealed : null,
        previous_secret_expires_at: expiresAt,
        updated_at: trx.fn.now(),
      });
    await recordSecurityEvent(trx, {
      workspace_id: current.workspace_id,
      action: 'webhook.secret_rolled',
      actor: audit ?? { type: 'operator', user_id: input.actor_id, label: 'operator CLI' },
      target: endpointTarget(current),
      // An overlap ended early is a promise withdrawn on purpose: the log says which one.
      details: { overlap_seconds: overlap, ...(openOverlapUntil && { ended_overlap_until: openOverlapUntil }) },
    });
    const previousUntil = toIsoMillisOrNull(expiresAt);
    return {
      id: current.id,
      secret,
      previous_secret_expires_at: previousUntil,
      accepted_secrets: [
        { which: 'new', until: null },
        ...(previousUntil ? [{ which: 'replaced' as const, until: previousUntil }] : []),
      ],
    };
  });
}

export interface EndedOverlap {
  id: string;
  /** Always null afterwards: only the current secret signs. */
  previous_secret_expires_at: null;
  /** Until when the secret it stopped was to be accepted; null when no overlap was open (nothing changed). */
  ended_overlap_until: string | null;
}

/**
 * End the overlap now, without rolling: the secret a roll replaced stops signing at once, and
 * deliveries carry the current secret alone (a receiver moved to it early, or the old one
 * leaked). Ending when no overlap is open changes nothing and is not an error, so a retried
 * request succeeds: `ended_overlap_until` null says nothing was ended, and nothing is logged
 * (docs/webhooks.md, "Ending an overlap early").
 */
export async function endSecretOverlap(
  db: Db,
  input: { endpoint_id: string; actor_id: string },
  audit?: Actor,
): Promise<EndedOverlap> {
  assertUuid(input.endpoint_id);
  return inTransaction(db, async (trx) => {
    const current = await findEndpointRow(trx, input.endpoint_id, 'for-no-key-update');
    await assertWebhookManager(trx, current.workspace_id, input.actor_id);
    const openUntil = openOverlapEnd(current.previous_secret_expires_at);
    if (openUntil) {
      await trx('webhook_endpoints')
        .where({ id: current.id })
        .update({ previous_signing_secret_sealed: null, previous_secret_expires_at: null, updated_at: trx.fn.now() });
      await recordSecurityEvent(trx, {
        workspace_id: current.workspace_id,
        action: 'webhook.secret_overlap_ended',
        actor: audit ?? { type: 'operator', user_id: input.actor_id, label: 'operator CLI' },
        target: endpointTarget(current),
        details: { ended_overlap_until: openUntil },
      });
    }
    return { id: current.id, previous_secret_expires_at: null, ended_overlap_until: openUntil };
  });
}

function overlapStillOpen(until: string) {
  return conflict(
    `The previous signing secret is still accepted until ${until}, as its roll promised; rolling again now ` +
      'would stop it at once. Roll again after that time, or end its overlap now: roll with end_overlap ' +
      '(CLI: --end-overlap; dashboard: "End the overlap now" in Roll secret).',
    // A page that opened Roll secret before another tab rolled reads the endpoint again on it.
    { code: 'overlap_open' },
  );
}

function assertOpens(secretsKey: SecretsKeyring, sealed: string): void {
  try {
    openSecret(secretsKey, sealed);
  } catch (error) {
    if (!(error instanceof SecretOpenError)) throw error;
    throw conflict(
      'The current signing secret cannot be decrypted with this SECRETS_KEY, so it cannot stay valid ' +
        'during an overlap: roll the secret with no overlap.',
    );
  }
}
