import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { connectProcessor, createWorkspace, OPERATOR } from '@retention/domain';
import { testSecretsKey, testSecretsKeyBytes, useTestDatabase } from '@retention/testkit';
import {
  newWebhookSecret,
  postToConnection,
  stripeCustomer,
  stripeEvent,
} from '../../worker/test/processor/stripe-kit.js';
import { startApiInstance, type ApiInstance } from './api-instance.js';

/**
 * The API opens the processor connection's webhook secret, sealed with the old key, when it
 * runs with the new key as SECRETS_KEY and the old one as SECRETS_KEY_PREVIOUS: Stripe's events
 * keep being verified and accepted through a key rotation (docs/operator-cli.md, "Rotating the key").
 */

const database = useTestDatabase();
const instances: ApiInstance[] = [];
afterEach(async () => {
  await Promise.all(instances.splice(0).map((instance) => instance.close()));
});

async function apiWith(env: Record<string, string>) {
  const api = await startApiInstance({ databaseUrl: database.current.url, env });
  instances.push(api);
  return api;
}

describe('a key rotation, in the API', () => {
  it('verifies Stripe events with the webhook secret sealed under SECRETS_KEY_PREVIOUS', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Rotating', processor: 'disconnected' });
    const secret = newWebhookSecret();
    const connection = await connectProcessor(
      db,
      testSecretsKeyBytes(),
      { workspace_id: workspace.id, provider: 'stripe', webhook_secret: secret },
      'none',
      OPERATOR,
    );
    const newKey = randomBytes(32).toString('base64');
    const post = (api: ApiInstance) =>
      postToConnection(
        `${api.url}/processor/stripe/${connection.id}`,
        stripeEvent('customer.created', stripeCustomer()),
        secret,
      );

    const rotating = await apiWith({ SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: testSecretsKey() });
    expect((await post(rotating)).status).toBe(200);

    // The same API without the previous key cannot open the secret: a 500, which Stripe retries.
    const newKeyAlone = await apiWith({ SECRETS_KEY: newKey });
    expect((await post(newKeyAlone)).status).toBe(500);
    for (const api of [rotating, newKeyAlone]) {
      const logs = JSON.stringify(api.logs());
      for (const value of [secret, newKey, testSecretsKey()]) expect(logs).not.toContain(value);
    }
  });
});
