import type { Express } from 'express';
import { loadConfig } from '@retention/core';
import { createDb } from '@retention/db';
import { createLogger, createRedis } from '@retention/runtime';
import { testSecretsKey } from '@retention/testkit';
import { createApp } from '../src/app.js';

/**
 * The app as main.ts builds it, on a Redis and a PostgreSQL it never reaches: for what building
 * it does by itself (its routes, the schemas they declare), which needs no connection.
 */
export async function withUnconnectedApp(use: (app: Express) => void): Promise<void> {
  const redis = createRedis('redis://127.0.0.1:1', 'command', 'unconnected-app');
  redis.disconnect();
  const db = createDb('postgres://127.0.0.1:1/none');
  try {
    use(
      createApp({
        config: loadConfig({ SECRETS_KEY: testSecretsKey() }),
        db,
        redis,
        logger: createLogger('api', 'silent'),
      }),
    );
  } finally {
    await db.destroy();
  }
}
