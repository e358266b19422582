import { scrubSecrets } from '@retention/core';
import { firstCause } from './error-cause.js';

/**
 * Liveness and readiness, shared by the API and the worker:
 * - liveness (`/healthz`) says the process is running and its event loop answers; it never
 *   looks at the backing services, so an orchestrator does not restart every replica
 *   because PostgreSQL blinked;
 * - readiness (`/readyz`) says the process can do its job now: every backing service
 *   answered within a short timeout. A check that hangs counts as down after `timeoutMs`,
 *   so a probe never hangs with it.
 */

/** Resolves when the dependency answered; rejects or hangs when it did not. */
export type ReadinessCheck = () => Promise<unknown>;

export interface CheckResult {
  status: 'up' | 'down';
  latency_ms: number;
  /** Why it is down: the error, or the timeout. */
  error?: string;
}

export interface ReadinessReport {
  status: 'ready' | 'unavailable';
  checks: Record<string, CheckResult>;
}

export const READINESS_TIMEOUT_MS = 1_000;

export const LIVENESS_BODY = { status: 'ok' } as const;

export async function checkReadiness(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => [name, await runCheck(check, timeoutMs)] as const),
  );
  const results = Object.fromEntries(entries);
  return {
    status: entries.every(([, result]) => result.status === 'up') ? 'ready' : 'unavailable',
    checks: results,
  };
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  // The check keeps running after a timeout; its late failure must not become unhandled.
  const attempt = Promise.resolve().then(check);
  attempt.catch(() => undefined);
  try {
    await Promise.race([attempt, timeout]);
    return { status: 'up', latency_ms: elapsed() };
  } catch (error) {
    return { status: 'down', latency_ms: elapsed(), error: healthErrorText(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** One line for a health answer: the cause's message (or code), secrets scrubbed, 200 characters at most. */
function healthErrorText(error: unknown): string {
  const cause = firstCause(error);
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  const text = cause instanceof Error ? cause.message || code || cause.name : String(cause);
  const scrubbed = scrubSecrets(text);
  return scrubbed.length > 200 ? `${scrubbed.slice(0, 200)}…` : scrubbed;
}
