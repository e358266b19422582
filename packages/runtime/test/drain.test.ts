import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { drainable } from '../src/index.js';

function get(
  port: number,
  agent: Agent,
  path: string,
): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    request({ port, host: '127.0.0.1', path, agent }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode!, connection: response.headers.connection, body }),
      );
    })
      .on('error', reject)
      .end();
  });
}

describe('drainable', () => {
  it('finishes the request in flight, says Connection: close, and closes kept-alive connections at once', async () => {
    let release: () => void = () => undefined;
    const server: Server = createServer((req, res) => {
      if (req.url === '/slow') release = () => res.end('slow done');
      else res.end('quick');
    });
    const connections = drainable(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      expect((await get(port, agent, '/quick')).connection).toBe('keep-alive');
      const slow = get(port, agent, '/slow');
      await new Promise((resolve) => setTimeout(resolve, 50));

      const started = Date.now();
      const drained = connections.drain();
      await expect(get(port, new Agent(), '/quick')).rejects.toThrow();
      release();
      expect(await slow).toEqual({ status: 200, connection: 'close', body: 'slow done' });
      await drained;
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      agent.destroy();
    }
  });
});
