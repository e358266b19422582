import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * The client's address: Express's `req.ip` (the X-Forwarded-For hop that TRUST_PROXY makes it
 * believe) when it is an IP address, else the address the request came from. A client that
 * reaches the API around its proxy writes X-Forwarded-For itself; whatever it wrote there must
 * not become a session's recorded address (an `inet` column, which refused it with a 500) or a
 * key of the per-address limits.
 */
export function clientIp(req: Request): string | undefined {
  const believed = req.ip;
  if (believed !== undefined && isIP(believed)) return believed;
  return req.socket.remoteAddress;
}
