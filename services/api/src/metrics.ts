import { match } from 'path-to-regexp';
import { Counter, createMetricsRegistry, Histogram, LATENCY_BUCKETS_SECONDS, type Registry } from '@retention/runtime';

/** The route label of a request that matched no route: raw paths never become labels. */
const UNMATCHED_ROUTE = 'unmatched';

export interface ApiMetrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route' | 'status'>;
  rateLimitRejections: Counter<'reason'>;
  rateLimitUnavailable: Counter;
}

export function createApiMetrics(registry: Registry = createMetricsRegistry('api')): ApiMetrics {
  return {
    registry,
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its response, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers: [registry],
    }),
    rateLimitRejections: new Counter({
      name: 'api_rate_limit_rejections_total',
      help: 'Requests refused with 429: reason "token" (the token used its limit) or "failed_auth" (the client address failed authentication too often)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    rateLimitUnavailable: new Counter({
      name: 'api_rate_limit_unavailable_total',
      help: 'Requests served without a rate-limit decision because Redis could not be reached (the limit fails open)',
      registers: [registry],
    }),
  };
}

/** Route patterns, and how the router that serves them matches a path. */
export interface RoutePatterns {
  patterns: readonly string[];
  /**
   * Case-sensitive and without an optional trailing slash, as apiRouter matches /api/v1: there
   * `/api/v1/Campaigns` is a 404, not the campaigns route. Otherwise Express's defaults.
   */
  strict?: boolean;
}

/**
 * Maps a request path to the pattern of the route that serves it (`/api/v1/customers/:id`),
 * matching as the router serving each group does, but without decoding, so a malformed path
 * still gets a label. Anything else is UNMATCHED_ROUTE. Groups are tried in order.
 */
export function routeLabeler(groups: readonly RoutePatterns[]): (path: string) => string {
  const matchers = groups.flatMap(({ patterns, strict = false }) =>
    patterns.map((pattern) => ({
      pattern,
      matches: match(pattern, { decode: false, sensitive: strict, trailing: !strict }),
    })),
  );
  return (path) => matchers.find(({ matches }) => matches(path) !== false)?.pattern ?? UNMATCHED_ROUTE;
}
