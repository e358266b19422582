import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export interface TestCertificate {
  key: Buffer;
  cert: Buffer;
  /** The certificate's file: what NODE_EXTRA_CA_CERTS points at for a worker process. */
  certPath: string;
  /** The key's file, for a server that reads it from disk (redis-server). */
  keyPath: string;
  remove(): Promise<void>;
}

/** Host names a test's own name server (dns-server.ts) may point at the receiver. */
const RECEIVER_TEST_NAMES = ['healthy-1.test', 'healthy-2.test', 'healthy-3.test', 'healthy-4.test', 'healthy-5.test'];

/** A self-signed certificate for localhost, RECEIVER_TEST_NAMES, 127.0.0.1 and ::1, made now with openssl. */
export async function createTestCertificate(): Promise<TestCertificate> {
  const directory = await mkdtemp(path.join(tmpdir(), 'retention-receiver-'));
  const keyPath = path.join(directory, 'key.pem');
  const certPath = path.join(directory, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyPath,
    '-out',
    certPath,
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    `subjectAltName=DNS:localhost,${RECEIVER_TEST_NAMES.map((name) => `DNS:${name}`).join(',')},IP:127.0.0.1,IP:::1`,
  ]);
  return {
    key: await readFile(keyPath),
    cert: await readFile(certPath),
    certPath,
    keyPath,
    remove: () => rm(directory, { recursive: true, force: true }),
  };
}

/**
 * A certificate for 127.0.0.1 signed by a private authority made for it (no intermediate sent):
 * what a receiver inside a company's own PKI serves. Node says UNABLE_TO_VERIFY_LEAF_SIGNATURE.
 */
export async function createPrivateCaCertificate(): Promise<{ key: Buffer; cert: Buffer; remove(): Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), 'retention-private-ca-'));
  const file = (name: string) => path.join(directory, name);
  const run = (...args: string[]) => promisify(execFile)('openssl', args);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=Private CA',
  );
  await run('req', ...ecKey, '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', '/CN=127.0.0.1');
  await writeFile(file('leaf.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await run(
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('leaf.pem'),
    '-days',
    '1',
    '-extfile',
    file('leaf.ext'),
  );
  return {
    key: await readFile(file('leaf.key')),
    cert: await readFile(file('leaf.pem')),
    remove: () => rm(directory, { recursive: true, force: true }),
  };
}
