import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { ApiMetrics } from '../metrics.js';
import { onResponseDone } from './response-done.js';

/** nginx's status for a request whose client left before the response was complete. */
const CLIENT_CLOSED_REQUEST = '499';

/**
 * Counts every request and its latency by route pattern and status. The label is the
 * pattern of the route (never the raw path, whose ids would make a series each), worked out
 * before authentication, so a 401 or 429 is counted on the route it was meant for.
 */
export function requestMetrics(metrics: ApiMetrics, routeOf: (path: string) => string): RequestHandler {
  return (req, res, next) => {
    countWhenDone(metrics, req.method, routeOf(req.path), res);
    next();
  };
}

/**
 * The counting itself, from now to the end of `res`; shared with the Stripe receiver served
 * before Express (processor/stripe-before-express.ts), which knows its route without matching.
 */
export function countWhenDone(metrics: ApiMetrics, method: string, route: string, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  onResponseDone(res, (completed) => {
    const labels = { method, route, status: completed ? String(res.statusCode) : CLIENT_CLOSED_REQUEST };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  });
}
