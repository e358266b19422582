import express, { type Router } from 'express';
import { errorBody, invalidParam, isUuid, type Config } from '@retention/core';
import type { Db } from '@retention/db';
import {
  storeProcessorEvent,
  storeProcessorEvents,
  type ConnectionRow,
  type IncomingProcessorEvent,
} from '@retention/domain';
import { StripeSignatureRefused, verifyStripeEvent } from '@retention/processors';
import { Batcher } from '@retention/runtime';
import { ConnectionCache } from './connection-cache.js';
import type { RefusalCounter } from './refusal-counter.js';

/**
 * `POST /processor/stripe/:connection_id`: Stripe's events in (docs/processor.md). The
 * signature is verified over the raw bytes before anything is parsed or stored; an accepted
 * event is stored once and answered at once, and the worker applies it. It is the one non-GET
 * route outside the dashboard, and it carries no bearer token (the signature and the
 * unguessable connection id are its credentials).
 *
 * Two doors, one receiver: the API's node:http server serves a plain POST to this path before
 * Express (stripe-before-express.ts: Express's per-request work was a fifth of the cost of an
 * accepted event, docs/performance.md); the Express route below takes what that door leaves
 * (a compressed or percent-encoded request, an app served without createApiServer) and answers
 * it the same way, through the same receiver.
 */

export const STRIPE_WEBHOOK_ROUTE = '/processor/stripe/:connection_id';

/** Stripe's events are well under this; a larger body is refused before it is buffered whole. */
export const MAX_EVENT_BYTES = 1024 * 1024;

/**
 * The answers that are not an event's verdict, the same from both doors. Too large is 413
 * `payload_too_large`, the type the rest of the service gives a 413 (the dashboard's JSON bodies).
 */
export const tooLargeBody = () => errorBody('payload_too_large', `The body is larger than ${MAX_EVENT_BYTES} bytes.`);
export const unreadableBody = () => errorBody('invalid_param', 'The body could not be read.');

const utf8 = new TextDecoder('utf8');

export interface StripeReceiver {
  /**
   * Verifies and stores one event sent to `connectionId` (the path's segment, decoded):
   * `duplicate` for a redelivery. Refusals throw a ServiceError (400 `invalid_param`).
   */
  receive(
    connectionId: string,
    body: Buffer,
    signature: string | undefined,
  ): Promise<{ received: true; duplicate: boolean }>;
}

export function stripeReceiver({
  config,
  db,
  refusals,
}: {
  config: Config;
  db: Db;
  refusals: RefusalCounter;
}): StripeReceiver {
  // Requests arriving together share one INSERT and one commit (a burst from Stripe is many
  // small events); each still answers only once its own row is committed. One batch in
  // flight: the events that arrive while it commits go together in the next, the way a
  // database groups commits. Measured against four in flight (docs/performance.md): batches
  // four times larger, a third less CPU per event in Postgres and a fifth less in the API,
  // and as many or more events accepted a second.
  const store = new Batcher<{ connection: ConnectionRow; event: IncomingProcessorEvent }, boolean>(
    (items) => storeProcessorEvents(db, items),
    // One event Postgres refuses must not fail the others of its batch.
    { maxSize: 200, maxRunning: 1, isolateFailures: true },
  );
  const connections = ConnectionCache.forStripe(db, config);
  return {
    async receive(connectionId, body, signature) {
      const found = isUuid(connectionId) ? await connections.get(connectionId.toLowerCase()) : null;
      // One answer for an unknown id and for a disconnected connection: neither is an endpoint to probe.
      if (!found || (found.connection.status === 'disconnected' && found.connection.disconnected_reason === 'owner')) {
        throw invalidParam('No connected processor has this webhook URL.');
      }
      const event = await verifiedOrCounted(refusals, found.connection, body, signature, found.webhookSecret);
      const incoming: IncomingProcessorEvent = {
        psp_event_id: event.id,
        type: event.type,
        created: new Date(event.created * 1000),
        payload: event as unknown as Record<string, unknown>,
        // The text constructEvent parsed, decoded as it decodes it (a leading BOM dropped).
        payload_text: utf8.decode(body),
      };
      const stored =
        found.connection.status === 'pending'
          ? (await storeProcessorEvent(db, found.connection, incoming)).stored
          : await store.submit({ connection: found.connection, event: incoming });
      return { received: true, duplicate: !stored };
    },
  };
}

/**
 * The event, verified; a delivery refused for its signature is counted on its connection (a
 * count and its times only: the body and the signature are never stored nor logged), so the
 * Processor page can say that the signing secret is wrong (docs/processor.md, "Refused
 * deliveries"). Counted best effort, after the answer: the 400 never waits for the count.
 */
async function verifiedOrCounted(
  refusals: RefusalCounter,
  connection: ConnectionRow,
  body: Buffer,
  signature: string | undefined,
  secret: string,
) {
  try {
    return await verifyStripeEvent(body, signature, secret);
  } catch (error) {
    if (error instanceof StripeSignatureRefused) refusals.count(connection.id);
    throw error;
  }
}

export function stripeWebhookRoutes(receiver: StripeReceiver): Router {
  const router = express.Router();
  const rawBody = express.raw({ type: () => true, limit: MAX_EVENT_BYTES });

  router.post(
    STRIPE_WEBHOOK_ROUTE,
    (req, res, next) => {
      res.setHeader('Cache-Control', 'no-store');
      rawBody(req, res, (error?: unknown) => {
        if (!error) return next();
        const status = (error as { status?: number }).status;
        if (status === 413) {
          res.setHeader('Connection', 'close');
          res.status(413).json(tooLargeBody());
          return;
        }
        res.status(400).json(unreadableBody());
      });
    },
    async (req, res) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      res.status(200).json(await receiver.receive(req.params.connection_id, body, req.get('stripe-signature')));
    },
  );
  // Any other method: the API's JSON 404 (its contract has no 405, docs/decisions.md), saying
  // what this URL takes. Without it, Express would answer OPTIONS itself in plain text, and a
  // GET would be told that every endpoint is a GET under /api/v1.
  router.all(STRIPE_WEBHOOK_ROUTE, (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res
      .status(404)
      .json(
        errorBody(
          'not_found',
          `Unrecognized request URL (${req.method} ${req.path}). This URL takes only the events Stripe POSTs to it.`,
        ),
      );
  });
  return router;
}
