/**
 * Where keyboard focus goes in a modal dialog. The native <dialog> makes the page inert, but
 * Chromium still lets Tab leave the last control for the browser's own UI (the page's body, to
 * a keyboard user) before it comes back, and it does not move focus when a dialog's content is
 * replaced (Create token → Token created) or return it when the control that opened the
 * dialog is gone (a revoked token's Revoke button).
 */

import { focusByScript } from '../focus.js';

const FOCUSABLE = [
  'a[href]',
  'button:not([disabled])',
  'input:not([disabled]):not([type="hidden"])',
  'select:not([disabled])',
  'textarea:not([disabled])',
  '[tabindex]:not([tabindex="-1"])',
].join(', ');

/** The controls Tab visits inside `root`, in order (hidden ones skipped). */
function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
    (element) => element.getClientRects().length > 0 && !element.closest('[inert]'),
  );
}

/**
 * On opening (or a new content): a form starts at its first field, anything else at the first
 * control of its body (Cancel, in a confirmation; Copy, in a secret's), else the dialog itself.
 * A form whose first fields come filled in marks where typing starts (`data-autofocus`: the
 * Password of the sign-in-again dialog, under the Email it already knows).
 */
export function focusFirst(dialog: HTMLDialogElement): void {
  const body = dialog.querySelector<HTMLElement>('.dialog-body');
  const field =
    body?.querySelector<HTMLElement>('[data-autofocus]:not([disabled])') ??
    body?.querySelector<HTMLElement>('input:not([disabled]), select:not([disabled]), textarea');
  const target = field ?? (body && focusables(body)[0]) ?? dialog;
  focusByScript(target);
}

/** Tab from the last control goes to the first, Shift+Tab from the first to the last: one lap. */
export function trapTab(dialog: HTMLDialogElement, event: KeyboardEvent): void {
  if (event.key !== 'Tab') return;
  const controls = focusables(dialog);
  const first = controls[0];
  const last = controls.at(-1);
  if (!first || !last) {
    event.preventDefault();
    return;
  }
  const active = document.activeElement;
  const outside = !active || !dialog.contains(active) || active === dialog;
  if (event.shiftKey && (active === first || outside)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (active === last || outside)) {
    event.preventDefault();
    first.focus();
  }
}

/**
 * After closing: back to the control that opened the dialog, or, when that is gone (or was the
 * page itself), to the page's content, so the next Tab continues there rather than at the top.
 */
export function returnFocus(opener: HTMLElement | null): void {
  if (opener && opener !== document.body && opener.isConnected) {
    opener.focus();
    if (document.activeElement === opener) return;
  }
  document.getElementById('main')?.focus();
}
