import type { LookupAddress, LookupAllOptions, LookupOptions } from 'node:dns';
import { BlockList, isIP, isIPv4 } from 'node:net';
import type { ReceiverResolver } from './dns-resolver.js';

/**
 * SSRF protection for webhook requests: a receiver must be on the public internet. The check
 * runs on the addresses that DNS returns, inside the lookup the socket itself uses, so the
 * address checked is the address connected to (no time-of-check/time-of-use gap for DNS
 * rebinding to slip through). The worker also re-checks the socket's remote address.
 */

type RangeName =
  'loopback' | 'private' | 'link-local' | 'carrier-grade NAT' | 'multicast' | 'reserved' | 'cloud metadata';

function ranges(family: 'ipv4' | 'ipv6', subnets: Array<[string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family);
  return list;
}

/**
 * Cloud providers' instance metadata services outside the link-local ranges (AWS, GCP and Azure
 * answer on 169.254.169.254): Alibaba Cloud's, inside carrier-grade NAT, and AWS's over IPv6,
 * inside the unique local range. Named before those ranges, since they are refused even where
 * private networks are allowed (NEVER_ALLOWED).
 */
const CLOUD_METADATA_IPV4 = ranges('ipv4', [['100.100.100.200', 32]]);
const CLOUD_METADATA_IPV6 = ranges('ipv6', [['fd00:ec2::254', 128]]);

const IPV4_RANGES: Array<[RangeName, BlockList]> = [
  ['cloud metadata', CLOUD_METADATA_IPV4],
  ['loopback', ranges('ipv4', [['127.0.0.0', 8]])],
  [
    'private',
    ranges('ipv4', [
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
    ]),
  ],
  ['link-local', ranges('ipv4', [['169.254.0.0', 16]])],
  ['carrier-grade NAT', ranges('ipv4', [['100.64.0.0', 10]])],
  ['multicast', ranges('ipv4', [['224.0.0.0', 4]])],
  [
    'reserved',
    ranges('ipv4', [
      ['0.0.0.0', 8], // "this network"
      ['192.0.0.0', 24], // IETF protocol assignments
      ['192.0.2.0', 24], // documentation (TEST-NET-1)
      ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
      ['198.18.0.0', 15], // benchmarking
      ['198.51.100.0', 24], // documentation (TEST-NET-2)
      ['203.0.113.0', 24], // documentation (TEST-NET-3)
      ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
    ]),
  ],
];

/** Only 2000::/3 is global unicast; inside it, these blocks are not for public hosts. */
const IPV6_GLOBAL_UNICAST = ranges('ipv6', [['2000::', 3]]);
const IPV6_RESERVED_INSIDE_GLOBAL = ranges('ipv6', [
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (deprecated): the real destination is an embedded IPv4 address
  ['3fff::', 20], // documentation
]);
const IPV6_NAMED_RANGES: Array<[RangeName, BlockList]> = [
  ['cloud metadata', CLOUD_METADATA_IPV6],
  ['loopback', ranges('ipv6', [['::1', 128]])],
  [
    'private',
    ranges('ipv6', [
      ['fc00::', 7], // unique local
      ['fec0::', 10], // site-local (deprecated)
    ]),
  ],
  ['link-local', ranges('ipv6', [['fe80::', 10]])],
  ['multicast', ranges('ipv6', [['ff00::', 8]])],
];

/**
 * The range an address belongs to when it is not a public unicast address, or null when it
 * is public. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged
 * by the IPv4 address they carry. Anything that is not an IP address is refused.
 */
export function nonPublicRange(address: string): RangeName | null {
  const family = isIP(address);
  if (family === 4) {
    for (const [name, list] of IPV4_RANGES) if (list.check(address, 'ipv4')) return name;
    return null;
  }
  if (family !== 6) return 'reserved';
  const plain = address.split('%')[0]!;
  const bytes = ipv6Bytes(plain);
  if (!bytes) return 'reserved';
  const embedded = embeddedIpv4(bytes);
  if (embedded) return nonPublicRange(embedded);
  for (const [name, list] of IPV6_NAMED_RANGES) if (list.check(plain, 'ipv6')) return name;
  if (!IPV6_GLOBAL_UNICAST.check(plain, 'ipv6')) return 'reserved';
  if (IPV6_RESERVED_INSIDE_GLOBAL.check(plain, 'ipv6')) return 'reserved';
  return null;
}

/**
 * The ranges a receiver may never be at, even with WEBHOOK_ALLOW_PRIVATE_NETWORKS (a developer's
 * receiver on loopback or the office network): link-local, where the cloud metadata services
 * answer, and those services' other addresses. No webhook receiver runs there, and a machine that
 * runs `npm start` in a cloud would otherwise let an endpoint's owner read the machine's
 * credentials through the delivery log (the first 4 KB of an answer).
 */
const NEVER_ALLOWED: ReadonlySet<RangeName> = new Set(['link-local', 'cloud metadata']);

/** The range of an address a receiver may never be at (NEVER_ALLOWED), or null. */
export function neverAllowedRange(address: string): RangeName | null {
  const range = nonPublicRange(address);
  return range && NEVER_ALLOWED.has(range) ? range : null;
}

/**
 * The range that refuses `address` as a receiver's: any non-public one, or with private networks
 * allowed (development) only those never allowed.
 */
export function refusedRange(address: string, allowPrivateNetworks: boolean): RangeName | null {
  return allowPrivateNetworks ? neverAllowedRange(address) : nonPublicRange(address);
}

function embeddedIpv4(bytes: number[]): string | null {
  const startsWith = (prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
  const ipv4Mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
  const nat64 = [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];
  if (startsWith(ipv4Mapped) || startsWith(nat64)) return bytes.slice(12).join('.');
  return null;
}

/** The 16 bytes of a textual IPv6 address (without a zone index), or null when malformed. */
export function ipv6Bytes(text: string): number[] | null {
  let address = text.toLowerCase();
  const groups: number[] = [];
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  let tail: number[] = [];
  if (dotted) {
    if (!isIPv4(dotted[1]!)) return null;
    tail = dotted[1]!.split('.').map(Number);
    address = address.slice(0, -dotted[1]!.length);
    if (address.endsWith(':') && !address.endsWith('::')) address = address.slice(0, -1);
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const tailGroups = tail.length / 2;
  const missing = 8 - tailGroups - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  for (const group of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    groups.push(parseInt(group, 16));
  }
  const bytes = groups.flatMap((group) => [group >> 8, group & 0xff]);
  return [...bytes, ...tail];
}

/**
 * Raised instead of connecting to a non-public address. Its message goes to the endpoint's
 * owner (the delivery log, Send test), so for a host name it never says where the name
 * points: that would let an owner map the internal network by probing names. `address` and
 * `range` are for the server log only. A literal IP is named: the owner typed it.
 */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED';

  constructor(
    host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(
      host === address
        ? `refused: ${address} is a ${range} address; receivers must be on the public internet ` +
            ((NEVER_ALLOWED as ReadonlySet<string>).has(range)
              ? '(even with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: cloud metadata services answer there)'
              : '(WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lifts this for development)')
        : noPublicAddressMessage(host),
    );
    this.name = 'RefusedAddressError';
  }
}

/** DNS answers that say the name has no address at all (no such name, or no A/AAAA record). */
const NO_SUCH_NAME_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * What the endpoint's owner reads about a host name that has no public address: the same for
 * a name that does not exist and for one that points inside, so that probing names tells an
 * owner nothing about the internal network (docs/decisions.md, "SSRF"). It names both fixes:
 * a typo to check, or a receiver to move. The worker's log keeps which it was.
 */
function noPublicAddressMessage(host: string): string {
  return `refused: ${host} does not resolve to a public address; check the host name (receivers must be on the public internet)`;
}

/**
 * What the endpoint's owner reads when a host name did not resolve: as for a name that points
 * inside when DNS says there is no such name (see noPublicAddressMessage), and that it may work
 * later when its name servers gave no answer (which says nothing about internal names). The DNS
 * code itself goes to the worker's log (`dns_error`).
 */
export function unresolvedHostMessage(host: string, dnsCode: string): string {
  return NO_SUCH_NAME_CODES.has(dnsCode)
    ? noPublicAddressMessage(host)
    : `${host} could not be resolved: its name servers gave no answer; check the host name, or try again later`;
}

/** Throws RefusedAddressError when `address` may not be connected to (refusedRange). */
export function assertReceiverAddress(host: string, address: string, allowPrivateNetworks = false): void {
  const range = refusedRange(address, allowPrivateNetworks);
  if (range) throw new RefusedAddressError(host, address, range);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A drop-in for `dns.lookup` for the HTTPS agent, over the receivers' own resolver (never
 * getaddrinfo's thread pool, see dns-resolver.ts). Keeps the addresses a receiver may be at
 * (refusedRange: the public ones, or with `allowPrivateNetworks` all but those never allowed)
 * and fails with RefusedAddressError when none is left.
 */
export function receiverLookup(resolver: ReceiverResolver, allowPrivateNetworks: boolean) {
  return (hostname: string, options: LookupOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolver.resolve(hostname).then(
      (resolved) => {
        const family = typeof options.family === 'number' ? options.family : 0;
        const addresses = family === 4 || family === 6 ? resolved.filter((entry) => entry.family === family) : resolved;
        const allowed = addresses.filter((entry) => refusedRange(entry.address, allowPrivateNetworks) === null);
        if (allowed.length === 0) {
          const first = addresses[0];
          const refusal = first
            ? new RefusedAddressError(
                hostname,
                first.address,
                refusedRange(first.address, allowPrivateNetworks) ?? 'reserved',
              )
            : Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' });
          return callback(refusal, []);
        }
        if (options.all) return callback(null, allowed);
        callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
