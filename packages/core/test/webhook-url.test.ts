import { describe, expect, it } from '@jest/globals';
import { MAX_WEBHOOK_URL_LENGTH, ServiceError, validateWebhookUrl } from '../src/index.js';

function refusal(raw: unknown): { type: string; message: string } | 'accepted' {
  try {
    validateWebhookUrl(raw);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    return { type: error.type, message: error.message };
  }
}

const label63 = 'a'.repeat(63);

describe('validateWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/in', 'https://hooks.example.com/in'],
    ['HTTPS://Hooks.Example.COM:443/a/../b?x=1', 'https://hooks.example.com/b?x=1'],
    ['https://hooks.example.com:8443/a/b?x=1&y=%20z', 'https://hooks.example.com:8443/a/b?x=1&y=%20z'],
    ['https://example.com:1/', 'https://example.com:1/'],
    ['https://example.com:65535/', 'https://example.com:65535/'],
    ['https://bücher.example/in', 'https://xn--bcher-kva.example/in'],
    ['https://203.0.113.9/hook', 'https://203.0.113.9/hook'],
    ['https://[2001:db8::1]:8443/hook', 'https://[2001:db8::1]:8443/hook'],
    ['https://localhost/', 'https://localhost/'],
    ['https://in_bound.example.com/', 'https://in_bound.example.com/'],
    [`https://${label63}.example.com/`, `https://${label63}.example.com/`],
    [`https://${[label63, label63, label63, 'a'.repeat(61)].join('.')}/`, undefined],
  ])('accepts %s', (raw, normalised) => {
    expect(validateWebhookUrl(raw)).toBe(normalised ?? raw);
  });

  it.each([
    ['https:///x', /url: must have a host right after https:\/\//],
    ['https://?x=1', /url: must have a host right after https:\/\//],
    ['https://\\x/', /url: must not contain a backslash/],
    ['https://x\\y/z', /url: must not contain a backslash/],
    ['https://@example.com/', /url: must not contain a user name or password \(user:password@ before the host\)/],
    [
      'https://user:pw@example.com/',
      /url: must not contain a user name or password \(user:password@ before the host\)/,
    ],
    ['https://example.com:0/', /url: port must be a number from 1 to 65535/],
    ['https://example.com:65536/', /url: port must be a number from 1 to 65535/],
    ['https://example.com:99999999999/', /url: port must be a number from 1 to 65535/],
    ['https://example.com:/', /url: port must be a number from 1 to 65535/],
    ['https://example.com:-1/', /url: port must be a number from 1 to 65535/],
    ['https://1.2.3/', /url: an IPv4 address must be written as four decimal numbers/],
    ['https://0x7f.1/', /url: an IPv4 address must be written as four decimal numbers/],
    ['https://2130706433/', /url: an IPv4 address must be written as four decimal numbers/],
    ['https://010.0.0.1/', /url: an IPv4 address must be written as four decimal numbers/],
    ['https://1.2.3.4./', /url: an IPv4 address must be written as four decimal numbers/],
    ['https://a..b/', /url: each part of the host name between dots must be 1 to 63 characters/],
    ['https://example.com./', /url: each part of the host name between dots must be 1 to 63 characters/],
    [`https://${label63}a.example.com/`, /url: each part of the host name between dots must be 1 to 63/],
    [`https://${[label63, label63, label63, 'a'.repeat(62)].join('.')}/`, /url: host name must be at most 253/],
    // Short as typed, far longer in punycode.
    [`https://${'ü'.repeat(300)}.com/`, /url: host name must be at most 253 characters/],
    ['https://-a-.com/', /may not begin or end with a hyphen/],
    ['https://ex!ample.com/', /host name parts may hold only letters, digits, hyphens and underscores/],
    ['https://example.com/#frag', /url: must not contain a #fragment/],
    ['https://example.com/?a=b#', /url: must not contain a #fragment/],
    ['https://example.com#', /url: must not contain a #fragment/],
  ])('refuses %s', (raw, message) => {
    expect(refusal(raw)).toEqual({ type: 'invalid_param', message: expect.stringMatching(message) });
  });

  it('limits the length of the URL as it will be stored and requested, not as typed', () => {
    const typed = `https://example.com/${'ä'.repeat(1000)}`;
    expect(typed.length).toBeLessThan(MAX_WEBHOOK_URL_LENGTH);
    expect(refusal(typed)).toEqual({
      type: 'invalid_param',
      message:
        'url: must be at most 2048 characters once normalised (percent-encoding and punycode lengthen it to 6020)',
    });
    const longest = `https://example.com/${'a'.repeat(MAX_WEBHOOK_URL_LENGTH - 'https://example.com/'.length)}`;
    expect(validateWebhookUrl(longest)).toBe(longest);
    expect(refusal(`${longest}a`)).toMatchObject({ type: 'invalid_param' });
    // One character fits as typed, three once percent-encoded.
    expect(refusal(`${longest.slice(0, -1)}ä`)).toMatchObject({
      type: 'invalid_param',
      message: expect.stringMatching(/once normalised/),
    });
  });

  it('names the field it checks', () => {
    expect(() => validateWebhookUrl('http://x', 'endpoint.url')).toThrow(/^endpoint\.url: must begin with https:\/\//);
  });
});
