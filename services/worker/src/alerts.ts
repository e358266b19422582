import type { EventEmitter } from 'node:events';
import type { Db } from '@retention/db';
import { endpointAlertRecipients, endpointDisabledMessage } from '@retention/domain';
import type { Logger, Mailer } from '@retention/runtime';
import type { DeliveryEvents } from './delivery/delivery-processor.js';

/**
 * Emails a workspace's owners and admins when an attempt turns its endpoint off: once per
 * auto-disable (the attempt that disabled it reports it, no other). In the background: the
 * delivery never waits for the email, and a failure is only logged.
 */
export function emailOnAutoDisable(
  events: EventEmitter<DeliveryEvents>,
  deps: { db: Db; mailer: Mailer; logger: Logger; baseUrl: string },
): void {
  events.on('attempt', ({ delivery, endpointDisabled }) => {
    if (!endpointDisabled) return;
    void (async () => {
      const target = await endpointAlertRecipients(deps.db, delivery.endpointId);
      if (!target || target.emails.length === 0) return;
      const message = endpointDisabledMessage({
        workspace_name: target.workspace_name,
        endpoint_name: target.name,
        url: target.url,
        link: `${deps.baseUrl}/dashboard/settings/webhooks`,
      });
      await deps.mailer.send({ to: target.emails, ...message });
    })().catch((error: unknown) =>
      deps.logger.warn({ endpoint_id: delivery.endpointId, err: error }, 'auto-disable alert not sent'),
    );
  });
}
