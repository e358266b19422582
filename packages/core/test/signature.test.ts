import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  computeSignature,
  parseSignatureHeader,
  signatureHeader,
  SignatureVerificationError,
  verifySignature,
} from '../src/index.js';

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

function failureOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof SignatureVerificationError) return error.reason;
    throw error;
  }
  throw new Error('expected a SignatureVerificationError');
}

describe('webhook signatures', () => {
  it.each(VECTORS)('matches the openssl known answer for t=$timestamp', ({ secret, timestamp, body, hex }) => {
    expect(computeSignature(secret, timestamp, body)).toBe(hex);
    expect(signatureHeader(secret, timestamp, body)).toBe(`t=${timestamp},v1=${hex}`);
    expect(verifySignature(body, `t=${timestamp},v1=${hex}`, secret, { nowSeconds: timestamp })).toBe(timestamp);
  });

  it('signs a string body exactly as its UTF-8 bytes', () => {
    const body = '{"data":{"name":"Zoë"}}';
    expect(computeSignature('whsec_a', 5, body)).toBe(computeSignature('whsec_a', 5, Buffer.from(body, 'utf8')));
  });

  const { secret, timestamp, body, hex } = VECTORS[0]!;
  const header = `t=${timestamp},v1=${hex}`;

  it('rejects a tampered body, a wrong secret and a changed timestamp', () => {
    const tampered = Buffer.from(body.toString().replace('opened', 'closed!'));
    expect(failureOf(() => verifySignature(tampered, header, secret, { nowSeconds: timestamp }))).toBe(
      'signature_mismatch',
    );
    expect(failureOf(() => verifySignature(body, header, 'whsec_other', { nowSeconds: timestamp }))).toBe(
      'signature_mismatch',
    );
    expect(
      failureOf(() => verifySignature(body, `t=${timestamp + 1},v1=${hex}`, secret, { nowSeconds: timestamp })),
    ).toBe('signature_mismatch');
  });

  it('accepts timestamps within 300 seconds either way and rejects older or newer ones', () => {
    for (const skew of [-300, 0, 300]) {
      expect(verifySignature(body, header, secret, { nowSeconds: timestamp + skew })).toBe(timestamp);
    }
    expect(failureOf(() => verifySignature(body, header, secret, { nowSeconds: timestamp + 301 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(failureOf(() => verifySignature(body, header, secret, { nowSeconds: timestamp - 301 }))).toBe(
      'timestamp_out_of_tolerance',
    );
    expect(verifySignature(body, header, secret, { nowSeconds: timestamp + 1000, toleranceSeconds: 1000 })).toBe(
      timestamp,
    );
  });

  it('accepts the header when any of several v1 values matches', () => {
    const other = 'a'.repeat(64);
    expect(verifySignature(body, `t=${timestamp},v1=${other},v1=${hex}`, secret, { nowSeconds: timestamp })).toBe(
      timestamp,
    );
  });

  it.each([
    undefined,
    '',
    'garbage',
    `v1=${hex}`,
    `t=${timestamp}`,
    `t=abc,v1=${hex}`,
    `t=${timestamp},v1=${hex.toUpperCase()}`,
    `t=${timestamp},v1=sha256=${hex}`,
    `t=${timestamp},v1=${hex.slice(1)}`,
    `t=${timestamp},t=${timestamp},v1=${hex}`,
    `t=-5,v1=${hex}`,
    `t=${timestamp},v1=${hex},`,
    'x'.repeat(5000),
  ])('rejects the malformed header %p', (bad) => {
    expect(failureOf(() => parseSignatureHeader(bad))).toBe('malformed_header');
    expect(failureOf(() => verifySignature(body, bad, secret, { nowSeconds: timestamp }))).toBe('malformed_header');
  });

  // The HMAC covers the literal t text: any other spelling of the same number is refused.
  it.each([`0${timestamp}`, `+${timestamp}`, ` ${timestamp}`, `${timestamp}.0`, `${timestamp}e0`, '1.7e9', '00'])(
    'rejects the non-canonical t=%p even when signed over that very text',
    (t) => {
      const overText = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
      const bad = `t=${t},v1=${overText}`;
      expect(failureOf(() => parseSignatureHeader(bad))).toBe('malformed_header');
      expect(failureOf(() => verifySignature(body, bad, secret, { nowSeconds: timestamp }))).toBe('malformed_header');
    },
  );

  it('tolerates spaces around elements, never inside one', () => {
    expect(verifySignature(body, ` t=${timestamp} , v1=${hex} `, secret, { nowSeconds: timestamp })).toBe(timestamp);
    expect(failureOf(() => parseSignatureHeader(`t= ${timestamp},v1=${hex}`))).toBe('malformed_header');
    expect(failureOf(() => parseSignatureHeader(`t=${timestamp},v1= ${hex}`))).toBe('malformed_header');
  });
});
