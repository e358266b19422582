import { useId, type InputHTMLAttributes, type ReactNode, type Ref } from 'react';
import type { Action } from '../use-action.js';
import { ErrorNote, LiveStatus } from './states.js';

/**
 * A labelled input; the hint and the error are tied to it for screen readers (`aria-describedby`,
 * and `aria-invalid` while there is an error). Its error is `error`, a check made as you type,
 * else the server's refusal of this field: `action`'s refusal about `param` (the API's name of
 * the field, one of the action's `fields`). Only the refusal is an alert, read out when it
 * appears after a submit; a check made as you type is not read out at every key.
 */
export function Field({
  label,
  hint,
  error,
  action,
  param,
  inputRef,
  ...input
}: InputHTMLAttributes<HTMLInputElement> & {
  label: string;
  hint?: ReactNode;
  error?: string | null;
  /** The input itself, for a page that moves the focus to it (a refused sign-in's password). */
  inputRef?: Ref<HTMLInputElement>;
} & ({ action: Action; param: string } | { action?: never; param?: never })) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const refusal = action && param ? action.fieldError(param) : null;
  const shown = error ?? refusal;
  const announce = error == null;
  const describedBy = [hint ? hintId : null, shown ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input ref={inputRef} id={id} aria-invalid={shown ? true : undefined} aria-describedby={describedBy} {...input} />
      {hint && (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      )}
      {shown && (
        <span className="field-error" id={errorId} role={announce ? 'alert' : undefined}>
          {shown}
        </span>
      )}
    </div>
  );
}

/**
 * The action's refusal that no field of the form shows (the action's `formError`: one about no
 * field, or a field the form does not have), under the fields.
 */
export function FormError({ action }: { action: Pick<Action, 'formError'> }) {
  return action.formError ? <ErrorNote message={action.formError} /> : null;
}

/** What a form's last submit came to: its refusal not shown at a field, or its success. */
export function Outcome({ action }: { action: Pick<Action, 'formError' | 'done'> }) {
  return (
    <>
      <FormError action={action} />
      <LiveStatus>{action.done}</LiveStatus>
    </>
  );
}
