import { createServer } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { newApiKey, newWebhookSecret } from '../../../worker/test/processor/stripe-kit.js';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Settings, Processor when Stripe cannot be reached (STRIPE_API_BASE at a port nothing listens
 * on): the owner reads, at the key's field, that Stripe could not be reached, that nothing was
 * saved and to try again, never the library's wording nor the key.
 */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let stripeBase = '';
beforeAll(async () => {
  stripeBase = `http://127.0.0.1:${await closedPort()}`;
});
const api = useApi({ env: () => ({ STRIPE_API_BASE: stripeBase }) });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('Settings, Processor with Stripe out of reach', () => {
  it('says in plain words that Stripe could not be reached and nothing was saved', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Offline shop');
    const apiKey = newApiKey();
    const refused = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      type: 'invalid_param',
      message:
        'api_key: Stripe could not be reached to check the key, so nothing was saved; try again in a few minutes',
      param: 'api_key',
    });
    expect(refused.text).not.toContain(apiKey.slice(8));
    expect(await api.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
  }, 60_000);
});
