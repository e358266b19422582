/**
 * The Stripe connection's mode and the events it set aside, in the Processor page's words
 * (docs/processor.md, "Mode" and "Set aside"). Stripe keeps test and live data apart; the page
 * used to show a key as `rk_…1234`, so which of the two a workspace mirrored was invisible.
 */

import type { ProcessorMode, SetAsideReason } from '@retention/core/processor-modes';

export const MODE_TEXT: Record<ProcessorMode, string> = { test: 'Test mode', live: 'Live mode' };

/** Before a key or Stripe's first event has told it. */
export const MODE_UNKNOWN = "Not known yet: set by the API key, or by Stripe's first event";

/** Why events were set aside, counted, in words; null when none were. */
export function setAsideText(counts: Record<SetAsideReason, number>, mode: ProcessorMode | null): string | null {
  const other = mode === 'live' ? 'test' : 'live';
  const parts = [
    counts.connected_account > 0 && `${counts.connected_account} from connected accounts (Stripe Connect)`,
    counts.other_mode > 0 &&
      `${counts.other_mode} in ${other} mode (this connection is in ${other === 'live' ? 'test' : 'live'} mode)`,
    counts.signup_payment > 0 &&
      `${counts.signup_payment} failed first payments of a signup (no recovery: Stripe does not retry them)`,
  ].filter((part): part is string => typeof part === 'string');
  return parts.length === 0 ? null : parts.join('; ');
}

/** The switch's confirmation: what changes and what stays. */
export function modeSwitchMessage(from: ProcessorMode, to: ProcessorMode): string {
  return (
    `This is a ${to} mode key and the connection is in ${from} mode. Switching makes it a ${to} mode connection: ` +
    `the data already imported in ${from} mode stays in this workspace, beside what ${to} mode brings, and ` +
    `${from} mode events from Stripe are set aside from then on.`
  );
}
