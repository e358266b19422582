import { currentKey, previousKey, type SecretsKeyring } from '@retention/core';

/**
 * What a migration is handed beside its transaction. `secretsKey` is the process's SECRETS_KEY
 * (config.secretsKey, 32 bytes), with SECRETS_KEY_PREVIOUS beside it during a key rotation:
 * the migrations that move secrets to rest seal them with SECRETS_KEY, and their `down()`
 * opens them with either key.
 */
export interface MigrationContext {
  secretsKey: SecretsKeyring;
}

/** The keys, or an error naming SECRETS_KEY: thrown before anything is changed. */
export function requireSecretsKey(context: Partial<MigrationContext> | undefined): SecretsKeyring {
  const keys = context?.secretsKey;
  const valid = (key: unknown) => Buffer.isBuffer(key) && key.length === 32;
  if (keys === undefined || !valid(currentKey(keys)) || (previousKey(keys) !== null && !valid(previousKey(keys)))) {
    throw new Error(
      'migrations need SECRETS_KEY (32 random bytes as base64 or hex, the key the services use): ' +
        'the secrets stored at rest are sealed and opened with it; nothing was migrated',
    );
  }
  return keys;
}
