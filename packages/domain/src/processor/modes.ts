import { conflict, type ProcessorMode, type ServiceError } from '@retention/core';
import type { Queryable } from '@retention/db';

/**
 * A connection's mode, and the events set aside (docs/processor.md, "Mode" and "Set aside").
 * Stripe keeps test and live data apart (two sets of keys, two sets of objects, `livemode` on
 * every event); a workspace mirrors one of them, so what the other sends is never mixed in. The
 * mode of a key and the reasons are @retention/core's (processor-modes.ts), which the Processor
 * page reads too.
 */

const MODE_NAME: Record<ProcessorMode, string> = { test: 'test mode', live: 'live mode' };

/**
 * The refusal of a key of the other mode than the connection's, unless the switch is confirmed:
 * what was mirrored in the old mode stays in the workspace beside what the new one brings.
 */
export function modeSwitchRefusal(from: ProcessorMode, to: ProcessorMode): ServiceError {
  return conflict(
    `api_key: this is a ${MODE_NAME[to]} key and the connection is in ${MODE_NAME[from]}; nothing was saved. ` +
      `Switching makes it a ${MODE_NAME[to]} connection: the data already imported in ${MODE_NAME[from]} stays ` +
      `in the workspace, and ${MODE_NAME[from]} events are set aside from then on. Confirm the switch to connect it ` +
      '(confirm_mode_switch, or --confirm-mode-switch).',
  );
}

/**
 * Fixes the mode of a connection that has none yet (no key) from the first correctly signed
 * event of the account itself; returns the connection's mode afterwards (another event, or a
 * connect with a key, may have fixed it first).
 */
export async function fixModeIfUnknown(
  db: Queryable,
  connectionId: string,
  mode: ProcessorMode,
): Promise<ProcessorMode> {
  const [row] = await db('processor_connections')
    .where({ id: connectionId })
    .update({ mode: db.raw('coalesce(mode, ?)', [mode]) })
    .returning<Array<{ mode: ProcessorMode }>>('mode');
  return row!.mode;
}
