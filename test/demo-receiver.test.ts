import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { selfSignedCertificate, startDemoReceiver, type DemoReceiver } from '../scripts/demo-receiver.js';

/** A request to the receiver, trusting only what its trust file holds, as the worker does. */
function send(receiver: DemoReceiver, ca: string, method: string, pathname: string) {
  return new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
    const outgoing = request(`${receiver.origin}${pathname}`, { method, ca }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body }));
    });
    outgoing.on('error', reject);
    outgoing.end(method === 'POST' ? '{"type":"ping"}' : undefined);
  });
}

describe("npm start's demo webhook receiver", () => {
  let receiver: DemoReceiver;
  let directory: string;
  const said: string[] = [];
  /** Some CA of the operator's own, without a final newline. */
  let OPERATOR_CA: string;

  beforeAll(async () => {
    OPERATOR_CA = (await selfSignedCertificate('10.0.0.1')).cert.trimEnd();
    directory = await mkdtemp(path.join(tmpdir(), 'demo-receiver-test-'));
    await writeFile(path.join(directory, 'operator.pem'), OPERATOR_CA);
    receiver = await startDemoReceiver({
      extraCaCerts: path.join(directory, 'operator.pem'),
      say: (text) => said.push(text),
    });
  });
  afterAll(async () => {
    await receiver.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('answers each demo endpoint as the catalog says, over TLS for 127.0.0.1', async () => {
    expect(receiver.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = await readFile(receiver.trustFile, 'utf8');
    expect(await send(receiver, ca, 'POST', '/demo/dunning')).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: '{"queued":true}',
    });
    expect(await send(receiver, ca, 'POST', '/demo/crm')).toEqual({
      status: 202,
      type: 'text/plain; charset=utf-8',
      body: 'Accepted',
    });
    expect(await send(receiver, ca, 'GET', '/demo/dunning')).toMatchObject({ status: 405 });
  });

  it("accepts a POST on any other path, as a newcomer's own endpoint at the receiver's URL", async () => {
    const ca = await readFile(receiver.trustFile, 'utf8');
    const accepted = { status: 200, type: 'application/json; charset=utf-8', body: '{"received":true}' };
    expect(await send(receiver, ca, 'POST', '/mine')).toEqual(accepted);
    expect(await send(receiver, ca, 'POST', '/')).toEqual(accepted);
    expect(await send(receiver, ca, 'POST', '/demo/other')).toEqual(accepted);
    expect(await send(receiver, ca, 'POST', '/demo/dunning?x=1')).toEqual(accepted);
    expect(await send(receiver, ca, 'GET', '/mine')).toMatchObject({ status: 405 });
  });

  it("keeps the operator's NODE_EXTRA_CA_CERTS in the trust file, and says when that cannot be read", async () => {
    const trusted = await readFile(receiver.trustFile, 'utf8');
    expect(trusted.startsWith(`${OPERATOR_CA}\n-----BEGIN CERTIFICATE-----\n`)).toBe(true);
    expect(said).toEqual([]);

    const unreadable = path.join(directory, 'missing.pem');
    const other = await startDemoReceiver({ extraCaCerts: unreadable, say: (text) => said.push(text) });
    try {
      expect(said).toEqual([`NODE_EXTRA_CA_CERTS (${unreadable}) cannot be read (ENOENT): left out.`]);
      expect(new X509Certificate(await readFile(other.trustFile)).checkIP('127.0.0.1')).toBe('127.0.0.1');
    } finally {
      await other.close();
    }
    expect(existsSync(other.trustFile)).toBe(false);
  });

  it('listens on the port it is given while that is free, and on another one when it is taken', async () => {
    const port = Number(new URL(receiver.origin).port);
    // Taken: this test's receiver holds it.
    const elsewhere = await startDemoReceiver({ port });
    try {
      expect(elsewhere.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(elsewhere.origin).not.toBe(receiver.origin);
      const free = Number(new URL(elsewhere.origin).port);
      await elsewhere.close();
      // Free again, as at the next npm start: the same port.
      const again = await startDemoReceiver({ port: free });
      try {
        expect(again.origin).toBe(`https://127.0.0.1:${free}`);
        const ca = await readFile(again.trustFile, 'utf8');
        expect(await send(again, ca, 'POST', '/mine')).toMatchObject({ status: 200, body: '{"received":true}' });
      } finally {
        await again.close();
      }
    } finally {
      await elsewhere.close();
    }
  });

  it('makes a certificate for the one address, signed by its own key, valid now', async () => {
    const { cert } = await selfSignedCertificate('127.0.0.1');
    const certificate = new X509Certificate(cert);
    expect(certificate.subjectAltName).toBe('IP Address:127.0.0.1');
    expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(certificate.checkIP('10.0.0.1')).toBeUndefined();
    expect(certificate.checkHost('localhost')).toBeUndefined();
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect(certificate.validFromDate.getTime()).toBeLessThan(Date.now());
    expect(certificate.validToDate.getTime()).toBeGreaterThan(Date.now() + 300 * 86_400_000);
  });
});
