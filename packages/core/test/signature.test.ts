import { describe, expect, it } from '@jest/globals';
import { computeSignature, signatureHeader } from '../src/index.js';

// Known answers computed outside this code base, with:
//   printf '%s' '<t>.<body>' | openssl dgst -sha256 -hmac '<secret>'
const VECTORS = [
  {
    secret: 'whsec_test_secret_1',
    timestamp: 1700000000,
    body: Buffer.from('{"type":"recovery.opened","created_at":"2026-03-07T09:15:02.123Z","data":{"campaign_id":"x"}}'),
    hex: '2492bda124319cc074a61bc9c3849003916ae9f5c65c98668d481f53a3d5002d',
  },
  {
    secret: 'whsec_k',
    timestamp: 0,
    body: Buffer.alloc(0),
    hex: '3336e5b67f1c46a49d963979ab4f471312ddebc41484e65929bce5936b3495ea',
  },
  {
    // Raw bytes that are not UTF-8: the signature covers bytes, never re-encoded text.
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    timestamp: 1712345678,
    body: Buffer.from([0xff, 0x00, 0xfe, ...Buffer.from(' binary')]),
    hex: '4cb5e41f15861ba5fcd8a7efad91ad6355b9ce1eccf99e99d6e1e5b7e0b01665',
  },
];

/**
 * The signing side. Verification is the SDK's alone (packages/sdk/src/webhooks/verify.ts, the
 * verifier receivers install), tested in packages/sdk/test/verify-webhook.test.ts against
 * deliveries signed here.
 */
describe('webhook signatures', () => {
  it.each(VECTORS)('matches the openssl known answer for t=$timestamp', ({ secret, timestamp, body, hex }) => {
    expect(computeSignature(secret, timestamp, body)).toBe(hex);
    expect(signatureHeader(secret, timestamp, body)).toBe(`t=${timestamp},v1=${hex}`);
  });

  it('signs a string body exactly as its UTF-8 bytes', () => {
    const body = '{"data":{"name":"Zoë"}}';
    expect(computeSignature('whsec_a', 5, body)).toBe(computeSignature('whsec_a', 5, Buffer.from(body, 'utf8')));
  });
});
