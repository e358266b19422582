import { openSecret } from '@retention/core';
import type { Queryable } from '@retention/db';
import { testSecretsKeyBytes } from './environment.js';

interface StoredSigningSecrets {
  /** The columns as stored: sealed values, never a `whsec_` in the clear. */
  sealed: { current: string; previous: string | null };
  /** The same, opened with the run's SECRETS_KEY. */
  current: string;
  previous: string | null;
}

/**
 * An endpoint's signing secrets as the database holds them, and opened with the run's key:
 * the one way tests read the columns, so that each can check both that nothing is stored in
 * the clear and that what is stored is what the API or the CLI handed out.
 */
export async function storedSigningSecrets(db: Queryable, endpointId: string): Promise<StoredSigningSecrets> {
  const row = await db('webhook_endpoints')
    .where({ id: endpointId })
    .first<{ signing_secret_sealed: string; previous_signing_secret_sealed: string | null } | undefined>(
      'signing_secret_sealed',
      'previous_signing_secret_sealed',
    );
  if (!row) throw new Error(`no webhook endpoint ${endpointId}`);
  const key = testSecretsKeyBytes();
  return {
    sealed: { current: row.signing_secret_sealed, previous: row.previous_signing_secret_sealed },
    current: openSecret(key, row.signing_secret_sealed),
    previous: row.previous_signing_secret_sealed === null ? null : openSecret(key, row.previous_signing_secret_sealed),
  };
}
