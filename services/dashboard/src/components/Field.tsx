import { useId, type InputHTMLAttributes, type ReactNode, type Ref } from 'react';

/**
 * A labelled input; the hint and the error are tied to it for screen readers (`aria-describedby`,
 * and `aria-invalid` while there is an error). `announce` makes the error an alert, read out when
 * it appears: for a refusal that comes back after a submit (useAction's `fieldError`), not for a
 * check made as you type.
 */
export function Field({
  label,
  hint,
  error,
  announce = false,
  inputRef,
  ...input
}: InputHTMLAttributes<HTMLInputElement> & {
  label: string;
  hint?: ReactNode;
  error?: string | null;
  announce?: boolean;
  /** The input itself, for a page that moves the focus to it (a refused sign-in's password). */
  inputRef?: Ref<HTMLInputElement>;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input ref={inputRef} id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {hint && (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      )}
      {error && (
        <span className="field-error" id={errorId} role={announce ? 'alert' : undefined}>
          {error}
        </span>
      )}
    </div>
  );
}
