import { isIPv6 } from 'node:net';

/**
 * The bucket for a client address: IPv4 as is, IPv6 by its /64 (one subscriber usually holds a
 * whole /64, so limiting single addresses would limit nothing).
 */
export function addressBucket(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...(Array(8 - left.length - right.length).fill('0') as string[]), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
