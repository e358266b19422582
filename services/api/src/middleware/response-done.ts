import type { Response } from 'express';

/**
 * Runs `done` once when the response is over: sent in full (`completed`), or cut short
 * because the client went away first. Either way the request is accounted for once.
 */
export function onResponseDone(res: Response, done: (completed: boolean) => void): void {
  res.once('close', () => done(res.writableFinished));
}
