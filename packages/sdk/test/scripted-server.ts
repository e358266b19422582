import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from '@jest/globals';

interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
}

type Script = (req: IncomingMessage, res: ServerResponse, index: number) => void;

const open: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

/**
 * A real HTTP server that answers the way something between a client and the API can
 * (a proxy's HTML page, a redirect, a reset, silence), which the API itself never does.
 * Closed after each test.
 */
export async function scriptedServer(script: Script): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    script(req, res, requests.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** A JSON answer as the API writes it, with the header that marks the API's answers. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'retention-api-version': '1',
    ...headers,
  });
  res.end(JSON.stringify(body));
}
