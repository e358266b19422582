import { useCallback, useMemo, useState } from 'react';
import { errorMessage } from './api/client.js';

/**
 * The submit/busy/error pattern of a form or button that changes something on the server:
 * `run` marks it busy and clears the last outcome, runs the action (which applies its own
 * result: close a dialog, show a value, reload a list), then records either `done` or the
 * server's refusal word for word in `error`. Pages show `error` with ErrorNote and disable
 * their submit button while `busy`.
 */
export interface Action {
  busy: boolean;
  /** The last refusal's message (the server's own words), until the next run. */
  error: string | null;
  /** The success message given to the last run, until the next one. */
  done: string | null;
  /** Resolves true when the action succeeded, false when it failed (never throws). */
  run(action: () => Promise<unknown>, options?: RunOptions): Promise<boolean>;
  /** Forgets the outcome (a dialog closed, a filter changed). */
  clear(): void;
}

interface RunOptions {
  /** Shown in `done` after a success. */
  done?: string;
  /**
   * Stay busy after a success: the page is about to be left or the control to unmount
   * (signing in, a dialog that closes), so a second submit must not slip in meanwhile.
   */
  staysBusy?: boolean;
}

interface State {
  busy: boolean;
  error: string | null;
  done: string | null;
}

const IDLE: State = { busy: false, error: null, done: null };

export function useAction(): Action {
  const [state, setState] = useState<State>(IDLE);

  const run = useCallback(async (action: () => Promise<unknown>, options: RunOptions = {}): Promise<boolean> => {
    setState({ busy: true, error: null, done: null });
    try {
      await action();
      setState({ busy: options.staysBusy === true, error: null, done: options.done ?? null });
      return true;
    } catch (failure) {
      setState({ busy: false, error: errorMessage(failure), done: null });
      return false;
    }
  }, []);
  const clear = useCallback(() => setState(IDLE), []);

  return useMemo(() => ({ ...state, run, clear }), [state, run, clear]);
}
