import { describe, expect, it } from '@jest/globals';
import { createToken, listDeliveryLog } from '@retention/domain';
import { eventually, freePort, runCli } from '@retention/testkit';
import { BASE_URL, useWorld } from './support/world.js';

const world = useWorld();

/** Any secret value left unmasked; the logger's own mask (`whsec_[redacted]`) is not one. */
const UNMASKED_SECRET = /(whsec_|sk_live_)[0-9A-Za-z]/;
/** An Authorization header's value, in any spelling: the word followed by anything but the mask. */
const AUTHORIZATION_VALUE = /authorization\W+(?!\[redacted\])\w/i;

describe('secrets in the logs', () => {
  it('a trace-level run with failures, retries, an auto-disable and a Send test logs no secret', async () => {
    const { db, receiver, workspace, certificate } = world.current;
    // Secrets are placed where the worker handles them: an API token in the event data and in
    // the endpoint's URL, and receivers that echo secrets and an Authorization header back.
    const { token } = await createToken(db, { workspace_id: workspace.id, name: 'leak bait' });
    const echo = (secret: string) => `rejected whsec ${secret}; Authorization: Bearer ${token}`;
    const secrets: string[] = [token];
    const flaky = await world.current.createEndpoint(`/grep-flaky?key=${token}`, {
      behaviour: (_request, index) =>
        index === 0
          ? { kind: 'status', status: 401, body: echo(flaky.secret) }
          : index === 1
            ? { kind: 'hang' }
            : { kind: 'status', status: 200, body: echo(flaky.secret) },
    });
    const dying = await world.current.createEndpoint('/grep-dying', {
      behaviour: () => ({ kind: 'status', status: 500, body: echo(dying.secret) }),
    });
    const unreachable = await world.current.createEndpoint('/grep-unreachable', { behaviour: { kind: 'hang' } });
    await db('webhook_endpoints')
      .where({ id: unreachable.id })
      .update({ url: `https://localhost:${await freePort()}/?key=${token}` });
    secrets.push(flaky.secret, dying.secret, unreachable.secret);

    const worker = await world.current.startWorker({
      env: { LOG_LEVEL: 'trace' },
      options: { sweepEveryMs: 300 },
    });
    await world.current.record([
      {
        type: 'winback.recorded',
        data: {
          winback_id: '5d1c3f0e-2b7a-4c9e-8f61-0a4b3c2d1e0f',
          customer_email: workspace.customerEmail,
          psp_subscription_id: token,
          days_away: 7,
          amount_cents: 900,
          currency: 'usd',
        },
      },
    ]);
    // flaky: 401, timeout, then 200; dying: ten 500s and disabled; unreachable: refused.
    await eventually(async () => (await listDeliveryLog(db, flaky.id)).some((e) => e.outcome === 'succeeded'), 20_000);
    await eventually(async () => !(await db('webhook_endpoints').where({ id: dying.id }).first()).enabled, 20_000);
    await eventually(async () => (await listDeliveryLog(db, unreachable.id)).length >= 2, 20_000);
    expect(receiver.requestsTo(flaky.path)[2]!.body.data.psp_subscription_id).toBe(token);

    // Send test through the CLI, as an operator runs it, at trace level too.
    const sendTest = await runCli(['webhook', 'test', '--id', dying.id, '--actor', workspace.ownerId], {
      DATABASE_URL: world.current.databaseUrl,
      BASE_URL,
      LOG_LEVEL: 'trace',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      NODE_EXTRA_CA_CERTS: certificate.certPath,
    });
    expect(sendTest.json).toMatchObject({ event_type: 'ping', outcome: 'failed', http_status: 500 });

    const logs = worker.rawLogs();
    // The run was logged in detail: every level down to debug wrote something.
    const levels = new Set(worker.logs().map((line) => line.level));
    expect([...levels]).toEqual(expect.arrayContaining(['debug', 'info', 'warn']));
    expect(logs).toMatch(/delivery attempt failed/);
    expect(logs).toMatch(/endpoint disabled after consecutive failures/);
    for (const output of [logs, sendTest.stderr]) {
      for (const secret of secrets) expect(output).not.toContain(secret);
      expect(output).not.toMatch(UNMASKED_SECRET);
      expect(output).not.toMatch(AUTHORIZATION_VALUE);
    }
    // The Send test prints the receiver's answer (the owner's to see: this one echoes secrets
    // back) and nothing else that holds one.
    const { response_body: answer, ...printed } = sendTest.json as Record<string, unknown>;
    expect(answer).toBe(echo(dying.secret));
    expect(JSON.stringify(printed)).not.toMatch(UNMASKED_SECRET);
  }, 60_000);
});
