import { validateWebhookUrl } from '@retention/core';
import { inTransaction, type Db, type Queryable } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { endpointChangeDetails, endpointTarget } from '../webhooks/endpoints.js';
import { DEMO_ENDPOINTS } from './catalog.js';

/**
 * Where the demo's webhook endpoints point under `npm start`: a local receiver
 * (scripts/demo-receiver.ts) that answers each as the catalog's `accepts` says, and any other
 * path (an endpoint a developer adds at the receiver's URL) with a 200. The database remembers
 * its origin (table `demo_receiver`), and the next start listens on the same port when it is
 * free, so nothing needs repointing. When that port is taken (another `npm start` on the same
 * machine), the receiver gets another one and `pointDemoEndpointsAt` moves every endpoint on
 * the previous origin to it, before the worker starts (docs/decisions.md, "The demo receiver
 * keeps its port").
 */

export { DEMO_ENDPOINTS };
export type DemoEndpointKey = (typeof DEMO_ENDPOINTS)[number]['key'];

/** The receiver's URL for one endpoint of the catalog: the path names the endpoint, so the receiver knows how to answer. */
export function demoReceiverUrl(origin: string, key: DemoEndpointKey): string {
  return `${origin}/demo/${key}`;
}

/** A URL an earlier start's receiver had for a demo endpoint: loopback, any port. */
const EARLIER_RECEIVER = /^(https:\/\/127\.0\.0\.1:\d{1,5})\/demo\/([a-z]+)$/;
/** A receiver's origin, as `demo_receiver` holds it. */
const RECEIVER_ORIGIN = /^https:\/\/127\.0\.0\.1:\d{1,5}$/;

/**
 * The catalog endpoint that `url` is the demo's URL of: the catalog's own `.example` URL (a
 * demo seeded before the receiver existed, or by `demo seed`), or an earlier start's receiver
 * URL. Undefined for any other URL.
 */
function demoEndpointOf(url: string): (typeof DEMO_ENDPOINTS)[number] | undefined {
  const earlierKey = EARLIER_RECEIVER.exec(url)?.[2];
  return DEMO_ENDPOINTS.find((endpoint) => endpoint.url === url || endpoint.key === earlierKey);
}

/**
 * The origin `npm start`'s receiver had at the last start, which the next one listens on again
 * when it can: as `demo_receiver` remembers it, or, for a database last started before it was
 * remembered, the origin the demo's endpoints point at (the most recently moved one). Undefined
 * when no start ran a receiver on this database.
 */
export async function lastDemoReceiver(db: Queryable): Promise<string | undefined> {
  const remembered = await db('demo_receiver').first<{ origin: string } | undefined>('origin');
  if (remembered) return remembered.origin;
  const rows = await db('webhook_endpoints')
    .where('url', 'like', 'https://127.0.0.1:%/demo/%')
    .orderBy([
      { column: 'updated_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .pluck<string[]>('url');
  for (const url of rows) {
    const earlier = EARLIER_RECEIVER.exec(url);
    if (earlier && demoEndpointOf(url)) return earlier[1];
  }
  return undefined;
}

/**
 * Points the receiver's endpoints, in every workspace, at the receiver now at `origin`, and
 * remembers `origin` for the next start. Moved: every endpoint on the previous receiver's origin
 * (`lastDemoReceiver`), whatever its path (the demo's, and any a developer added there), to the
 * same path on `origin`; and every demo endpoint still at a catalog `.example` URL or at an
 * earlier receiver's `/demo/<key>`. An endpoint pointed anywhere else is left alone. On a start
 * that got the previous port again there is nothing to move, and nothing is written but the
 * memory. Each move is written to the security log as `webhook.updated` by `actor`, as any other
 * change of an endpoint's URL is; nothing else about the endpoint changes (its delivery log, its
 * secret, whether it is on), but for its attempts sent to the previous receiver, which move with
 * it. Returns how many endpoints were moved.
 */
export async function pointDemoEndpointsAt(db: Db, origin: string, actor: Actor): Promise<number> {
  if (!RECEIVER_ORIGIN.test(origin)) throw new Error(`not a demo receiver's origin: ${origin}`);
  return inTransaction(db, async (trx) => {
    // Two starts on one database at once take their turn here.
    await trx.raw("SELECT pg_advisory_xact_lock(hashtext('demo_receiver'))");
    const previous = await lastDemoReceiver(trx);
    const onPrevious = (url: string) => previous !== undefined && url.startsWith(`${previous}/`);
    const rows = await trx<{ id: string; workspace_id: string; name: string; url: string }>('webhook_endpoints')
      .where((where) => {
        where
          .whereIn(
            'url',
            DEMO_ENDPOINTS.map((endpoint) => endpoint.url),
          )
          .orWhere('url', 'like', 'https://127.0.0.1:%/demo/%');
        if (previous !== undefined) where.orWhere('url', 'like', `${previous}/%`);
      })
      .select('id', 'workspace_id', 'name', 'url')
      .forNoKeyUpdate();
    let changed = 0;
    for (const row of rows) {
      const url = movedUrl(row.url, origin, onPrevious(row.url));
      if (url === undefined || url === row.url) continue;
      await trx('webhook_endpoints').where({ id: row.id }).update({ url, updated_at: trx.fn.now() });
      // The previous receiver is this one on another port: the attempts it was sent (the demo's
      // history, replayed at seeding, and what a developer's own endpoint got) move with it, or
      // after the move every one would read "Sent to" a port nothing listens on. Attempts to the
      // catalog's addresses stay.
      if (onPrevious(row.url) || EARLIER_RECEIVER.test(row.url)) {
        await trx('webhook_attempts').where({ endpoint_id: row.id, url: row.url }).update({ url });
      }
      await recordSecurityEvent(trx, {
        workspace_id: row.workspace_id,
        action: 'webhook.updated',
        actor,
        target: endpointTarget(row),
        // The URL from and to, as any edit of an endpoint records it (updateEndpoint).
        details: endpointChangeDetails({ url: row.url }, { url }),
      });
      changed += 1;
    }
    await trx('demo_receiver')
      .insert({ only_row: true, origin, updated_at: trx.fn.now() })
      .onConflict('only_row')
      .merge(['origin', 'updated_at']);
    return changed;
  });
}

/**
 * Where an endpoint at `url` goes with the receiver at `origin`: the same path there when it is
 * on the previous receiver's origin, its receiver URL when it is a demo endpoint elsewhere;
 * undefined when it is neither, or when the moved URL would not be a valid one (longer than
 * allowed with a longer port: left where it is).
 */
function movedUrl(url: string, origin: string, onPrevious: boolean): string | undefined {
  const endpoint = onPrevious ? undefined : demoEndpointOf(url);
  if (!onPrevious && !endpoint) return undefined;
  const moved = onPrevious
    ? `${origin}${url.slice(url.indexOf('/', 'https://'.length))}`
    : demoReceiverUrl(origin, endpoint!.key);
  try {
    return validateWebhookUrl(moved);
  } catch {
    return undefined;
  }
}
