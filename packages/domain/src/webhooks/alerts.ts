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

export async function endpointAlerts(db: Queryable, endpointIds: string[]): Promise<Map<string, EndpointAlert>> {
  if (endpointIds.length === 0) return new Map();
  const rows = await db('webhook_endpoints')
    .whereIn('id', endpointIds)
    .where({ disabled_reason: 'consecutive_failures' })
    .whereNull('alert_dismissed_at')
    .select<Array<{ id: string; disabled_at: Date | null; updated_at: Date }>>('id', 'disabled_at', 'updated_at');
  return new Map(
    rows.map((row) => [
      row.id,
      { reason: 'consecutive_failures', disabled_at: toIsoMillis(row.disabled_at ?? row.updated_at) },
    ]),
  );
}

export async function dismissEndpointAlert(db: Queryable, endpointId: string): Promise<void> {
  await db('webhook_endpoints')
    .where({ id: endpointId })
    .whereNull('alert_dismissed_at')
    .update({ alert_dismissed_at: db.fn.now() });
}
