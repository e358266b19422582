import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSecretsKey } from '@retention/core';

/** The repository's root, where every test starts its processes. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Where the test run finds its servers. Tests never use DATABASE_URL: each test file gets a
 * database of its own on the server named here, cloned from a template migrated once per run.
 */
export const TEST_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Set by the global setup; shared by every test worker of one run. */
export const RUN_ID_VARIABLE = 'RETENTION_TEST_RUN_ID';

export function runId(): string {
  const id = process.env[RUN_ID_VARIABLE];
  if (!id) throw new Error(`${RUN_ID_VARIABLE} is not set: run the tests through jest (npm test)`);
  return id;
}

export function databaseUrl(name: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export const templateDatabaseName = (id: string) => `retention_test_${id}_template`;
export const databaseNamePrefix = (id: string) => `retention_test_${id}_`;
export const redisKeyPrefix = (id: string) => `retention-test-${id}`;

/**
 * SECRETS_KEY of the test run: made by the global setup (unless the environment has one), so
 * every test worker and every process a test spawns inherits the same key.
 */
export function testSecretsKey(): string {
  const key = process.env.SECRETS_KEY;
  if (!key) throw new Error('SECRETS_KEY is not set: run the tests through jest (npm test)');
  return key;
}

/** The same key as bytes (config.secretsKey): what the domain's sealing functions take. */
export function testSecretsKeyBytes(): Buffer {
  return parseSecretsKey({ SECRETS_KEY: testSecretsKey() });
}

/**
 * The environment of a process a test starts: this process's, then `env` over it. One started as
 * a deployment (NODE_ENV=production) is started without INSECURE_FAST_PASSWORD_HASHING, which the
 * run sets for every process (global-setup.ts) and a deployment refuses at start, as it should.
 */
export function childEnvironment(env: Record<string, string>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (merged.NODE_ENV === 'production') delete merged.INSECURE_FAST_PASSWORD_HASHING;
  return merged;
}
