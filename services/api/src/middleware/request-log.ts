import type { RequestHandler } from 'express';
import type { Logger } from '@retention/runtime';
import type { Caller } from './authenticate.js';

/**
 * One log line per request, written when the response finishes, carrying the Request-Id.
 * The path is logged without its query string (it may hold customer e-mail addresses), and
 * no header is logged at all.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const caller = res.locals.caller as Caller | undefined;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        requestId: res.locals.requestId as string,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 10) / 10,
        ...(caller && { workspaceId: caller.workspaceId, tokenId: caller.tokenId }),
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    });
    next();
  };
}
