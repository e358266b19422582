/**
 * The one way the page talks to /dashboard/api. A 401 on a signed-in page is handed to the app
 * (setSessionEndedHandler), which asks the person to sign in again in place and answers whether
 * they did; the request is then asked again, so nothing the page held is lost (a person removed
 * from the team goes to the sign-in page instead). Every other refusal
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

/** Resolves true once the same person is signed in again, so the refused request can be asked again. */
type SessionEndedHandler = (code: string | null) => Promise<boolean>;

let onSessionEnded: SessionEndedHandler | null = null;
let onForbidden: (() => void) | null = null;

/**
 * The app's reaction to a session that ended under a signed-in page (see App: the sign-in dialog
 * in place), given the refusal's `code` (`member_removed`: the person was removed from the team,
 * docs/dashboard-api.md, who cannot sign in again and goes to the sign-in page).
 */
export function setSessionEndedHandler(handler: SessionEndedHandler): void {
  onSessionEnded = handler;
}

/**
 * Waits for the app's answer to an ended session, or for the request to be given up meanwhile
 * (its page left, its list's filters changed): an aborted request rejects as fetch would.
 */
async function awaitSignInAgain(code: string | null, signal: AbortSignal | undefined): Promise<boolean> {
  if (!onSessionEnded) return false;
  if (!signal) return onSessionEnded(code);
  signal.throwIfAborted();
  return new Promise<boolean>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void onSessionEnded!(code).then((answer) => {
      signal.removeEventListener('abort', onAbort);
      resolve(answer);
    });
  });
}

/**
 * The app's reaction to a 403 `forbidden`: the role may have changed since the page loaded (an
 * admin demoted in another tab), so it asks GET /me again, the page stops offering what the role
 * cannot do, and says why (see App, RoleChangedNote).
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
  // Asked again only once the person has signed in again: a request refused with 401 changed
  // nothing, and each round needs them to, so this never loops on its own.
  if (response.status === 401 && !options.anonymous && failure.type === 'authentication_required') {
    if (await awaitSignInAgain(failure.code, options.signal)) return api<T>(method, path, options);
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
