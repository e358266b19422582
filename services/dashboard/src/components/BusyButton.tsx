import type { ButtonHTMLAttributes, MouseEvent } from 'react';

/**
 * A button whose action is running (`busy`: the useAction's `busy`) says so with
 * `aria-disabled="true"` and ignores clicks, Enter and Space, but stays focusable. A `disabled`
 * button loses the focus in Chromium, which puts it on the page's body: a keyboard user pressing
 * Send test, Save or the Enabled switch was sent back to the top of the page, and a second Space
 * on the switch did nothing (docs/dashboard-ui.md, "Accessibility"). `disabled` is still there
 * for a button that cannot act for another reason (a form not filled in, a role that may not).
 *
 * A submit button that ignores its click also stops the form's submit, Enter in a field
 * included (the browser submits a form through its default button's click).
 */
export function BusyButton({ busy, onClick, ...button }: ButtonHTMLAttributes<HTMLButtonElement> & { busy: boolean }) {
  const click = (event: MouseEvent<HTMLButtonElement>) => {
    if (busy) {
      event.preventDefault();
      return;
    }
    onClick?.(event);
  };
  return <button {...button} aria-disabled={busy ? true : undefined} onClick={click} />;
}
