import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm start` keeps the development key it makes: the repository's root, git-ignored. */
export const DEVELOPMENT_SECRETS_KEY_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../.secrets-key.dev',
);

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

/**
 * The environment, with the development key `npm start` made as SECRETS_KEY when none is set
 * and that key exists: the operator CLI run beside the demo opens the secrets the demo sealed
 * (a processor's keys) instead of stopping at a missing SECRETS_KEY. Nothing is made here,
 * and an environment that sets SECRETS_KEY (production always does) is left as it is.
 */
export function withDevelopmentSecretsKey(
  env: NodeJS.ProcessEnv,
  file = DEVELOPMENT_SECRETS_KEY_FILE,
): NodeJS.ProcessEnv {
  if (env.SECRETS_KEY?.trim() || !existsSync(file)) return env;
  return { ...env, SECRETS_KEY: readFileSync(file, 'utf8').trim() };
}
