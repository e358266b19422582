/**
 * `npm start`'s demo webhook receiver: an HTTPS server on 127.0.0.1 that answers the demo's
 * endpoints as their receivers would (the catalog's `accepts`: the dunning tool 200
 * `{"queued":true}`, the CRM 202 `Accepted`), so that new events and Send test are delivered
 * and show in the delivery log. A POST on any other path (an endpoint a newcomer adds at
 * the receiver's URL, e.g. `/mine`) is answered 200 `{"received":true}`. It verifies no
 * signature (it holds no endpoint's signing secret), keeps nothing and logs nothing: a
 * delivery's body is read and dropped.
 *
 * The service delivers to `https://` only, so the receiver serves TLS with a certificate made
 * here at every start (a P-256 key that never leaves this process, valid for 127.0.0.1 only),
 * and `trustFile` is what the API and the worker get as NODE_EXTRA_CA_CERTS.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { DEMO_ENDPOINTS, demoReceiverUrl } from '@retention/domain';

const HOST = '127.0.0.1';
/** The answer to a POST on a path that is not one of the demo's endpoints. */
const ANY_OTHER_PATH = { status: 200, body: '{"received":true}' };

export interface DemoReceiver {
  /** `https://127.0.0.1:PORT`: what the demo's endpoints are pointed at (demoReceiverUrl). */
  origin: string;
  /** A file for NODE_EXTRA_CA_CERTS: the receiver's certificate, after the operator's own extra CAs. */
  trustFile: string;
  /** Stops listening, drops open connections and removes `trustFile`. */
  close(): Promise<void>;
}

/**
 * Starts the receiver on 127.0.0.1: on `port` when it is given and free (the last start's, so
 * that the endpoints on it keep working), on any free port otherwise. `extraCaCerts` is the
 * operator's NODE_EXTRA_CA_CERTS, if any: its certificates stay trusted (an unreadable file is
 * reported through `say` and left out, as Node itself would leave it out).
 */
export async function startDemoReceiver(
  options: { port?: number | undefined; extraCaCerts?: string | undefined; say?: (text: string) => void } = {},
): Promise<DemoReceiver> {
  const { key, cert } = await selfSignedCertificate(HOST);
  const server = createServer({ key, cert }, (request, response) => {
    const endpoint = DEMO_ENDPOINTS.find(
      (candidate) => new URL(demoReceiverUrl('https://receiver', candidate.key)).pathname === request.url,
    );
    // Read to the end and dropped: the answer comes once the delivery is in, as a real receiver's.
    request.resume();
    request.once('end', () => {
      if (request.method !== 'POST') return answer(response, 405, 'text/plain', 'Method Not Allowed');
      const { status, body } = endpoint?.accepts ?? ANY_OTHER_PATH;
      answer(response, status, body.startsWith('{') ? 'application/json' : 'text/plain', body);
    });
  });
  // Taken (another npm start's receiver, or anything else): any free port, never a failed start.
  if (
    options.port === undefined ||
    !(await listen(server, options.port).then(
      () => true,
      () => false,
    ))
  ) {
    await listen(server, 0);
  }
  const origin = `https://${HOST}:${(server.address() as AddressInfo).port}`;

  const directory = await mkdtemp(path.join(tmpdir(), 'retention-demo-receiver-'));
  const trustFile = path.join(directory, 'ca.pem');
  await writeFile(trustFile, `${await operatorCertificates(options)}${cert}`);
  return {
    origin,
    trustFile,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(directory, { recursive: true, force: true });
    },
  };
}

function answer(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { 'content-type': `${type}; charset=utf-8` }).end(body);
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function operatorCertificates(options: {
  extraCaCerts?: string | undefined;
  say?: (text: string) => void;
}): Promise<string> {
  const file = options.extraCaCerts?.trim();
  if (!file) return '';
  try {
    const text = await readFile(file, 'utf8');
    return text.endsWith('\n') ? text : `${text}\n`;
  } catch (error) {
    options.say?.(
      `NODE_EXTRA_CA_CERTS (${file}) cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): left out.`,
    );
    return '';
  }
}

/**
 * A self-signed certificate for one IP address (its subjectAltName): ECDSA P-256 with
 * SHA-256, valid from a day ago for a year. Made by `selfsigned` on Node's WebCrypto, not by
 * an openssl binary, which is not everywhere `npm start` runs.
 */
export async function selfSignedCertificate(ip: string): Promise<{ key: string; cert: string }> {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: `retention demo receiver ${ip}` }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 86_400_000),
    notAfterDate: new Date(now + 365 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'subjectAltName', altNames: [{ type: 7, ip }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
