import { useState, type ComponentProps } from 'react';
import { Field } from './Field.js';

/** Field's props but those SecretField sets, each side of its union of `action` and `param` kept. */
type FieldProps =
  ComponentProps<typeof Field> extends infer Props
    ? Props extends unknown
      ? Omit<Props, 'type' | 'after' | 'autoComplete'>
      : never
    : never;

/**
 * Whether the browser masks a text field's characters with CSS (`-webkit-text-security`, in
 * Chromium, Safari and Firefox 114 on); read once. Outside a browser, as if it did.
 */
const CSS_MASKS = typeof CSS === 'undefined' || CSS.supports('-webkit-text-security', 'disc');

/**
 * A field for a secret the owner pastes from elsewhere (a Stripe key, a signing secret): masked as
 * a password is, with a Show button beside it, but never offered to the browser's password manager
 * (docs/dashboard-ui.md, "Secrets pasted into a form"). A `type="password"` field is: Chromium
 * asks to save its value on Connect whatever its `autocomplete` says ("off" included; with
 * "new-password" it also offers to make one up). So the field is a text field masked with CSS
 * (`.masked`), which Chromium's password manager does not take for a password, and which the
 * password-manager extensions are told to leave alone by their own attributes. In a browser
 * without the CSS property it is a password field after all: masked matters more.
 *
 * `shownName` names what is shown for the button ("signing secret": "Show signing secret"), in
 * other words than the field's label, so the label names the field alone.
 */
export function SecretField({ shownName, ...field }: FieldProps & { shownName: string }) {
  const [shown, setShown] = useState(false);
  const masked = !shown;
  return (
    <Field
      {...field}
      type={masked && !CSS_MASKS ? 'password' : 'text'}
      className={masked ? 'masked' : undefined}
      autoComplete="off"
      autoCapitalize="off"
      autoCorrect="off"
      spellCheck={false}
      data-1p-ignore=""
      data-lpignore="true"
      data-bwignore=""
      after={
        <button
          type="button"
          className="button small"
          aria-label={`${shown ? 'Hide' : 'Show'} ${shownName}`}
          onClick={() => setShown(!shown)}
        >
          {shown ? 'Hide' : 'Show'}
        </button>
      }
    />
  );
}
