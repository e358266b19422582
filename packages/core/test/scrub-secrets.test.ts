import { describe, expect, it } from '@jest/globals';
import { scrubSecrets } from '../src/index.js';

/** The one mask for credentials in free text: log lines, and Stripe's words shown to an owner. */
describe('scrubSecrets', () => {
  it('masks our tokens and signing secrets and Stripe keys, glued to a word or not, keeping the prefix', () => {
    expect(scrubSecrets('GET /x/1sk_live_abcDEF123_-x?y')).toBe('GET /x/1sk_live_[redacted]?y');
    expect(scrubSecrets('whsec_abc and rk_test_Zz9')).toBe('whsec_[redacted] and rk_test_[redacted]');
  });

  it('masks the starred form Stripe names a key by in its errors, last four included', () => {
    expect(scrubSecrets('Invalid API Key provided: rk_live_****1234.')).toBe(
      'Invalid API Key provided: rk_live_[redacted].',
    );
    expect(scrubSecrets('sk_test_*********************wxyz')).toBe('sk_test_[redacted]');
  });

  it('leaves text without a credential as it is', () => {
    expect(scrubSecrets('no key here: sk_ and whsec alone')).toBe('no key here: sk_ and whsec alone');
  });
});
