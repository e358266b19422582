import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '@retention/runtime';
import type { Caller } from './authenticate.js';
import { onResponseDone } from './response-done.js';

/** Longer paths are cut in the log: a client must not be able to write megabytes into it. */
const LOGGED_PATH_LENGTH = 200;

/**
 * A one-time link's token is a password for an hour or a week: masked in the logged path.
 * Case-insensitive, as Express's routing is: /dashboard/API/invitations/… is served too. Matched
 * wherever the segment stands, slashes doubled or not, with a `;…` after its name or not: a link
 * pasted into a wrong address (`//api/invitations/…`, `/dashboard//invite/…`) carries the same
 * token, served or not. Not Team's invitations (`/team/invitations/:id`): their ids are no
 * secret, and name what was done.
 */
const ONE_TIME_LINK_PATH = /((?<!\/team)\/(?:invitations|password-reset|invite|reset)(?:;[^/]*)?\/+)[^/]+/gi;

/**
 * `path` masked again as it reads unescaped (runs of percent-escapes decoded where they are valid
 * UTF-8), when that finds a token the escaped form hid; else `path` as it was.
 */
function unescapedMasked(path: string): string {
  const unescaped = path.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  const masked = unescaped.replace(ONE_TIME_LINK_PATH, '$1[redacted]');
  return masked === unescaped ? path : masked;
}

/**
 * A request's path as logged: no query string (it may hold email addresses), no link token, cut
 * short. A link re-escaped on its way (`/dashboard/%69nvite/…`, `invite%2F…`) is masked too: it is
 * looked for in the path as it reads unescaped, which is then what is logged.
 */
export function loggablePath(url: string): string {
  const raw = url.split('?', 1)[0] ?? '';
  const masked = raw.replace(ONE_TIME_LINK_PATH, '$1[redacted]');
  // Only a path with an escape reads otherwise unescaped: the rest (most requests) pass once.
  const path = masked.includes('%') ? unescapedMasked(masked) : masked;
  return path.length > LOGGED_PATH_LENGTH ? `${path.slice(0, LOGGED_PATH_LENGTH)}…` : path;
}

/**
 * One log line per request, written when the response is over, carrying the Request-Id.
 * The path is logged without its query string (it may hold customer email addresses), and
 * no header is logged at all. A client that leaves before its response is complete is
 * logged too, marked `aborted`. Probes (`quietPaths`: health checks and metric scrapes, every
 * few seconds) are logged at debug level unless they fail.
 */
export function requestLog(logger: Logger, quietPaths: readonly string[] = []): RequestHandler {
  const logWhenDone = requestLogger(logger, quietPaths);
  return (req, res, next) => {
    // originalUrl: routers rewrite req.url (and so req.path) while the request is inside them.
    logWhenDone(
      { requestId: res.locals.requestId as string, method: req.method, url: req.originalUrl },
      res,
      () => res.locals.caller as Caller | undefined,
    );
    next();
  };
}

/**
 * The log line itself, from now to the end of `res`; shared with the Stripe receiver served
 * before Express (processor/stripe-before-express.ts). `url` is the request's URL as received.
 */
export function requestLogger(
  logger: Logger,
  quietPaths: readonly string[] = [],
): (
  request: { requestId: string; method: string; url: string },
  res: ServerResponse,
  callerOf?: () => Caller | undefined,
) => void {
  const quiet = new Set(quietPaths);
  return ({ requestId, method, url }, res, callerOf) => {
    const started = process.hrtime.bigint();
    const path = loggablePath(url);
    onResponseDone(res, (completed) => {
      const caller = callerOf?.();
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        requestId,
        method,
        path,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 10) / 10,
        ...(!completed && { aborted: true }),
        ...(caller && { workspaceId: caller.workspaceId, tokenId: caller.tokenId }),
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else if (!completed) logger.warn(line, 'request aborted by the client');
      else if (quiet.has(path) && res.statusCode < 400) logger.debug(line, 'request');
      else logger.info(line, 'request');
    });
  };
}
