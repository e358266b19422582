import { isIPv4 } from 'node:net';
import { invalidField } from './errors.js';

/** Said of a URL with `user:password@` in it: named, since "credentials" alone left a user guessing. */
const NO_CREDENTIALS = 'must not contain a user name or password (user:password@ before the host)';

export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** DNS limits (RFC 1035): a name of at most 253 characters, in labels of 1 to 63. */
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/**
 * Checks a receiver URL at save time (docs/decisions.md, "Outbound webhooks", Endpoints):
 * well formed, `https://`, no credentials,
 * a host that DNS could serve, and none of the forms the WHATWG parser would quietly turn
 * into another URL (an empty authority, IPv4 shorthand, a backslash for a slash, a port of
 * 0 or none): the owner sees the URL we will request, or an error that says why not.
 * Returns the URL in the normalised form the worker will request; that form (percent-encoded,
 * host in punycode) is what the length limit applies to.
 */
export function validateWebhookUrl(raw: unknown, field = 'url'): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalidField(field, 'is required');
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    throw invalidField(field, `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (!/^https:\/\//i.test(raw)) throw invalidField(field, 'must begin with https://');
  if (/[\s\u0000-\u001f\u007f]/.test(raw))
    throw invalidField(field, 'must not contain whitespace or control characters');
  // Even an empty one: a fragment is never sent, so the owner would not get what they typed.
  if (raw.includes('#')) throw invalidField(field, 'must not contain a #fragment, which is never sent');
  if (raw.split('?')[0]!.includes('\\'))
    throw invalidField(field, 'must not contain a backslash before the query (write / instead)');
  const authority = /^https:\/\/([^/?]*)/i.exec(raw)![1]!;
  if (authority.includes('@')) throw invalidField(field, NO_CREDENTIALS);
  if (authority === '') throw invalidField(field, 'must have a host right after https://');
  const [, rawHost, rawPort] = /^(\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(authority) ?? [];
  if (rawPort !== undefined && !isPort(rawPort)) throw invalidField(field, 'port must be a number from 1 to 65535');

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidField(field, 'is not a well-formed URL');
  }
  if (url.protocol !== 'https:') throw invalidField(field, 'must begin with https://');
  if (url.username || url.password) throw invalidField(field, NO_CREDENTIALS);
  checkHost(url.hostname, (rawHost ?? '').toLowerCase(), field);
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
    throw invalidField(
      field,
      `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters once normalised ` +
        `(percent-encoding and punycode lengthen it to ${url.href.length})`,
    );
  }
  return url.href;
}

function isPort(text: string): boolean {
  if (!/^\d{1,5}$/.test(text)) return false;
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

/** `host` as parsed (lowercase, punycode), `rawHost` as typed (lowercased). */
function checkHost(host: string, rawHost: string, field: string): void {
  if (host.startsWith('[')) return; // an IPv6 literal, which the parser has validated
  if (isIPv4(host)) {
    // The parser also reads 1.2.3, 0x7f.1, 2130706433 or 010.0.0.1 as IPv4 addresses.
    if (rawHost !== host)
      throw invalidField(field, 'an IPv4 address must be written as four decimal numbers (a.b.c.d)');
    return;
  }
  if (host.length > MAX_HOST_LENGTH)
    throw invalidField(field, `host name must be at most ${MAX_HOST_LENGTH} characters (in punycode)`);
  for (const label of host.split('.')) {
    if (label.length === 0 || label.length > MAX_LABEL_LENGTH) {
      throw invalidField(field, `each part of the host name between dots must be 1 to ${MAX_LABEL_LENGTH} characters`);
    }
    if (!HOST_LABEL.test(label)) {
      throw invalidField(
        field,
        'host name parts may hold only letters, digits, hyphens and underscores, ' +
          'and may not begin or end with a hyphen',
      );
    }
  }
}
