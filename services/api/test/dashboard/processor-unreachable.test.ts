import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FakeStripe, newApiKey, newWebhookSecret } from '../../../worker/test/processor/stripe-kit.js';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Settings, Processor when Stripe cannot be reached (STRIPE_API_BASE at a port nothing listens
 * on) or fails: the owner reads that Stripe could not be reached, that nothing was saved and to
 * try again, never the library's wording nor the key. It is Stripe's failure, not the key's, so
 * it is a 502 `processor_unavailable` about no field: the key's field is not marked wrong.
 */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let stripeBase = '';
let failing: FakeStripe;
beforeAll(async () => {
  stripeBase = `http://127.0.0.1:${await closedPort()}`;
  failing = await FakeStripe.start(newApiKey());
});
afterAll(async () => {
  await failing.close();
});
const api = useApi({ env: () => ({ STRIPE_API_BASE: stripeBase }) });
const failingApi = useApi({ env: () => ({ STRIPE_API_BASE: failing.url }) });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('Settings, Processor with Stripe out of reach', () => {
  it('says in plain words that Stripe could not be reached and nothing was saved', async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Offline shop');
    const apiKey = newApiKey();
    const refused = await call('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toEqual({
      type: 'processor_unavailable',
      message: 'Stripe could not be reached to check the key, so nothing was saved; try again in a few minutes',
    });
    expect(refused.text).not.toContain(apiKey.slice(8));
    expect(await api.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
  }, 60_000);

  it('says Stripe could not check the key when Stripe fails, with its words and no key', async () => {
    const apiKey = newApiKey();
    failing.override = () => ({
      status: 500,
      body: { error: { type: 'api_error', message: `Something went wrong on our end with ${apiKey}` } },
    });
    const failingCall = dashboardClient(failingApi.current.url);
    const { owner, workspace } = await team(failingApi.current.db, failingCall, 'Failing shop');
    const refused = await failingCall('POST', '/processor/connect', {
      cookie: owner.cookie,
      body: { webhook_secret: newWebhookSecret(), api_key: apiKey },
    });
    expect(refused.status).toBe(502);
    expect(refused.body.error.type).toBe('processor_unavailable');
    expect(refused.body.error.param).toBeUndefined();
    expect(refused.body.error.message).toMatch(
      /^Stripe could not check the key, so nothing was saved; try again in a few minutes \(Stripe said: Something went wrong on our end with rk_test_/,
    );
    expect(refused.text).not.toContain(apiKey.slice(8));
    expect(await failingApi.current.db('processor_connections').where({ workspace_id: workspace.id })).toHaveLength(0);
  }, 60_000);
});
