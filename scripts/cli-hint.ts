/**
 * The operator CLI command `npm start` suggests on a restart, with the environment it needs to
 * reach what this start reaches. Printed bare, `npm run cli -- token create ...` reads the
 * defaults and mints the token in the default database, not the one the service runs on.
 */
import { loadConfig, type Config } from '@retention/core';

/** The variables the CLI reads to find the data and to link to it, with the setting each decides. */
const CLI_VARIABLES = {
  DATABASE_URL: 'databaseUrl',
  PGUSER: null, // decides the database login when DATABASE_URL names none (libpq's rule)
  REDIS_URL: 'redisUrl',
  REDIS_KEY_PREFIX: 'redisKeyPrefix',
  // How the CLI learns this start's PORT (npm start sets it to http://localhost:$PORT when
  // unset): the links it prints (team invite, password reset) must point at this API.
  BASE_URL: 'baseUrl',
} as const satisfies Record<string, keyof Config | null>;

/**
 * `command` prefixed with each CLI variable that `env` sets to other than its default, quoted
 * for a POSIX shell. A URL holding a password is never printed: the hint says to set that
 * variable as when starting instead, and so for a SECRETS_KEY that was given (when none was,
 * npm run cli uses the same development key as npm start).
 */
export function cliCommandHint(
  command: string,
  env: NodeJS.ProcessEnv,
  secretsKeyGiven: boolean,
): { command: string; setAsWhenStarting: string[] } {
  const config = loadConfig(env);
  const settings: string[] = [];
  const setAsWhenStarting: string[] = [];
  for (const [name, field] of Object.entries(CLI_VARIABLES)) {
    const value = env[name]?.trim();
    if (!value) continue;
    if (field !== null && loadConfig({ ...env, [name]: '' })[field] === config[field]) continue;
    if (hasPassword(value)) setAsWhenStarting.push(name);
    else settings.push(`${name}=${shellQuoted(value)}`);
  }
  if (secretsKeyGiven) setAsWhenStarting.push('SECRETS_KEY');
  return { command: [...settings, command].join(' '), setAsWhenStarting };
}

function hasPassword(value: string): boolean {
  try {
    return new URL(value).password !== '';
  } catch {
    return false;
  }
}

/** As it is when it needs no quotes, else in single quotes (a `'` inside closed and escaped). */
function shellQuoted(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
