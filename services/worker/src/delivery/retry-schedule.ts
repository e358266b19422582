import { RETRY_JITTER } from '@retention/core';

/**
 * When the next attempt of a failed delivery is due (decisions.md): attempt n+1 waits
 * delays[n-1], stretched by 0 to 10% random jitter (RETRY_JITTER) and never shortened, so
 * receivers that failed together are not retried in one burst. delays.length + 1 attempts in all.
 */

export function maxAttempts(delaysMs: readonly number[]): number {
  return delaysMs.length + 1;
}

/** Milliseconds until the attempt after `attempt` (1-based), or null when it was the last. */
export function retryDelayMs(
  delaysMs: readonly number[],
  attempt: number,
  random: () => number = Math.random,
): number | null {
  const base = delaysMs[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 + RETRY_JITTER * random()));
}
