import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { freePort, TEST_REDIS_URL } from '@retention/testkit';
import { createRedis, waitForRedis, type Redis } from '../src/index.js';

/**
 * A TCP proxy in front of the run's real Redis that holds back Redis's answers on its first
 * `slowConnections` connections by `delayMs`: a Redis that answers, but slowly, as one on an
 * overloaded machine does.
 */
async function slowRedis(
  delayMs: number,
  slowConnections: number,
): Promise<{ url: string; connections: () => number; server: Server }> {
  const target = new URL(TEST_REDIS_URL);
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    connections += 1;
    const slow = connections <= slowConnections;
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!slow) client.write(chunk);
      else setTimeout(() => client.destroyed || client.write(chunk), delayMs).unref();
    });
  });
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    server,
  };
}

describe('waitForRedis', () => {
  const opened: Array<{ close(): void }> = [];
  const track = (redis: Redis) => {
    opened.push({ close: () => redis.disconnect() });
    return redis;
  };
  afterEach(() => {
    for (const resource of opened.splice(0)) resource.close();
  });

  it('waits through a ready check that ran past the command timeout, for the next connection’s ready', async () => {
    // The first connection's ready check (an INFO) is answered after 2.5 s, past the 2 s
    // commandTimeout of a command connection; ioredis then connects again.
    const proxy = await slowRedis(2_500, 1);
    opened.push({ close: () => proxy.server.close() });
    const redis = track(createRedis(proxy.url, 'command', 'slow-start'));
    await expect(waitForRedis(redis)).resolves.toBeUndefined();
    expect(proxy.connections()).toBeGreaterThanOrEqual(2);
    await expect(redis.ping()).resolves.toBe('PONG');
  });

  it('refuses, with the timeout, a Redis whose answers never come in time', async () => {
    const proxy = await slowRedis(60_000, Infinity);
    opened.push({ close: () => proxy.server.close() });
    const redis = track(createRedis(proxy.url, 'command', 'always-slow'));
    const started = Date.now();
    await expect(waitForRedis(redis, 3_000)).rejects.toThrow('Command timed out');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
  });

  it('still refuses at once a Redis that is not there', async () => {
    const redis = track(createRedis(`redis://127.0.0.1:${await freePort()}`, 'command', 'absent'));
    const started = Date.now();
    await expect(waitForRedis(redis)).rejects.toThrow(/ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
