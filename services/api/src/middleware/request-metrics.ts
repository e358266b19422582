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
    const started = process.hrtime.bigint();
    const route = routeOf(req.path);
    onResponseDone(res, (completed) => {
      const labels = { method: req.method, route, status: completed ? String(res.statusCode) : CLIENT_CLOSED_REQUEST };
      metrics.requests.inc(labels);
      metrics.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
