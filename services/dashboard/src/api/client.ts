/**
 * The one way the page talks to /dashboard/api. A 401 on a signed-in page ends the session in
 * the page: it goes to sign-in and, once signed in, back to where it was. Every other refusal
 * becomes an ApiError carrying the server's own message, shown word for word, and the field it
 * is about when the server names one (`param`), for a form that shows it at that field.
 */
export const API_BASE = '/dashboard/api';
export const APP_BASE = '/dashboard';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    /** The field an `invalid_param` refusal is about (`current_password`), when it is about one. */
    readonly param: string | null = null,
    /** A finer reason than the type, when the server gives one (`member_removed`). */
    readonly code: string | null = null,
    /**
     * The refusal's `error` object as the server sent it, for what a page reads beyond the words:
     * the object a refusal is about, as it is now (`endpoint` with `endpoint_changed`).
     */
    readonly body: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

/** Reasons written as what the value does wrong, after the field's name ("is not …", "must be …"). */
const PREDICATE = /^(is|are|was|were|has|have|must|cannot|can|does|do|should|may)\b/;

/**
 * A refusal about one field as a sentence to show at that field, where its name would only
 * repeat the label: `current_password: is not your current password` reads "That is not your
 * current password."; a reason that is a sentence of its own ("Stripe refused the key …") is
 * only capitalized. The server's message names the field first (`param: reason`, whole for a
 * page that shows it on its own, docs/dashboard-api.md "Conventions"); the field is the `param`
 * the server sent beside it, so only that exact prefix is dropped.
 */
export function fieldSentence(error: ApiError): string {
  const prefix = `${error.param}: `;
  const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  const sentence = PREDICATE.test(reason) ? `That ${reason}` : reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface Options {
  body?: unknown;
  /** Routes used before sign-in (the sign-in form itself): a 401 is an answer, not an expiry. */
  anonymous?: boolean;
  signal?: AbortSignal;
}

let onSessionEnded: ((code: string | null) => void) | null = null;
let onForbidden: (() => void) | null = null;

/**
 * The app's reaction to an expired session (see App: it routes to sign-in with `next`), given the
 * refusal's `code` (`member_removed`: the person was removed from the team, docs/dashboard-api.md).
 */
export function setSessionEndedHandler(handler: (code: string | null) => void): void {
  onSessionEnded = handler;
}

/**
 * The app's reaction to a 403 `forbidden`: the role may have changed since the page loaded (an
 * admin demoted in another tab), so it asks GET /me again and the page stops offering what the
 * role cannot do (see App).
 */
export function setForbiddenHandler(handler: () => void): void {
  onForbidden = handler;
}

export async function api<T>(method: Method, path: string, options: Options = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      ...(options.signal && { signal: options.signal }),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  const error = (parsed as { error?: { type?: string; message?: string; param?: string; code?: string } } | undefined)
    ?.error;
  const failure = new ApiError(
    response.status,
    error?.type ?? 'unknown',
    error?.message ?? `The server answered ${response.status} ${response.statusText}.`,
    typeof error?.param === 'string' ? error.param : null,
    typeof error?.code === 'string' ? error.code : null,
    typeof error === 'object' && error !== null ? error : {},
  );
  if (response.status === 401 && !options.anonymous && failure.type === 'authentication_required') {
    onSessionEnded?.(failure.code);
  }
  if (response.status === 403 && !options.anonymous && failure.type === 'forbidden') onForbidden?.();
  throw failure;
}

export function query(params: Record<string, string | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
