import { describe, expect, it } from '@jest/globals';
import { loadConfig, RETRY_JITTER } from '@retention/core';
import { maxAttempts, retryDelayMs } from '../src/delivery/retry-schedule.js';
import { testSecretsKey } from '@retention/testkit';

// decisions.md: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SCHEDULE = [5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];
const JUST_BELOW_ONE = 1 - Number.EPSILON;

describe('the retry schedule', () => {
  it('is the schedule of decisions.md by default: 10 attempts in all', () => {
    const { webhookRetryDelaysMs } = loadConfig({ SECRETS_KEY: testSecretsKey() });
    expect(webhookRetryDelaysMs).toEqual(SCHEDULE);
    expect(maxAttempts(webhookRetryDelaysMs)).toBe(10);
  });

  it('waits exactly the delay when the jitter draws 0: never shorter', () => {
    SCHEDULE.forEach((delay, index) => expect(retryDelayMs(SCHEDULE, index + 1, () => 0)).toBe(delay));
  });

  it('stretches the delay by at most 10% when the jitter draws just below 1', () => {
    expect(RETRY_JITTER).toBe(0.1);
    SCHEDULE.forEach((delay, index) => {
      const stretched = retryDelayMs(SCHEDULE, index + 1, () => JUST_BELOW_ONE)!;
      expect(stretched).toBeLessThanOrEqual(Math.round(delay * 1.1));
      // A millisecond of rounding at most: the whole 10% is used, not a fraction of it.
      expect(stretched).toBeGreaterThanOrEqual(Math.round(delay * 1.1) - 1);
    });
  });

  it('spreads the delay in between, in proportion to the draw', () => {
    expect(retryDelayMs([100_000], 1, () => 0.5)).toBe(105_000);
    expect(retryDelayMs([100_000], 1, () => 0.25)).toBe(102_500);
  });

  it('stays within [delay, delay + 10%] for real random draws', () => {
    const delays = Array.from({ length: 10_000 }, () => retryDelayMs([5_000], 1)!);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(5_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(5_500);
    // Spread over the whole range, not stuck at one end.
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(450);
  });

  it('has no attempt after the last one', () => {
    expect(retryDelayMs(SCHEDULE, 10, () => 0)).toBeNull();
    expect(retryDelayMs([100], 2, () => 0)).toBeNull();
    expect(maxAttempts([100])).toBe(2);
  });
});
