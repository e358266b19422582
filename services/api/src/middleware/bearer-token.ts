import { API_TOKEN_PREFIX } from '@retention/core';

/** Every token minted is `sk_live_` + 32 base62 characters: anything else is unknown unhashed. */
const TOKEN_SHAPE = /^sk_live_[0-9A-Za-z]{32}$/;

/**
 * What an Authorization header holds, before anything is looked up: nothing, something that is
 * not `Bearer sk_live_…`, a token of a shape no token has, or a token to look up.
 */
export type BearerToken =
  | { kind: 'missing' }
  | { kind: 'ambiguous' }
  | { kind: 'malformed' }
  | { kind: 'impossible' }
  | { kind: 'token'; token: string };

/**
 * The Authorization headers a request carried, as sent. Node keeps only the first of several
 * in `req.headers` (and fetch would join them with a comma), so only the raw list can tell.
 */
export function authorizationHeadersOf(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') values.push(rawHeaders[i + 1]!);
  }
  return values;
}

/**
 * Two Authorization headers are ambiguous even when they agree: which one a proxy in front
 * would forward or log is anyone's guess, so neither is used.
 */
export function bearerTokenOf(headers: readonly string[]): BearerToken {
  if (headers.length > 1) return { kind: 'ambiguous' };
  const header = headers[0];
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const token = /^Bearer +(\S+) *$/i.exec(header)?.[1];
  if (!token?.startsWith(API_TOKEN_PREFIX)) return { kind: 'malformed' };
  if (!TOKEN_SHAPE.test(token)) return { kind: 'impossible' };
  return { kind: 'token', token };
}
