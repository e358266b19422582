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
