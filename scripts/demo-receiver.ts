/**
 * `npm start`'s demo webhook receiver: an HTTPS server on 127.0.0.1 that answers the demo's
 * endpoints as their receivers would (the catalog's `accepts`: the dunning tool 200
 * `{"queued":true}`, the CRM 202 `Accepted`), so that new events and Send test are delivered
 * and show in the delivery log. It verifies nothing (it holds no signing secret), keeps
 * nothing and logs nothing: a delivery's body is read and dropped.
 *
 * The service delivers to `https://` only, so the receiver serves TLS with a certificate made
 * here at every start (a P-256 key that never leaves this process, valid for 127.0.0.1 only),
 * and `trustFile` is what the API and the worker get as NODE_EXTRA_CA_CERTS.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_ENDPOINTS, demoReceiverUrl } from '@retention/domain';

const HOST = '127.0.0.1';

export interface DemoReceiver {
  /** `https://127.0.0.1:PORT`: what the demo's endpoints are pointed at (demoReceiverUrl). */
  origin: string;
  /** A file for NODE_EXTRA_CA_CERTS: the receiver's certificate, after the operator's own extra CAs. */
  trustFile: string;
  /** Stops listening, drops open connections and removes `trustFile`. */
  close(): Promise<void>;
}

/**
 * Starts the receiver on a free port of 127.0.0.1. `extraCaCerts` is the operator's
 * NODE_EXTRA_CA_CERTS, if any: its certificates stay trusted (an unreadable file is
 * reported through `say` and left out, as Node itself would leave it out).
 */
export async function startDemoReceiver(
  options: { extraCaCerts?: string | undefined; say?: (text: string) => void } = {},
): Promise<DemoReceiver> {
  const { key, cert } = selfSignedCertificate(HOST);
  const server = createServer({ key, cert }, (request, response) => {
    const endpoint = DEMO_ENDPOINTS.find(
      (candidate) => new URL(demoReceiverUrl('https://receiver', candidate.key)).pathname === request.url,
    );
    // Read to the end and dropped: the answer comes once the delivery is in, as a real receiver's.
    request.resume();
    request.once('end', () => {
      if (!endpoint) return answer(response, 404, 'text/plain', 'Not Found');
      if (request.method !== 'POST') return answer(response, 405, 'text/plain', 'Method Not Allowed');
      const { status, body } = endpoint.accepts;
      answer(response, status, body.startsWith('{') ? 'application/json' : 'text/plain', body);
    });
  });
  await listen(server);
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

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => {
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
 * A self-signed X.509 v3 certificate for one IP address (its subjectAltName), made with
 * node:crypto alone (Node has no API for it, and an openssl binary is not everywhere
 * `npm start` runs): ECDSA P-256 with SHA-256, valid from a day ago for a year.
 */
export function selfSignedCertificate(ip: string): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = sequence(oid('2a8648ce3d040302'));
  const name = sequence(set(sequence(oid('550403'), der(0x0c, Buffer.from(`retention demo receiver ${ip}`)))));
  const now = Date.now();
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // a positive INTEGER
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))), // version 3
    der(0x02, serial),
    ecdsaWithSha256,
    name, // issuer: itself
    sequence(time(now - 86_400_000), time(now + 365 * 86_400_000)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(
      0xa3,
      sequence(
        sequence(
          oid('551d11'), // subjectAltName
          der(0x04, sequence(der(0x87, Buffer.from(ip.split('.').map(Number))))), // iPAddress
        ),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey); // DER ECDSA-Sig-Value
  const certificate = sequence(tbs, ecdsaWithSha256, der(0x03, Buffer.from([0]), signature));
  const base64 = certificate.toString('base64').replace(/.{64}/g, '$&\n');
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${base64.replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`,
  };
}

/** One DER element: tag, definite length, contents. */
function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const length: number[] = [];
  for (let rest = body.length; rest > 0; rest >>= 8) length.unshift(rest & 0xff);
  const header = body.length < 0x80 ? [body.length] : [0x80 | length.length, ...length];
  return Buffer.concat([Buffer.from([tag, ...header]), body]);
}
const sequence = (...contents: Buffer[]) => der(0x30, ...contents);
const set = (...contents: Buffer[]) => der(0x31, ...contents);
const oid = (encoded: string) => der(0x06, Buffer.from(encoded, 'hex'));

/** UTCTime through 2049, GeneralizedTime after (RFC 5280, 4.1.2.5). */
function time(millis: number): Buffer {
  const text = new Date(millis).toISOString().replace(/[-:T]|\.\d+/g, ''); // YYYYMMDDHHMMSSZ
  return Number(text.slice(0, 4)) < 2050 ? der(0x17, Buffer.from(text.slice(2))) : der(0x18, Buffer.from(text));
}
