import { API_TOKEN_PREFIX } from '@retention/core';

/** Every token minted is `sk_live_` + 32 base62 characters: anything else is unknown unhashed. */
const TOKEN_SHAPE = /^sk_live_[0-9A-Za-z]{32}$/;

/**
 * What an Authorization header holds, before anything is looked up: nothing, something that is
 * not `Bearer sk_live_…`, a token of a shape no token has, or a token to look up.
 */
export type BearerToken =
  { kind: 'missing' } | { kind: 'malformed' } | { kind: 'impossible' } | { kind: 'token'; token: string };

export function bearerTokenOf(header: string | undefined): BearerToken {
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const token = /^Bearer +(\S+) *$/i.exec(header)?.[1];
  if (!token?.startsWith(API_TOKEN_PREFIX)) return { kind: 'malformed' };
  if (!TOKEN_SHAPE.test(token)) return { kind: 'impossible' };
  return { kind: 'token', token };
}
