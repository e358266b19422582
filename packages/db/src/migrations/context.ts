/**
 * What a migration is handed beside its transaction. `secretsKey` is the process's SECRETS_KEY
 * (config.secretsKey, 32 bytes): the migrations that move secrets to rest seal them with it,
 * and their `down()` opens them with it.
 */
export interface MigrationContext {
  secretsKey: Buffer;
}

/** The key, or an error naming SECRETS_KEY: thrown before anything is changed. */
export function requireSecretsKey(context: Partial<MigrationContext> | undefined): Buffer {
  const key = context?.secretsKey;
  if (!Buffer.isBuffer(key) || key.length !== 32) {
    throw new Error(
      'migrations need SECRETS_KEY (32 random bytes as base64 or hex, the key the services use): ' +
        'the secrets stored at rest are sealed and opened with it; nothing was migrated',
    );
  }
  return key;
}
