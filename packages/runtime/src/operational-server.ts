import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { checkReadiness, LIVENESS_BODY, type ReadinessCheck } from './health.js';
import { renderMetrics, type Registry } from './metrics.js';

export interface OperationalEndpoints {
  /** The backing services `/readyz` checks, by name (postgres, redis). */
  readiness: Record<string, ReadinessCheck>;
  registry: Registry;
}

/**
 * `/healthz`, `/readyz` and `/metrics` for a process that has no HTTP API of its own (the
 * worker, on WORKER_PORT). The API serves the same three from its Express app.
 * Like the API's, these are unauthenticated: they are meant for the internal network only.
 */
export function createOperationalServer(endpoints: OperationalEndpoints): Server {
  return createServer((req, res) => {
    handle(endpoints, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'application/json', JSON.stringify({ status: 'error' }));
      else res.destroy();
    });
  });
}

async function handle(endpoints: OperationalEndpoints, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, 405, 'application/json', JSON.stringify({ error: 'method not allowed' }), { Allow: 'GET, HEAD' });
  }
  if (path === '/healthz') return send(res, 200, 'application/json', JSON.stringify(LIVENESS_BODY));
  if (path === '/readyz') {
    const report = await checkReadiness(endpoints.readiness);
    return send(res, report.status === 'ready' ? 200 : 503, 'application/json', JSON.stringify(report));
  }
  if (path === '/metrics') {
    const page = await renderMetrics(endpoints.registry);
    return send(res, 200, page.contentType, page.body);
  }
  send(res, 404, 'application/json', JSON.stringify({ error: 'not found: /healthz, /readyz and /metrics live here' }));
}

function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': contentType.includes('charset') ? contentType : `${contentType}; charset=utf-8`,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
