import { describe, expect, it } from '@jest/globals';
import { newSigningSecret, serializeWebhookPayload, signatureHeader } from '@retention/core';
import { verifyWebhook } from '../src/index.js';

describe('a delivery signed during a Roll secret overlap', () => {
  const body = serializeWebhookPayload('recovery.opened', '2026-11-25T08:00:00.000Z', { campaign: { id: 'x' } });
  const now = Math.floor(Date.now() / 1000);
  const fresh = newSigningSecret();
  const old = newSigningSecret();
  const header = signatureHeader([fresh, old], now, body);

  it('carries one v1 per valid secret, the new one first', () => {
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(header.split(',v1=')[1]).toBe(signatureHeader(fresh, now, body).split('v1=')[1]);
  });

  it('verifies with either secret, and with no other', () => {
    expect(verifyWebhook(body, header, fresh).type).toBe('recovery.opened');
    expect(verifyWebhook(body, header, old).type).toBe('recovery.opened');
    expect(() => verifyWebhook(body, header, newSigningSecret())).toThrow();
  });
});
