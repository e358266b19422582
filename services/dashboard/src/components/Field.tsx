import { useEffect, useId, useRef, useState, type InputHTMLAttributes, type ReactNode, type Ref } from 'react';
import type { Action } from '../use-action.js';
import { ErrorNote, LiveStatus } from './states.js';

/**
 * A labelled input; the hint and the error are tied to it for screen readers (`aria-describedby`,
 * and `aria-invalid` while there is an error). Its error is `error`, a check made as you type,
 * else the server's refusal of this field: `action`'s refusal about `param` (the API's name of
 * the field, one of the action's `fields`). Only the refusal is an alert, read out when it
 * appears after a submit; a check made as you type is not read out at every key. An edit tells the
 * action (its `edited`): the refusal goes, as does the form's success note and a refusal shown
 * under the form; each was about what was sent, and stayed beside a changed text until the next
 * submit.
 *
 * `limit` is the most characters the server takes for the field. A longer text is kept whole (no
 * `maxLength`, which cut a paste at the limit without a word) and said to be too long at the
 * field as soon as it is; the browser then refuses the form's submit as it does an empty
 * required field, and nothing is sent, but its own bubble is not shown (the `invalid` event is
 * canceled): the sentence is at the field already, and said twice it read as two problems. The
 * focus goes to the field, as the browser's would, when it is the form's first invalid one. A screen
 * reader is told as the text crosses the limit, once each way, in a polite live region seen by no
 * one else (`LiveStatus`): over it, the sentence as it reads then ("At most 200 characters: this
 * has 201."); back under, "Within the limit of 200 characters.". Keys typed while the text stays
 * on one side say nothing more: the region keeps its words, and the count at the field goes on.
 */
export function Field({
  label,
  hint,
  error,
  limit,
  action,
  param,
  inputRef,
  after,
  onChange,
  ...input
}: Omit<InputHTMLAttributes<HTMLInputElement>, 'maxLength'> & {
  label: string;
  hint?: ReactNode;
  error?: string | null;
  limit?: number;
  /** The input itself, for a page that moves the focus to it (a refused sign-in's password). */
  inputRef?: Ref<HTMLInputElement>;
  /** A control beside the input, on its line (SecretField's Show). */
  after?: ReactNode;
} & ({ action: Action; param: string } | { action?: never; param?: never })) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const own = useRef<HTMLInputElement | null>(null);
  const tooLong = limit === undefined ? null : lengthProblem(characters(String(input.value ?? '')), limit);
  // The browser's own check: the form's submit is refused while the text is too long.
  useEffect(() => own.current?.setCustomValidity(tooLong ?? ''), [tooLong]);
  // What the live region says: changed only as the text crosses the limit, so said once a crossing.
  // The side the text opened on is said by nothing: the field's description tells it.
  const over = tooLong !== null;
  const [crossing, setCrossing] = useState({ over, said: '' });
  if (limit !== undefined && crossing.over !== over) setCrossing({ over, said: tooLong ?? withinLimit(limit) });
  const refusal = action && param ? action.fieldError(param) : null;
  const shown = error ?? tooLong ?? refusal;
  const announce = error == null && tooLong == null;
  const describedBy = [hint ? hintId : null, shown ? errorId : null].filter(Boolean).join(' ') || undefined;
  const ref = (node: HTMLInputElement | null) => {
    own.current = node;
    if (typeof inputRef === 'function') inputRef(node);
    else if (inputRef) inputRef.current = node;
  };
  const field = (
    <input
      ref={ref}
      id={id}
      aria-invalid={shown ? true : undefined}
      aria-describedby={describedBy}
      {...input}
      onChange={(event) => {
        // What the last submit said was about what the form held: edited, it no longer is.
        if (action && param) action.edited(param);
        onChange?.(event);
      }}
      onInvalid={(event) => {
        input.onInvalid?.(event);
        if (tooLong === null) return; // the browser's own words (an empty required field) stay
        event.preventDefault();
        const box = event.currentTarget;
        if (box.form?.querySelector(':invalid') === box) box.focus();
      }}
    />
  );
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {after ? (
        <div className="field-row">
          {field}
          {after}
        </div>
      ) : (
        field
      )}
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
      {limit !== undefined && <LiveStatus className="visually-hidden">{crossing.said}</LiveStatus>}
    </div>
  );
}

/**
 * The most characters the server takes for a name people choose (a workspace's, a person's, an
 * API token's, an endpoint's): `NameInput(200)` and the endpoints' own `Name` in
 * packages/domain, and the columns' CHECKs.
 */
export const NAME_LIMIT = 200;

/**
 * A text's length as the server counts it for a name: in characters (Unicode code points, as
 * ajv's maxLength and Postgres' length() count), so an emoji is one, not the two UTF-16 units
 * of JavaScript's `length`.
 */
function characters(text: string): number {
  return Array.from(text).length;
}

/**
 * What is wrong with a text of `count` characters where `limit` is the most the server takes,
 * or null: the limit and how far over it the text is, so the person knows how much to cut.
 */
export function lengthProblem(count: number, limit: number): string | null {
  return count > limit ? `At most ${limit} characters: this has ${count}.` : null;
}

/** What a screen reader is told as a text comes back under its limit (Field's `limit`). */
function withinLimit(limit: number): string {
  return `Within the limit of ${limit} characters.`;
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
