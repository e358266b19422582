import { isIP } from 'node:net';
import express, { type Express, type Request } from 'express';

/**
 * Makes `req.ip`, for every request of `app`, the believed address when it is an IP address,
 * else the address the request came from. A client that reaches the API around its proxy writes
 * X-Forwarded-For itself; whatever it wrote there must not become a session's recorded address
 * (an `inet` column, which refused it with a 500) or a key of the per-address limits. Set once
 * beside `trust proxy` (on `app.request`, the prototype of the app's requests) so that no route
 * can read the unchecked one.
 */
export function checkClientIp(app: Express): void {
  Object.defineProperty(app.request, 'ip', {
    configurable: true,
    enumerable: true,
    get(this: Request): string | undefined {
      // Express's own getter: the X-Forwarded-For hop that `trust proxy` makes it believe.
      const believed: unknown = Reflect.get(express.request, 'ip', this);
      return typeof believed === 'string' && isIP(believed) ? believed : this.socket.remoteAddress;
    },
  });
}
