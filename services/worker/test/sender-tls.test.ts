import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookSender } from '@retention/domain';
import { createPrivateCaCertificate } from './support/certificate.js';

/**
 * A receiver whose certificate a private authority signed: the delivery log's line says what its
 * owner can do, in both readings of Node's UNABLE_TO_VERIFY_LEAF_SIGNATURE (an intermediate not
 * sent, or an authority nobody public vouches for), and not Node's advice to whoever runs Node.
 */
let server: https.Server;
let certificate: Awaited<ReturnType<typeof createPrivateCaCertificate>>;

beforeAll(async () => {
  certificate = await createPrivateCaCertificate();
  server = https.createServer({ key: certificate.key, cert: certificate.cert }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await certificate.remove();
});

describe('a receiver certified by a private authority', () => {
  it('fails as a TLS error whose words say to send the chain or use a public authority', async () => {
    const sender = createWebhookSender({ timeoutMs: 3000, baseUrl: 'http://localhost', allowPrivateNetworks: true });
    try {
      const { port } = server.address() as AddressInfo;
      const result = await sender.send({
        url: `https://127.0.0.1:${port}/hook`,
        secret: 'whsec_private',
        body: Buffer.from('{}'),
      });
      expect(result).toMatchObject({ succeeded: false, httpStatus: null });
      expect(result.error).toBe(
        "TLS error (UNABLE_TO_VERIFY_LEAF_SIGNATURE): the receiver's certificate could not be traced to a trusted " +
          'authority: send its intermediate certificates with it, or, if it is from a private authority, receivers ' +
          'need a certificate from a public certificate authority',
      );
    } finally {
      sender.close();
    }
  });
});
