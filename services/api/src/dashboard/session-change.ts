import type { DashboardContext } from './context.js';

/**
 * What follows every committed change that ends sessions or changes the user behind them: every
 * API process is told (the session epoch, context.announceSessionChange), and when the change
 * takes the account from whoever held it (a password changed or reset, a removal from the
 * team), the account's trusted devices are forgotten, so a device cookie copied before is worth
 * nothing (trusted-devices.ts).
 */
export async function sessionsChanged(
  context: DashboardContext,
  change: { forgetDevicesOf?: string } = {},
): Promise<void> {
  await context.announceSessionChange();
  if (change.forgetDevicesOf !== undefined) await context.trustedDevices.forgetAll(change.forgetDevicesOf);
}
