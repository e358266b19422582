import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/**
 * Headers on every answer of the API process, whichever part gives it (Express, the Stripe
 * receiver before it, the server's own refusals; docs/decisions.md, "Headers"):
 * `X-Content-Type-Options: nosniff`, so no browser reads a JSON answer (an error may echo what a
 * caller sent) as HTML or script; and, when BASE_URL is https, `Strict-Transport-Security` for a
 * year, so a browser that has reached the dashboard once never asks for it over plain http. Not
 * includeSubDomains: the API's host says nothing of its siblings, which may serve plain http.
 */
export function securityHeaders(baseUrl: string): Readonly<Record<string, string>> {
  return {
    'X-Content-Type-Options': 'nosniff',
    ...(baseUrl.startsWith('https:') && { 'Strict-Transport-Security': 'max-age=31536000' }),
  };
}

/**
 * `listener` with the headers above set before it runs, so nothing it answers goes without
 * them. createApiServer serves everything through this; so does a test serving the app alone.
 */
export function withSecurityHeaders(baseUrl: string, listener: RequestListener): RequestListener {
  const headers = Object.entries(securityHeaders(baseUrl));
  return (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    listener(req, res);
  };
}
