import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

/**
 * Name resolution for webhook receivers, apart from `dns.lookup`. `dns.lookup` runs
 * getaddrinfo on libuv's thread pool (4 threads) and cannot be cancelled: four receivers
 * whose name servers never answer held every thread, and every other receiver's new
 * connection waited behind them until its own timeout. c-ares (`dns.Resolver`) asks
 * asynchronously, with its own timeout and tries, so a silent name server costs only the
 * deliveries to its own names.
 *
 * Answers are cached for their TTL, kept between MIN_TTL_MS and MAX_TTL_MS (a 0-second TTL
 * would send a query per delivery; a week-long one would outlive a receiver's move);
 * failures for NEGATIVE_TTL_MS, so a queue of deliveries to a dead name asks once, not once
 * each. Concurrent look-ups of one name share one query. The hosts file is not read (c-ares
 * asks DNS only); `localhost` and `*.localhost` are loopback (RFC 6761), as getaddrinfo has them.
 */

export const DNS_QUERY_TIMEOUT_MS = 1_000;
/**
 * c-ares waits up to DNS_QUERY_TIMEOUT_MS for a try (less once it has measured a quick
 * server: five times its average answer, at least 250 ms), with jitter down to half, and
 * doubles the wait each try. With two tries a healthy name failed after as little as 1.5 s
 * of silence, one pause of its server or of this process, and its failure was remembered
 * for NEGATIVE_TTL_MS. Four tries keep asking until the deadline cuts in, at eight questions
 * per look-up of a silent name.
 */
export const DNS_TRIES = 4;
/**
 * A look-up never takes longer than this, whatever c-ares's back-off: it fits the attempt's
 * lease margin, with the wait of a spare (services/worker/src/worker.ts, LEASE_MARGIN_MS).
 */
export const DNS_DEADLINE_MS = 3_000;
const MIN_TTL_MS = 5_000;
const MAX_TTL_MS = 300_000;
const NEGATIVE_TTL_MS = 5_000;
const MAX_CACHED_NAMES = 10_000;

export interface ReceiverResolverOptions {
  /** Name servers (`1.1.1.1`, `10.0.0.2:5353`, `[::1]:53`); the system's (resolv.conf) when absent. */
  servers?: string[] | undefined;
  queryTimeoutMs?: number;
  tries?: number;
  deadlineMs?: number;
}

type Answer = { addresses: LookupAddress[]; expiresAt: number } | { error: NodeJS.ErrnoException; expiresAt: number };

export interface ReceiverResolver {
  /** Every address of a host name (IPv4 first), or an error whose `code` says why not. */
  resolve(hostname: string): Promise<LookupAddress[]>;
  /** Queries sent to name servers so far (for tests and the measurement). */
  readonly queries: number;
}

export function createReceiverResolver(options: ReceiverResolverOptions = {}): ReceiverResolver {
  const resolver = new Resolver({
    timeout: options.queryTimeoutMs ?? DNS_QUERY_TIMEOUT_MS,
    tries: options.tries ?? DNS_TRIES,
  });
  if (options.servers && options.servers.length > 0) resolver.setServers(options.servers);
  const deadlineMs = options.deadlineMs ?? DNS_DEADLINE_MS;
  const cache = new Map<string, Answer>();
  const pending = new Map<string, Promise<Answer>>();
  let queries = 0;

  async function ask(hostname: string): Promise<Answer> {
    queries += 2;
    const [v4, v6] = await Promise.allSettled([
      resolver.resolve4(hostname, { ttl: true }),
      resolver.resolve6(hostname, { ttl: true }),
    ]);
    const records = [
      ...(v4.status === 'fulfilled' ? v4.value.map((record) => ({ ...record, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((record) => ({ ...record, family: 6 })) : []),
    ];
    const now = Date.now();
    if (records.length > 0) {
      const ttlMs = Math.min(...records.map((record) => record.ttl * 1000));
      return {
        addresses: records.map(({ address, family }) => ({ address, family })),
        expiresAt: now + Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, ttlMs)),
      };
    }
    const errors = [v4, v6].map((result) =>
      result.status === 'rejected' ? (result.reason as NodeJS.ErrnoException) : null,
    );
    // A name with no address of either family reads as not found, like getaddrinfo's answer.
    const error =
      errors.find((candidate) => candidate && candidate.code !== 'ENODATA' && candidate.code !== 'ENOTFOUND') ??
      dnsError('ENOTFOUND', hostname);
    return { error: dnsError(error.code ?? 'ENOTFOUND', hostname), expiresAt: now + NEGATIVE_TTL_MS };
  }

  function withDeadline(hostname: string, answer: Promise<Answer>): Promise<Answer> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<Answer>((resolve) => {
      timer = setTimeout(
        () => resolve({ error: dnsError('ETIMEOUT', hostname), expiresAt: Date.now() + NEGATIVE_TTL_MS }),
        deadlineMs,
      );
    });
    return Promise.race([answer, deadline]).finally(() => clearTimeout(timer));
  }

  function remember(hostname: string, answer: Answer): void {
    if (cache.size >= MAX_CACHED_NAMES) {
      const now = Date.now();
      for (const [name, cached] of cache) if (cached.expiresAt <= now) cache.delete(name);
      // Still full of live answers: drop the oldest (a Map iterates in insertion order).
      if (cache.size >= MAX_CACHED_NAMES) cache.delete(cache.keys().next().value!);
    }
    cache.set(hostname, answer);
  }

  async function answerFor(hostname: string): Promise<Answer> {
    const cached = cache.get(hostname);
    if (cached && cached.expiresAt > Date.now()) return cached;
    let inFlight = pending.get(hostname);
    if (!inFlight) {
      inFlight = withDeadline(hostname, ask(hostname))
        .then((answer) => {
          remember(hostname, answer);
          return answer;
        })
        .finally(() => pending.delete(hostname));
      pending.set(hostname, inFlight);
    }
    return inFlight;
  }

  return {
    async resolve(rawHostname) {
      const hostname = rawHostname.toLowerCase().replace(/\.$/, '');
      const family = isIP(hostname);
      if (family) return [{ address: hostname, family }];
      if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
        return [
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ];
      }
      const answer = await answerFor(hostname);
      if ('error' in answer) throw answer.error;
      return answer.addresses;
    },
    get queries() {
      return queries;
    },
  };
}

function dnsError(code: string, hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`DNS lookup of ${hostname} failed (${code})`), { code, hostname });
}
