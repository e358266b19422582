import { useCallback, useMemo, useState } from 'react';
import { ApiError, errorMessage, fieldSentence } from './api/client.js';

/**
 * The submit/busy/error pattern of a form or button that changes something on the server:
 * `run` marks it busy and clears the last outcome, runs the action (which applies its own
 * result: close a dialog, show a value, reload a list), then records either `done` or the
 * server's refusal word for word in `error`. Pages show `error` with ErrorNote and give their
 * submit button `busy` (BusyButton: it ignores presses meanwhile, and keeps the keyboard's focus). A form whose fields the API names (`param`) declares them
 * (`fields`): a refusal about one of them shows at that field (Field's `action` and `param`), any
 * other under the form (FormError, which shows `formError`), so each refusal shows exactly once.
 * An edit of the form (`edited`, which Field calls as its input changes) ends what the last
 * submit said that the edit makes stale: its success note ("Saved." beside a name since emptied
 * or changed and not saved), a refusal shown at that field (it was about what the field held),
 * and a refusal shown under the form (about the form as sent: "That is you" beside another
 * address). A refusal shown at another field stays: that field still holds what was refused.
 */
export interface Action {
  busy: boolean;
  /** The last refusal's message (the server's own words), until the next run or `edited`. */
  error: string | null;
  /**
   * The last refusal as an error of this field (the API's `param`, one of `fields`), worded to be
   * shown at it; null when the refusal is about another field or none.
   */
  fieldError(param: string): string | null;
  /**
   * The last refusal, unless it is about one of `fields` (which show it themselves through
   * `fieldError`): what the form shows under its fields (FormError).
   */
  formError: string | null;
  /** The success message given to the last run, until the next one or an edit (`edited`). */
  done: string | null;
  /**
   * The form's field `param` (the API's name) was edited: forgets the success note, the refusal
   * if it is about this field, and one shown under the form (`formError`), since none of them
   * describes what the form now holds. A refusal shown at another of `fields` stays. Field calls
   * it as its input changes; a page calls it for its own controls (a select, a role choice).
   */
  edited(param: string): void;
  /** Resolves true when the action succeeded, false when it failed (never throws). */
  run(action: () => Promise<unknown>, options?: RunOptions): Promise<boolean>;
  /** Forgets the outcome (a dialog closed, a filter changed). */
  clear(): void;
}

interface ActionOptions {
  /**
   * The API's names (`param`) of the fields the form shows refusals at. Fixed for the form's
   * life: read once, when it first renders.
   */
  fields?: readonly string[];
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
  /** The field the refusal is about and its sentence for that field. */
  field: { param: string; sentence: string } | null;
}

const IDLE: State = { busy: false, error: null, done: null, field: null };

export function useAction(options: ActionOptions = {}): Action {
  const [state, setState] = useState<State>(IDLE);
  const [fields] = useState(() => new Set(options.fields));

  const run = useCallback(async (action: () => Promise<unknown>, options: RunOptions = {}): Promise<boolean> => {
    setState({ ...IDLE, busy: true });
    try {
      await action();
      setState({ ...IDLE, busy: options.staysBusy === true, done: options.done ?? null });
      return true;
    } catch (failure) {
      const field =
        failure instanceof ApiError && failure.param
          ? { param: failure.param, sentence: fieldSentence(failure) }
          : null;
      setState({ ...IDLE, error: errorMessage(failure), field });
      return false;
    }
  }, []);
  const clear = useCallback(() => setState(IDLE), []);
  // Busy stays busy: the edit does not end a submit under way, whose outcome is still to come.
  const edited = useCallback(
    (param: string) =>
      setState((previous) => {
        const atOtherField =
          previous.field !== null && fields.has(previous.field.param) && previous.field.param !== param;
        if (previous.done === null && (previous.error === null || atOtherField)) return previous;
        return atOtherField ? { ...previous, done: null } : { ...IDLE, busy: previous.busy };
      }),
    [fields],
  );

  return useMemo(() => {
    const { busy, error, done, field } = state;
    const atField = field && fields.has(field.param) ? field : null;
    return {
      busy,
      error,
      done,
      fieldError: (param: string) => (atField?.param === param ? atField.sentence : null),
      formError: atField ? null : error,
      edited,
      run,
      clear,
    };
  }, [state, fields, run, clear, edited]);
}
