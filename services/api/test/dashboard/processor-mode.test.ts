import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FakeStripe, newApiKey, newWebhookSecret } from '../../../worker/test/processor/stripe-kit.js';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Settings, Processor over HTTP: the connection's mode (docs/processor.md, "Mode"). A key's prefix
 * sets it; a key of the other mode is a 409 at the key's field, nothing saved, until
 * `confirm_mode_switch: true`, which switches it and writes `processor.mode_switched`.
 */
let stripe: FakeStripe;
const testKey = newApiKey();
const liveKey = `rk_live_${'L'.repeat(24)}5678`;
beforeAll(async () => {
  stripe = await FakeStripe.start(testKey);
  // The stand-in answers the live key's checks (one item of each list) as Stripe would.
  stripe.override = (request, url) =>
    request.headers.authorization === `Bearer ${liveKey}`
      ? { status: 200, body: { object: 'list', data: [], has_more: false, url: url.pathname } }
      : null;
});
afterAll(() => stripe.close());

const api = useApi({ env: () => ({ STRIPE_API_BASE: stripe.url }) });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

describe('Settings, Processor: the mode', () => {
  it("takes the key's mode; a key of the other mode is refused unless confirmed, then switched and logged", async () => {
    const { owner, workspace } = await team(api.current.db, call, 'Mode shop');
    const secret = newWebhookSecret();
    const connect = (body: Record<string, unknown>) =>
      call('POST', '/processor/connect', { cookie: owner.cookie, body: { webhook_secret: secret, ...body } });

    const keyless = await connect({});
    expect(keyless.body).toMatchObject({
      mode: null,
      events_set_aside: { connected_account: 0, other_mode: 0, signup_payment: 0 },
    });
    expect((await connect({ api_key: testKey })).body).toMatchObject({ status: 'connected', mode: 'test' });

    const refused = await connect({ api_key: liveKey });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({
      type: 'conflict',
      message: expect.stringContaining(
        'api_key: this is a live mode key and the connection is in test mode; nothing was saved.',
      ),
    });
    expect(refused.body.error.message).toContain('the data already imported in test mode stays in the workspace');
    expect(refused.text).not.toContain(liveKey);
    expect((await call('GET', '/processor', { cookie: owner.cookie })).body).toMatchObject({
      mode: 'test',
      api_key_last4: testKey.slice(-4),
    });
    // `false` is no confirmation; anything but a boolean is refused at its field.
    expect((await connect({ api_key: liveKey, confirm_mode_switch: false })).status).toBe(409);
    const malformed = await connect({ api_key: liveKey, confirm_mode_switch: 'yes' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatchObject({ type: 'invalid_param', param: 'confirm_mode_switch' });

    const switched = await connect({ api_key: liveKey, confirm_mode_switch: true });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ status: 'connected', mode: 'live', api_key_last4: '5678' });
    // The same mode again needs no confirmation; no key given keeps the mode.
    expect((await connect({ api_key: liveKey })).body).toMatchObject({ mode: 'live' });
    expect((await connect({})).body).toMatchObject({ mode: 'live', api_key_last4: '5678' });

    const log = await api.current
      .db('security_events')
      .where({ workspace_id: workspace.id, action: 'processor.mode_switched' });
    expect(log).toEqual([
      expect.objectContaining({
        actor_type: 'user',
        actor_user_id: owner.id,
        details: { provider: 'stripe', from: 'test', to: 'live', api_key_last4: '5678' },
      }),
    ]);
    expect(JSON.stringify(log)).not.toContain(liveKey);
  });
});
