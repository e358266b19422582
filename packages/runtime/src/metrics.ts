import { collectDefaultMetrics, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics. Each process (and each app a test builds) gets a registry of its own
 * rather than prom-client's global one, so two registries never fight over a metric name.
 * Every series carries `service` (api, worker), so one Prometheus job can scrape both.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Latency buckets in seconds, from a cached read (5 ms) to a statement near its timeout. */
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface MetricsPage {
  contentType: string;
  body: string;
}

/** The Prometheus text exposition of everything in the registry. */
export async function renderMetrics(registry: Registry): Promise<MetricsPage> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
