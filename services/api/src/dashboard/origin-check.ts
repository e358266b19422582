import type { RequestHandler } from 'express';
import { forbidden } from '@retention/core';

/**
 * Cross-site request forgery: every request that may change something must carry the
 * dashboard's own Origin (what browsers send on fetch). A missing Origin is refused too:
 * the dashboard always sends one, and a forged form post from an old browser might not.
 */
export function originCheck(baseUrl: string): RequestHandler {
  const expected = new URL(baseUrl).origin;
  return (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    if (req.headers.origin !== expected) return next(forbidden('cross-site request refused'));
    next();
  };
}
