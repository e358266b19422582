import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { CAMPAIGN_FIELDS } from '@retention/sdk';
import { createToken } from '@retention/domain';
import { serializeWebhookPayload, signatureHeader } from '@retention/core';
import { freePort, startService, type ServiceProcess } from '@retention/testkit';
import { useApi, workspaceWithToken } from '../../../services/api/test/harness.js';
import { runScript } from './run-script.js';

// A two-second window and a token of 3 requests: the export has to pace itself.
const WINDOW_MS = 2_000;
const api = useApi({ rateLimitWindowMs: WINDOW_MS });

/** RFC 4180: quoted fields with doubled quotes, CRLF line ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 1;
    } else field += char;
  }
  expect(field).toBe('');
  return rows;
}

describe('examples/export-campaigns-csv.ts', () => {
  const COUNT = 230; // five pages

  it('exports every campaign, escaped for spreadsheets, without a single 429', async () => {
    const { workspaceId, ids } = await workspaceWithToken(api.current, {
      customers: [{ key: 'c', subscriptions: [{}] }],
      campaigns: Array.from({ length: COUNT }, (_, i) => ({
        key: `k${i}`,
        customer: 'c',
        decline_code: i === 8 ? '=HYPERLINK("http://x")' : 'insufficient_funds',
        ...(i % 5 === 0 && { status: 'recovered' as const, recovered_via: 'retry' as const }),
      })),
    });
    // Fixtures refuse control characters, but the export must quote any string the API returns.
    await api.current
      .db('recovery_campaigns')
      .where({ id: ids.campaigns.k7 })
      .update({ decline_code: 'odd, "quoted"\ncode' });
    const { token } = await createToken(api.current.db, {
      workspace_id: workspaceId,
      name: 'export',
      rate_limit_per_minute: 3,
    });
    const mark = api.current.logs().length;

    const { code, stdout, stderr } = await runScript('examples/export-campaigns-csv.ts', {
      RETENTION_API_URL: api.current.url,
      RETENTION_API_TOKEN: token,
    });
    expect(stderr).toContain(`exported ${COUNT} campaigns`);
    expect(code).toBe(0);

    const [header, ...rows] = parseCsv(stdout);
    expect(header).toEqual([...CAMPAIGN_FIELDS]);
    expect(rows).toHaveLength(COUNT);
    const byId = new Map(rows.map((row) => [row[0], Object.fromEntries(header!.map((name, i) => [name, row[i]]))]));
    expect(new Set(byId.keys())).toEqual(new Set(Object.values(ids.campaigns)));
    expect(byId.get(ids.campaigns.k7)!.decline_code).toBe('odd, "quoted"\ncode');
    expect(byId.get(ids.campaigns.k8)!.decline_code).toBe(`'=HYPERLINK("http://x")`);
    expect(byId.get(ids.campaigns.k5)).toMatchObject({ status: 'recovered', recovered_via: 'retry' });
    expect(byId.get(ids.campaigns.k6)).toMatchObject({ status: 'in_flight', recovered_via: '', closed_at: '' });

    const statuses = api.current
      .logs()
      .slice(mark)
      .filter((line) => typeof line.status === 'number' && String(line.path).endsWith('/campaigns'))
      .map((line) => line.status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(stderr).toContain('rate limit reached: pausing');
  }, 60_000);

  it('exports one status only when asked', async () => {
    const { token } = await workspaceWithToken(api.current, {
      customers: [{ key: 'c', subscriptions: [{}] }],
      campaigns: [{ customer: 'c', status: 'lost' }, { customer: 'c' }, { customer: 'c', status: 'lost' }],
    });
    const { code, stdout } = await runScript('examples/export-campaigns-csv.ts', {
      RETENTION_API_URL: api.current.url,
      RETENTION_API_TOKEN: token,
      CAMPAIGN_STATUS: 'lost',
    });
    expect(code).toBe(0);
    const rows = parseCsv(stdout).slice(1);
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => row[CAMPAIGN_FIELDS.indexOf('status')] === 'lost')).toBe(true);
  });

  it('fails with the error type, exit code 1 and no token in its output', async () => {
    const token = 'sk_live_notARealToken0000000000000000000';
    const result = await runScript('examples/export-campaigns-csv.ts', {
      RETENTION_API_URL: api.current.url,
      RETENTION_API_TOKEN: token,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('invalid_token');
    expect(result.stderr).toMatch(/request req_[0-9a-f]{32}/);
    expect(result.stderr + result.stdout).not.toContain(token.slice(8));
  });

  it('says in one sentence which URL it could not reach and what to check, without a stack trace', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await runScript('examples/export-campaigns-csv.ts', {
      RETENTION_API_URL: url,
      RETENTION_API_TOKEN: 'sk_live_x',
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`Could not reach the API at ${url}`);
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toContain(`check RETENTION_API_URL (${url})`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a bad filter before calling the API', async () => {
    const result = await runScript('examples/export-campaigns-csv.ts', {
      RETENTION_API_URL: api.current.url,
      RETENTION_API_TOKEN: 'sk_live_x',
      CAMPAIGN_STATUS: 'open',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('CAMPAIGN_STATUS must be one of in_flight');
  });
});

describe('examples/webhook-receiver.ts', () => {
  const SECRET = 'whsec_exampleReceiverSecret0000000000000000';
  let receiver: ServiceProcess | undefined;
  afterEach(async () => {
    await receiver?.stop();
    receiver = undefined;
  });

  async function start(env: Record<string, string> = {}): Promise<number> {
    const port = await freePort();
    receiver = startService('examples/webhook-receiver.ts', { PORT: String(port), WEBHOOK_SECRET: SECRET, ...env });
    await receiver.waitFor(/webhook receiver listening/);
    return port;
  }

  const recovered = serializeWebhookPayload('recovery.recovered', '2026-03-07T09:15:02.123Z', {
    campaign_id: '6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a',
    customer_email: 'ann@example.com',
    amount_cents: 4900,
    currency: 'usd',
    recovered_via: 'customer_update',
  });
  const signed = (body: string, timestamp = Math.floor(Date.now() / 1000)) => ({
    'content-type': 'application/json',
    'x-service-signature': signatureHeader(SECRET, timestamp, body),
  });

  it('logs each verified event as a JSON line and answers 200; refuses the rest with 401', async () => {
    const port = await start();
    const url = `http://127.0.0.1:${port}/webhooks`;
    const ok = await fetch(url, { method: 'POST', headers: signed(recovered), body: recovered });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ received: true });

    const tampered = await fetch(url, {
      method: 'POST',
      headers: signed(recovered),
      body: recovered.replace('4900', '9'),
    });
    expect(tampered.status).toBe(401);
    const stale = await fetch(url, {
      method: 'POST',
      headers: signed(recovered, Math.floor(Date.now() / 1000) - 3_600),
      body: recovered,
    });
    expect(stale.status).toBe(401);
    expect((await fetch(url)).status).toBe(405);

    // Each refusal's reason on stderr: a wrong secret and a clock that is off read differently.
    await receiver!.waitFor(
      /refused a delivery: HTTP 401 signature_mismatch: [\s\S]*refused a delivery: HTTP 401 timestamp_out_of_tolerance: /,
    );
    const logged = receiver!
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { summary: string; event: unknown });
    expect(logged).toHaveLength(1);
    expect(logged[0]!.event).toEqual(JSON.parse(recovered));
    expect(logged[0]!.summary).toBe('campaign 6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a recovered via customer_update');
    expect(receiver!.output()).not.toContain(SECRET);
  });

  describe('over HTTPS, as the service delivers', () => {
    let directory: string;
    beforeAll(() => {
      directory = mkdtempSync(path.join(tmpdir(), 'receiver-tls-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost,IP:127.0.0.1',
          '-keyout',
          path.join(directory, 'key.pem'),
          '-out',
          path.join(directory, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
    });
    afterAll(() => rmSync(directory, { recursive: true, force: true }));

    it('serves the same receiver with the certificate given', async () => {
      const port = await start({
        TLS_CERT_FILE: path.join(directory, 'cert.pem'),
        TLS_KEY_FILE: path.join(directory, 'key.pem'),
      });
      const body = serializeWebhookPayload('ping', '2026-03-07T09:15:02.123Z', { test: true });
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpsRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/webhooks',
            method: 'POST',
            headers: signed(body),
            ca: readFileSync(path.join(directory, 'cert.pem')),
          },
          (response) => {
            response.resume();
            resolve(response.statusCode!);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      expect(status).toBe(200);
      await receiver!.waitFor(/test event \(Send test in the dashboard, or webhook test in the operator CLI\)/);
    });
  });

  it('refuses to start without a secret', async () => {
    const result = await runScript('examples/webhook-receiver.ts', { WEBHOOK_SECRET: '', PORT: '0' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('WEBHOOK_SECRET');
  });
});

describe('examples/stripe-invoice-failed.ts, given a wrong CONNECTION_URL', () => {
  const SECRET = 'whsec_exampleStripeSecret000000000000000000';

  it('says in one sentence what it tried to reach, why it failed and what to check; exit 1, no stack trace', async () => {
    const origin = `http://127.0.0.1:${await freePort()}`;
    const result = await runScript('examples/stripe-invoice-failed.ts', {
      CONNECTION_URL: `${origin}/processor/stripe/00000000-0000-4000-8000-000000000000`,
      WEBHOOK_SECRET: SECRET,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`could not reach ${origin}`);
    expect(result.stderr).toContain('nothing is listening there (ECONNREFUSED)');
    expect(result.stderr).toContain('check that the service is running');
    expect(result.stderr).not.toContain('TypeError');
    expect(result.stderr).not.toContain(SECRET);
  });

  it('says when CONNECTION_URL is not a URL at all', async () => {
    const result = await runScript('examples/stripe-invoice-failed.ts', {
      CONNECTION_URL: 'localhost:3910/processor/stripe/x',
      WEBHOOK_SECRET: SECRET,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'stripe-invoice-failed: CONNECTION_URL (localhost:3910/processor/stripe/x) is not an http:// or https:// URL: ' +
        'set it to the webhook_url `processor connect` printed.\n',
    );
  });

  it('reports an answer that is not JSON (some other server) with its status, exit 1', async () => {
    const other = createServer((_request, response) => response.writeHead(404).end('<h1>Not Found</h1>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const result = await runScript('examples/stripe-invoice-failed.ts', {
        CONNECTION_URL: `http://127.0.0.1:${(other.address() as AddressInfo).port}/processor/stripe/x`,
        WEBHOOK_SECRET: SECRET,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('SyntaxError');
      expect(JSON.parse(result.stdout)).toMatchObject({ status: 404, answer: '<h1>Not Found</h1>' });
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
