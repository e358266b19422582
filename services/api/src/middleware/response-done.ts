import type { ServerResponse } from 'node:http';

/**
 * Runs `done` once when the response is over: sent in full (`completed`), or cut short
 * because the client went away first. Either way the request is accounted for once.
 */
export function onResponseDone(res: ServerResponse, done: (completed: boolean) => void): void {
  res.once('close', () => done(res.writableFinished));
}
