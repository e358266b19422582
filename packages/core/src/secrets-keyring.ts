/**
 * The keys a process holds for the secrets at rest. Usually SECRETS_KEY alone, a plain 32-byte
 * Buffer, exactly as before key rotation existed (and what tests and benches pass). While a
 * rotation is under way (docs/operator-cli.md, "Rotating the key") it is SECRETS_KEY with
 * SECRETS_KEY_PREVIOUS beside it: every value is sealed with the current key and opened with
 * the current one first, then with the previous, so the secrets sealed before the rotation keep
 * signing until `secrets reseal` has moved them to the new key.
 *
 * A Buffer rather than `{ current }` for the usual case keeps the seventy places the key is
 * handed to unchanged: they take a SecretsKeyring and pass it on to sealSecret and openSecret.
 */
export type SecretsKeyring = Buffer | { readonly current: Buffer; readonly previous: Buffer };

/** SECRETS_KEY, with SECRETS_KEY_PREVIOUS when it is set (and differs). */
export function secretsKeyring(current: Buffer, previous: Buffer | null): SecretsKeyring {
  return previous === null || previous.equals(current) ? current : { current, previous };
}

/** The key every value is sealed with: SECRETS_KEY, never the previous one. */
export function currentKey(keys: SecretsKeyring): Buffer {
  return Buffer.isBuffer(keys) ? keys : keys.current;
}

/** The previous key, during a rotation; null otherwise. */
export function previousKey(keys: SecretsKeyring): Buffer | null {
  return Buffer.isBuffer(keys) ? null : keys.previous;
}
