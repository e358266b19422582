import { createSocket, type Socket } from 'node:dgram';

/**
 * A real name server on UDP for tests: answers A queries for the names it knows, answers
 * NXDOMAIN for names it does not, and never answers names marked silent (a tenant's name
 * servers that never respond). Speaks just enough of RFC 1035 for c-ares.
 */
export class DnsServer {
  /** Queries received, by lowercased name. */
  readonly queries = new Map<string, number>();
  private readonly records = new Map<string, { address: string; ttl: number }>();
  private readonly silent = new Set<string>();
  private readonly delays = new Map<string, number>();
  /** Questions still to drop, by `name type` (a name server that misses a few). */
  private readonly drops = new Map<string, number>();
  private socket!: Socket;
  port = 0;

  static async start(): Promise<DnsServer> {
    const server = new DnsServer();
    server.socket = createSocket('udp4');
    server.socket.on('message', (message, remote) => server.answer(message, remote.port, remote.address));
    await new Promise<void>((resolve) => server.socket.bind(0, '127.0.0.1', resolve));
    server.port = server.socket.address().port;
    return server;
  }

  /** The value for WEBHOOK_DNS_SERVERS. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  addA(name: string, address: string, ttl = 60, delayMs = 0): void {
    this.records.set(name.toLowerCase(), { address, ttl });
    if (delayMs > 0) this.delays.set(name.toLowerCase(), delayMs);
  }

  /** Drops the first `count` questions of each type for a name, then answers as usual. */
  dropFirst(name: string, count: number): void {
    for (const type of [1, 28]) this.drops.set(`${name.toLowerCase()} ${type}`, count);
  }

  neverAnswer(name: string): void {
    this.silent.add(name.toLowerCase());
  }

  queriesFor(name: string): number {
    return this.queries.get(name.toLowerCase()) ?? 0;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  private answer(query: Buffer, port: number, address: string): void {
    const labels: string[] = [];
    let offset = 12;
    while (query[offset]! > 0) {
      const length = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    this.queries.set(name, (this.queries.get(name) ?? 0) + 1);
    if (this.silent.has(name)) return;
    const toDrop = this.drops.get(`${name} ${type}`) ?? 0;
    if (toDrop > 0) {
      this.drops.set(`${name} ${type}`, toDrop - 1);
      return;
    }
    const record = this.records.get(name);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    // QR, opcode 0, AA, RD copied; RA; RCODE 3 (NXDOMAIN) for unknown names.
    header.writeUInt16BE(0x8580 | ((query[2]! & 0x01) << 8) | (record ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    const answers: Buffer[] = [];
    if (record && type === 1) {
      const answer = Buffer.alloc(16);
      answer.writeUInt16BE(0xc00c, 0);
      answer.writeUInt16BE(1, 2);
      answer.writeUInt16BE(1, 4);
      answer.writeUInt32BE(record.ttl, 6);
      answer.writeUInt16BE(4, 10);
      record.address.split('.').forEach((octet, index) => answer.writeUInt8(Number(octet), 12 + index));
      answers.push(answer);
    }
    header.writeUInt16BE(answers.length, 6);
    const reply = Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
    const delayMs = this.delays.get(name) ?? 0;
    if (delayMs > 0) setTimeout(() => this.socket.send(reply, port, address), delayMs);
    else this.socket.send(reply, port, address);
  }
}
