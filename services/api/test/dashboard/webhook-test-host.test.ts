import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DnsServer } from '../../../worker/test/support/dns-server.js';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Send test to a host name that leads nowhere, over HTTP, with the API resolving receivers'
 * names through a real name server of this test's own (WEBHOOK_DNS_SERVERS): the owner reads
 * what to fix. A name that does not exist and one that points inside read alike (so probing names
 * tells an owner nothing about the internal network), naming both fixes: a typo to check, or a
 * receiver to move to the public internet; where a name points is never said.
 */
let dns: DnsServer;
beforeAll(async () => {
  dns = await DnsServer.start();
  dns.addA('inside.test', '10.1.2.3');
  dns.neverAnswer('silent.test');
});
afterAll(() => dns.close());

const api = useApi({ env: () => ({ WEBHOOK_DNS_SERVERS: dns.address }) });
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

async function sendTestTo(host: string): Promise<{ outcome: string; http_status: number | null; error: string }> {
  const { admin } = await team(api.current.db, call, `Shop of ${host}`);
  const created = await call('POST', '/webhooks', {
    cookie: admin.cookie,
    body: { name: 'My CRM', url: `https://${host}/hook` },
  });
  expect(created.status).toBe(201);
  const tested = await call('POST', `/webhooks/${created.body.id}/test`, { cookie: admin.cookie });
  expect(tested.status).toBe(200);
  return tested.body;
}

describe('Send test to a host that leads nowhere', () => {
  it('says a name that does not exist has no public address, and to check it', async () => {
    expect(await sendTestTo('no-such-host.test')).toMatchObject({
      outcome: 'failed',
      http_status: null,
      error:
        'refused: no-such-host.test does not resolve to a public address; check the host name ' +
        '(receivers must be on the public internet)',
    });
  });

  it('says a name whose name servers never answer could not be resolved, and may work later', async () => {
    expect(await sendTestTo('silent.test')).toMatchObject({
      outcome: 'failed',
      error:
        'silent.test could not be resolved: its name servers gave no answer; check the host name, or try again later',
    });
  });

  it('refuses a name that points inside as one that does not exist, without saying where', async () => {
    const tested = await sendTestTo('inside.test');
    expect(tested).toMatchObject({
      outcome: 'failed',
      error:
        'refused: inside.test does not resolve to a public address; check the host name ' +
        '(receivers must be on the public internet)',
    });
    expect(tested.error).not.toMatch(/10\.1\.2\.3|private/);
  });
});
