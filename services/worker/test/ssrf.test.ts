import { request } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from '@jest/globals';
import { createEndpoint, listDeliveryLog, PublicOnlyAgent } from '@retention/domain';
import { eventually, testSecretsKeyBytes } from '@retention/testkit';
import { numberedEvent, useWorld } from './support/world.js';

const world = useWorld();

describe('SSRF protection', () => {
  it('refuses receivers on loopback, private, link-local and other non-public addresses, without connecting', async () => {
    const { db, receiver, workspace } = world.current;
    const port = receiver.port;
    receiver.route('/ssrf', { secret: 'whsec_unused', behaviour: { kind: 'status', status: 200 } });
    const cases: Array<[string, RegExp]> = [
      [
        `https://localhost:${port}/ssrf`,
        /^refused: localhost does not resolve to a public address; check the host name \(receivers must be/,
      ],
      [`https://127.0.0.1:${port}/ssrf`, /^refused: 127\.0\.0\.1 is a loopback address/],
      [`https://[::1]:${port}/ssrf`, /^refused: ::1 is a loopback address/],
      [`https://[::ffff:127.0.0.1]:${port}/ssrf`, /^refused: ::ffff:7f00:1 is a loopback address/],
      ['https://169.254.169.254/latest/meta-data/', /^refused: 169\.254\.169\.254 is a link-local address/],
      ['https://10.0.0.1/hook', /^refused: 10\.0\.0\.1 is a private address/],
      ['https://100.64.0.1/hook', /^refused: 100\.64\.0\.1 is a carrier-grade NAT address/],
      ['https://[fd00::1]/hook', /^refused: fd00::1 is a private address/],
    ];
    const endpoints: Array<{ id: string }> = [];
    for (const [url] of cases) {
      // Link-local is refused when saved, even with private networks allowed (address-guard.ts,
      // neverAllowedRange); an endpoint saved before that still reaches the worker, which refuses it.
      const savable = !url.includes('169.254.');
      const endpoint = await createEndpoint(db, testSecretsKeyBytes(), {
        workspace_id: workspace.id,
        actor_id: workspace.ownerId,
        name: url,
        url: savable ? url : 'https://saved-before.example/hook',
      });
      if (!savable) await db('webhook_endpoints').where({ id: endpoint.id }).update({ url });
      endpoints.push(endpoint);
    }
    const worker = await world.current.startWorker({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_RETRY_DELAYS: '10m' },
    });
    await world.current.record([numberedEvent(workspace)]);

    for (const [index, [, error]] of cases.entries()) {
      const [entry] = await eventually(async () => {
        const log = await listDeliveryLog(db, endpoints[index]!.id);
        return log.length > 0 ? log : null;
      });
      expect(entry).toMatchObject({ outcome: 'failed', http_status: null, response_body: null });
      expect(entry!.error).toMatch(error);
      // Refused before any connection: no time spent waiting on an unroutable address.
      expect(entry!.duration_ms).toBeLessThan(500);
    }
    expect(receiver.requestsTo('/ssrf')).toEqual([]);

    // Where the name pointed is in the server log, and nowhere the owner can see.
    const [byName] = await listDeliveryLog(db, endpoints[0]!.id);
    expect(JSON.stringify(byName)).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    const logged = worker.logs().find((line) => line.endpoint_id === endpoints[0]!.id);
    expect(logged).toMatchObject({
      error: byName!.error,
      refused_address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
      refused_range: 'loopback',
    });
  });

  it('checks the address actually connected to, even if a lookup hands out a private one', async () => {
    const { receiver, certificate } = world.current;
    receiver.route('/ssrf-connect', { secret: 'whsec_unused', behaviour: { kind: 'status', status: 200 } });
    // A lookup that lies: "public.example" is really this machine.
    const agent = new PublicOnlyAgent({
      ca: certificate.cert,
      lookup: (_host, options, callback) => {
        const address: LookupAddress = { address: '127.0.0.1', family: 4 };
        if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [address]);
        else (callback as (e: null, a: string, f: number) => void)(null, address.address, address.family);
      },
    });
    const error = await new Promise<Error>((resolve) => {
      const outgoing = request(
        {
          host: 'public.example',
          servername: 'localhost',
          port: receiver.port,
          path: '/ssrf-connect',
          method: 'POST',
          agent,
        },
        () => resolve(new Error('a response arrived')),
      );
      outgoing.on('error', resolve);
      outgoing.end('{}');
    });
    agent.destroy();
    expect(error.message).toMatch(/^refused: public\.example does not resolve to a public address/);
    expect(error.message).not.toContain('127.0.0.1');
    expect(error).toMatchObject({ address: '127.0.0.1', range: 'loopback' });
    expect(receiver.requestsTo('/ssrf-connect')).toEqual([]);
  });
});
