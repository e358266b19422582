import { toIsoMillis } from '@retention/core';
import type { Queryable } from '@retention/db';

/**
 * The auto-disable banner: an endpoint turned off after its consecutive failures carries an
 * alert until someone turns it on (the trigger of migration 0010 clears it) or dismisses it.
 */
export interface EndpointAlert {
  reason: 'consecutive_failures';
  disabled_at: string;
}

/** What the dashboard shows of an endpoint that is off: its alert, if any, and since when it is off. */
export interface EndpointOff {
  alert: EndpointAlert | null;
  /** Null when it was turned off before that was recorded. */
  disabled_at: string | null;
}

/**
 * The endpoints among `endpointIds` that are off, read in one statement. An alert is only ever
 * on an endpoint that is off (0005's check: `enabled` exactly when `disabled_reason` is null).
 */
export async function endpointsOff(db: Queryable, endpointIds: string[]): Promise<Map<string, EndpointOff>> {
  if (endpointIds.length === 0) return new Map();
  const rows = await db('webhook_endpoints').whereIn('id', endpointIds).where({ enabled: false }).select<
    Array<{
      id: string;
      disabled_reason: string;
      disabled_at: Date | null;
      alert_dismissed_at: Date | null;
      updated_at: Date;
    }>
  >('id', 'disabled_reason', 'disabled_at', 'alert_dismissed_at', 'updated_at');
  return new Map(
    rows.map((row) => [
      row.id,
      {
        alert:
          row.disabled_reason === 'consecutive_failures' && row.alert_dismissed_at === null
            ? { reason: 'consecutive_failures', disabled_at: toIsoMillis(row.disabled_at ?? row.updated_at) }
            : null,
        disabled_at: row.disabled_at === null ? null : toIsoMillis(row.disabled_at),
      },
    ]),
  );
}

export async function endpointAlerts(db: Queryable, endpointIds: string[]): Promise<Map<string, EndpointAlert>> {
  const alerts = new Map<string, EndpointAlert>();
  for (const [id, { alert }] of await endpointsOff(db, endpointIds)) if (alert) alerts.set(id, alert);
  return alerts;
}

export async function dismissEndpointAlert(db: Queryable, endpointId: string): Promise<void> {
  await db('webhook_endpoints')
    .where({ id: endpointId })
    .whereNull('alert_dismissed_at')
    .update({ alert_dismissed_at: db.fn.now() });
}
