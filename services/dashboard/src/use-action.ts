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
 * A refusal shown at a field goes as soon as that field is edited (`forgetField`): it was about
 * what the field held, and would stand, marked invalid, beside a corrected value until the next
 * submit.
 */
export interface Action {
  busy: boolean;
  /** The last refusal's message (the server's own words), until the next run. */
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
  /** The success message given to the last run, until the next one. */
  done: string | null;
  /**
   * Forgets the last refusal if it is about this field (the API's `param`): the field was edited
   * since, so the refusal no longer describes what it holds. A refusal about another field, or
   * none, stays. Field calls it as its input changes.
   */
  forgetField(param: string): void;
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
  // Only a refusal shown at the field (one of `fields`): one shown under the form stays there.
  const forgetField = useCallback(
    (param: string) => setState((previous) => (fields.has(param) && previous.field?.param === param ? IDLE : previous)),
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
      forgetField,
      run,
      clear,
    };
  }, [state, fields, run, clear, forgetField]);
}
