import { validateWebhookUrl } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { endpointChangeDetails } from '../webhooks/endpoints.js';
import { DEMO_ENDPOINTS } from './catalog.js';

/**
 * Where the demo's webhook endpoints point under `npm start`: a local receiver
 * (scripts/demo-receiver.ts) that answers each as the catalog's `accepts` says. Its port is
 * any free one, a new one at every start, so every start points the demo's endpoints at the
 * receiver it runs (`pointDemoEndpointsAt`) before the worker starts.
 */

export { DEMO_ENDPOINTS };
export type DemoEndpointKey = (typeof DEMO_ENDPOINTS)[number]['key'];

/** The receiver's URL for one endpoint of the catalog: the path names the endpoint, so the receiver knows how to answer. */
export function demoReceiverUrl(origin: string, key: DemoEndpointKey): string {
  return `${origin}/demo/${key}`;
}

/** A URL an earlier start's receiver had: loopback, any port. */
const EARLIER_RECEIVER = /^https:\/\/127\.0\.0\.1:\d{1,5}\/demo\/([a-z]+)$/;

/**
 * The catalog endpoint that `url` is the demo's URL of: the catalog's own `.example` URL (a
 * demo seeded before the receiver existed, or by `demo seed`), or an earlier start's receiver
 * URL. Undefined for any other URL: an endpoint the user pointed elsewhere is left alone.
 */
function demoEndpointOf(url: string): (typeof DEMO_ENDPOINTS)[number] | undefined {
  const earlierKey = EARLIER_RECEIVER.exec(url)?.[1];
  return DEMO_ENDPOINTS.find((endpoint) => endpoint.url === url || endpoint.key === earlierKey);
}

/**
 * Points every demo endpoint (see demoEndpointOf), in every workspace, at the receiver at
 * `origin`. Each change is written to the security log as `webhook.updated` by `actor`, as
 * any other change of an endpoint's URL is; nothing else about the endpoint changes (its
 * delivery log, its secret, whether it is on). Returns how many were changed.
 */
export async function pointDemoEndpointsAt(db: Db, origin: string, actor: Actor): Promise<number> {
  return inTransaction(db, async (trx) => {
    const rows = await trx<{ id: string; workspace_id: string; url: string }>('webhook_endpoints')
      .whereIn(
        'url',
        DEMO_ENDPOINTS.map((endpoint) => endpoint.url),
      )
      .orWhere('url', 'like', 'https://127.0.0.1:%/demo/%')
      .select('id', 'workspace_id', 'url')
      .forNoKeyUpdate();
    let changed = 0;
    for (const row of rows) {
      const endpoint = demoEndpointOf(row.url);
      if (!endpoint) continue;
      const url = validateWebhookUrl(demoReceiverUrl(origin, endpoint.key));
      if (url === row.url) continue;
      await trx('webhook_endpoints').where({ id: row.id }).update({ url, updated_at: trx.fn.now() });
      // An earlier start's receiver is this one on another port: the attempts it was sent (the
      // demo's history, replayed at seeding) move with it, or after each restart every one would
      // read "Sent to" a port nothing listens on. Attempts to the catalog's addresses stay.
      if (EARLIER_RECEIVER.test(row.url)) {
        await trx('webhook_attempts').where({ endpoint_id: row.id, url: row.url }).update({ url });
      }
      await recordSecurityEvent(trx, {
        workspace_id: row.workspace_id,
        action: 'webhook.updated',
        actor,
        target: { type: 'webhook_endpoint', id: row.id, label: row.url },
        // The URL from and to, as any edit of an endpoint records it (updateEndpoint).
        details: endpointChangeDetails({ url: row.url }, { url }),
      });
      changed += 1;
    }
    return changed;
  });
}
