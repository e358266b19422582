import { redactUrl } from '@retention/core';
import { isConnectionError, pgErrorCode } from './connection.js';

/**
 * One-paragraph explanations of a failure to use a backing service, for people starting the
 * service on a laptop or running the operator CLI: which service, at which address, and what
 * to do about it. The same words serve `npm start`, `npm run migrate`, the services and the CLI.
 *
 * With NODE_ENV=production (the images, a deployment) the laptop's advice (docker compose's
 * dev override, a distribution's package, `createuser -s $USER`, `npm start`) is left out: the
 * line names the service, its address and the variable that set it, which is what an
 * operator of a deployment can act on.
 */

/** Whether `env` is a deployment's: NODE_ENV=production. */
function inProduction(env: NodeJS.ProcessEnv): boolean {
  return env.NODE_ENV === 'production';
}

const VARIABLES = { PostgreSQL: 'DATABASE_URL', Redis: 'REDIS_URL' } as const;

/** A database that answers but cannot be used as configured. */
export type DatabaseSetupProblem = 'missing_database' | 'authentication' | 'not_migrated';

export function databaseSetupProblem(error: unknown): DatabaseSetupProblem | null {
  const code = pgErrorCode(error);
  if (code === '3D000') return 'missing_database'; // invalid_catalog_name
  // invalid_authorization_specification (an unknown role), invalid_password.
  if (code === '28000' || code === '28P01') return 'authentication';
  // pg's SCRAM client when the server asks for a password and DATABASE_URL carries none (or an empty one).
  if (error instanceof Error && /^SASL: .*client password must be a (non-empty )?string/.test(error.message))
    return 'authentication';
  if (code === '42P01') return 'not_migrated'; // undefined_table
  return null;
}

export function isDatabaseSetupError(error: unknown): boolean {
  return databaseSetupProblem(error) !== null;
}

const DEFAULT_ADDRESSES = { PostgreSQL: 'postgres://localhost:5432/retention', Redis: 'redis://127.0.0.1:6379' };

export function describeConnectionFailure(
  service: 'PostgreSQL' | 'Redis',
  url: string | undefined,
  error: unknown,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const reason = error instanceof Error ? error.message : String(error);
  const address = url ? redactUrl(url) : DEFAULT_ADDRESSES[service];
  const production = inProduction(env);
  if (service === 'PostgreSQL') {
    const problem = databaseSetupProblem(error);
    if (problem) return describeSetupProblem(problem, address, reason, production);
    if (!isConnectionError(error)) return reason;
  }
  if (production) return `cannot reach ${service} at ${address} (${reason}), set by ${VARIABLES[service]}.`;
  // The compose file keeps both off the host network; its dev override publishes them on loopback.
  const compose = 'docker compose -f docker-compose.yml -f infra/docker/compose.dev.yml up -d postgres redis';
  const how =
    service === 'PostgreSQL'
      ? `start it with \`${compose}\` (then DATABASE_URL=postgres://retention:retention@localhost:5432/retention), or install your distribution's postgresql package`
      : `start it with \`${compose}\`, or install your distribution's redis-server package`;
  return `cannot reach ${service} at ${address} (${reason}); ${how}.`;
}

function describeSetupProblem(
  problem: DatabaseSetupProblem,
  address: string,
  reason: string,
  production: boolean,
): string {
  switch (problem) {
    case 'missing_database':
      return `the database of ${address} does not exist (${reason}); create and migrate it with \`npm run migrate\`${production ? '' : ' (`npm start` does both by itself)'}.`;
    case 'authentication':
      if (production)
        return `PostgreSQL at ${address} refused the login (${reason}); check the user and password of DATABASE_URL.`;
      return (
        `PostgreSQL at ${address} refused the login (${reason}); create a role for your user with ` +
        '`sudo -u postgres createuser -s $USER`, or set DATABASE_URL with a user and password ' +
        '(postgres://USER:PASSWORD@HOST:5432/retention).'
      );
    case 'not_migrated':
      // A query error's message starts with the SQL; the relation is all that helps here.
      return notMigrated(
        address,
        /relation "[^"]+" does not exist/.exec(reason)?.[0] ?? 'a table is missing',
        production,
      );
  }
}

/** A database that lacks `missing`, migrations of this release (requireUsableDatabase). */
export function describeNotMigrated(
  databaseUrl: string,
  missing: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string {
  const what =
    missing.length === 1
      ? `migration ${missing[0]} is not applied`
      : `${missing.length} migrations are not applied, from ${missing[0]}`;
  return notMigrated(redactUrl(databaseUrl), what, inProduction(env));
}

function notMigrated(address: string, detail: string, production: boolean): string {
  return `the database of ${address} is not migrated (${detail}); apply the migrations with \`npm run migrate\`${production ? '' : ' (`npm start` does it by itself)'}.`;
}
