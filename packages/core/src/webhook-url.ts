import { invalidParam } from './errors.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Checks a receiver URL at save time (spec 2.5): well formed, `https://`, no credentials.
 * Returns the URL in the normalised form the worker will request.
 */
export function validateWebhookUrl(raw: unknown, field = 'url'): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalidParam(`${field}: is required`);
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    throw invalidParam(`${field}: must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (!/^https:\/\//i.test(raw)) throw invalidParam(`${field}: must begin with https://`);
  if (/[\s\u0000-\u001f\u007f]/.test(raw))
    throw invalidParam(`${field}: must not contain whitespace or control characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParam(`${field}: is not a well-formed URL`);
  }
  if (url.protocol !== 'https:') throw invalidParam(`${field}: must begin with https://`);
  if (url.username || url.password) throw invalidParam(`${field}: must not contain credentials`);
  if (!url.hostname) throw invalidParam(`${field}: has no host`);
  if (url.hash) throw invalidParam(`${field}: must not contain a #fragment, which is never sent`);
  return url.href;
}
