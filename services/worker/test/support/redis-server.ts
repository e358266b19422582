import { spawn, type ChildProcess } from 'node:child_process';
import { Redis, type RedisOptions } from 'ioredis';
import { eventually, freePort } from '@retention/testkit';
import type { TestCertificate } from './certificate.js';

export interface PrivateRedisOptions {
  /** Serve TLS only (rediss://) with this certificate, which clients must trust. */
  tls?: TestCertificate;
  /** Require this password (requirepass). */
  password?: string;
}

/**
 * A redis-server of a test's own, for tests that flush or stop Redis: those must never
 * touch the Redis that other test files and engineers share. No persistence: a restart
 * comes back empty, like a Redis that lost its data.
 */
export class PrivateRedis {
  private server: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly options: PrivateRedisOptions,
  ) {}

  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), options);
    await redis.restart();
    return redis;
  }

  /** Its URL, with the password percent-encoded as REDIS_URL wants it. */
  get url(): string {
    const { tls, password } = this.options;
    const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`;
    return `${tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${this.port}`;
  }

  /** A connection of the test's own (the caller closes it), trusting the server's certificate. */
  connect(options: RedisOptions = {}): Redis {
    return new Redis(this.url, { ...(this.options.tls && { tls: { ca: this.options.tls.cert } }), ...options });
  }

  /** Starts the server (again, on the same port) and waits until it answers. */
  async restart(): Promise<void> {
    const { tls, password } = this.options;
    const listen = tls
      ? ['--port', '0', '--tls-port', String(this.port), '--tls-auth-clients', 'no']
      : ['--port', String(this.port)];
    this.server = spawn(
      'redis-server',
      [
        ...listen,
        ...(tls ? ['--tls-cert-file', tls.certPath, '--tls-key-file', tls.keyPath] : []),
        ...(password === undefined ? [] : ['--requirepass', password]),
        ...['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ],
      { stdio: 'ignore' },
    );
    await eventually(async () => {
      const probe = this.connect({ lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    });
  }

  /** Stops the server and waits until it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const server = this.server;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill(signal);
    await exited;
  }
}
