import pg from 'pg';
import { OUTBOX_CHANNEL } from '@retention/domain';
import { type Logger, type ThrottledFailures } from '@retention/runtime';
import { postgresFailures } from '../postgres-failures.js';

/**
 * LISTENs on the outbox channel on a connection of its own and calls `onEvent` for every
 * committed event, so dispatch starts within milliseconds. If the connection drops it
 * reconnects with back-off; meanwhile the dispatcher's poll keeps events flowing.
 */
export class OutboxListener {
  private client: pg.Client | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** Failed connects in a row, for the back-off. */
  private attempts = 0;
  private closed = false;
  private readonly failures: ThrottledFailures;
  /** The throttle's source: which channel, since the processor's inbox has a listener too. */
  private readonly source: string;

  constructor(
    private readonly databaseUrl: string,
    /** `payload`: the NOTIFY's payload ('' when the sender gave none; undefined after a reconnect). */
    private readonly onEvent: (payload?: string) => void,
    logger: Logger,
    /** The processor's inbox uses the same machinery on its own channel. */
    private readonly channel: string = OUTBOX_CHANNEL,
  ) {
    this.failures = postgresFailures(logger);
    this.source = `LISTEN ${channel}`;
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'retention-worker-listen' });
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.onEvent(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      this.client = client;
      this.failures.succeeded(this.source);
      this.attempts = 0;
      // Events committed while not listening are picked up now rather than at the next poll.
      this.onEvent();
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client === client) this.client = null;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (this.closed || this.reconnectTimer) return;
    this.attempts += 1;
    const delay = Math.min(10_000, 500 * 2 ** Math.min(this.attempts, 5));
    this.failures.failed(this.source, error, 'outbox LISTEN connection lost; polling until it is back', {
      retry_in_ms: delay,
    });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, delay);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
