import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A SECRETS_KEY for `npm start` when none is set: made once and kept in a git-ignored file,
 * so the processor secrets sealed under it can still be opened after a restart. It says so,
 * and how to set a real one. Production sets SECRETS_KEY itself (compose requires it).
 */
export function developmentSecretsKey(file: string, say: (text: string) => void): string {
  const shown = path.relative(process.cwd(), file) || file;
  if (existsSync(file)) {
    say(`SECRETS_KEY is not set: using the development key in ${shown}.`);
    return readFileSync(file, 'utf8').trim();
  }
  const key = randomBytes(32).toString('base64');
  // `wx`: never overwrite a key another start wrote meanwhile; the secrets it sealed need it.
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  say(
    `SECRETS_KEY is not set: made a development key and saved it in ${shown} (git-ignored). ` +
      'Set SECRETS_KEY yourself anywhere else: `openssl rand -base64 32`.',
  );
  return key;
}
