/**
 * Issue 17 #7: how long slowloris connections hold the API, and whether it still serves.
 * `npx tsx bench/slow-clients.ts [connections]`: the API's own server (createApiServer)
 * with the configured limits, beside Node's defaults (what it ran before), each in this
 * process over a trivial app; every slow client sends a header line each second.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { loadConfig } from '@retention/core';
import { createLogger } from '@retention/runtime';
import { createApiServer } from '../services/api/src/server.js';

const connections = Number(process.argv[2] ?? 300);
const observeMs = 75_000;

async function measure(name: string, server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const started = Date.now();
  const closedAfter: number[] = [];
  let refused = 0;
  const timers: NodeJS.Timeout[] = [];
  for (let index = 0; index < connections; index += 1) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('connect', () => socket.write('GET /x HTTP/1.1\r\nHost: a\r\n'));
    socket.on('close', () => {
      const after = Date.now() - started;
      if (after < 200) refused += 1;
      else closedAfter.push(after);
    });
    const timer = setInterval(() => socket.writable && socket.write(`X-${index}: a\r\n`), 1_000);
    timers.push(timer);
    socket.on('close', () => clearInterval(timer));
  }
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const probeStart = Date.now();
  const probe = await fetch(`http://127.0.0.1:${port}/x`).then(
    (response) => `${response.status} in ${Date.now() - probeStart} ms`,
    (error: Error) => `failed (${error.message})`,
  );
  while (closedAfter.length + refused < connections && Date.now() - started < observeMs) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  timers.forEach(clearInterval);
  server.closeAllConnections();
  server.close();
  const sorted = [...closedAfter].sort((a, b) => a - b);
  const held = sorted.length ? `${sorted[0]}–${sorted.at(-1)} ms` : 'none closed';
  const open = connections - closedAfter.length - refused;
  console.log(
    `${name}: ${connections} slow clients; closed by the server after ${held}; refused on arrival ${refused}; ` +
      `still open after ${observeMs / 1000} s: ${open}; a normal request meanwhile: ${probe}`,
  );
}

const app = express();
app.get('/x', (_request, response) => response.json({ ok: true }));
const config = loadConfig({ API_MAX_CONNECTIONS: process.env.API_MAX_CONNECTIONS ?? '2000' });
await measure(
  'configured (10 s headers, 30 s request, cap)',
  createApiServer(app, createLogger('api', 'silent'), config),
);
await measure("Node's defaults (before)", createServer(app));
