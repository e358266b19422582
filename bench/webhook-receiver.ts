/**
 * The receiver of `npm run bench:webhooks`, a process of its own so that its CPU is not the
 * worker's: HTTPS with the benchmark's certificate, 200 at once for every path except
 * `/hang...`, which answers only when the parent says so (by dropping the connection). It reports each arrival (event id and time) to the parent
 * over IPC, in batches.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const arrivals: Array<[string, string, number]> = [];
const hanging = new Set<ServerResponse>();
const server = createServer(
  { key: readFileSync(process.env.KEY_PATH!), cert: readFileSync(process.env.CERT_PATH!) },
  (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const path = request.url ?? '';
      if (path.startsWith('/hang')) {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: Record<string, string> };
      arrivals.push([path, data.reactivation_id ?? data.reminder_id ?? '', at]);
      response.writeHead(200).end();
    });
  },
);
server.keepAliveTimeout = 60_000;

setInterval(() => {
  if (arrivals.length > 0) process.send!({ arrivals: arrivals.splice(0) });
}, 20).unref();

server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
// The parent asks for this before stopping a worker: its hanging attempts end at once.
process.on('message', (message: { releaseHanging?: boolean }) => {
  if (message.releaseHanging) for (const response of hanging) response.socket?.destroy();
});
