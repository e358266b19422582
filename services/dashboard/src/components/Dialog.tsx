import { useEffect, useId, useRef, type ReactNode } from 'react';
import type { Action } from '../use-action.js';
import { focusFirst, returnFocus, trapTab } from './dialog-focus.js';
import { BusyButton } from './BusyButton.js';

/**
 * A modal on the native <dialog>: showModal() makes the rest of the page inert and Escape closes
 * it. Focus starts at its first field or control (again when its title, so its content, changes),
 * Tab goes round its controls only, and on closing focus returns to the control that opened it
 * (or `returnFocusTo`), or to the page's content when that control is gone (dialog-focus.ts).
 */
export function Dialog({
  title,
  onClose,
  children,
  wide,
  returnFocusTo,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  /**
   * The control the dialog is about, when that need not be the focused one as it opens: a
   * select whose change asks to confirm changes without the focus when picked by a script or
   * assistive technology, and the focus then belongs back on it, not on whatever had it.
   */
  returnFocusTo?: HTMLElement;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  const returnRef = useRef(returnFocusTo);
  returnRef.current = returnFocusTo;

  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const onCancel = (event: Event) => {
      event.preventDefault();
      closeRef.current();
    };
    const onKeyDown = (event: KeyboardEvent) => trapTab(dialog, event);
    dialog.addEventListener('cancel', onCancel);
    dialog.addEventListener('keydown', onKeyDown);
    return () => {
      dialog.removeEventListener('cancel', onCancel);
      dialog.removeEventListener('keydown', onKeyDown);
      if (dialog.open) dialog.close();
      returnFocus(returnRef.current ?? opener);
    };
  }, []);

  // A dialog whose content is replaced (Create token → Token created) keeps its <dialog>; the
  // new content starts with the focus as a new dialog would.
  useEffect(() => focusFirst(ref.current!), [title]);

  return (
    <dialog ref={ref} className={wide ? 'dialog wide' : 'dialog'} aria-labelledby={titleId}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}

/**
 * "Are you sure?" with the action's own verb on the button, one contract for every use: the
 * dialog shows the state of `action` (the page's useAction() for what it confirms), so no page
 * wires it by hand. Its confirm button is busy while the action runs (BusyButton: it keeps the
 * focus, and ignores a second press); a refusal shows in the
 * dialog, in the server's words, and the dialog stays open to try again or cancel (the page
 * closes it once the action has succeeded). Closed without acting (its cancel button, ×,
 * Escape), it calls `onClose` and then forgets the refusal (`action.clear()`), so a refusal
 * never outlives its dialog, and the page behind never shows it again.
 */
/** The footer of a dialog that only tells (a link or a secret shown once): its one way out, Done. */
export function DoneActions({ onDone }: { onDone: () => void }) {
  return (
    <div className="dialog-actions">
      <button type="button" className="button primary" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

export function ConfirmDialog({
  title,
  message,
  confirmLabel,
  cancelLabel = 'Cancel',
  action,
  onConfirm,
  onClose,
  returnFocusTo,
  tone = 'danger',
}: {
  title: string;
  message: ReactNode;
  confirmLabel: string;
  /**
   * How the confirming button looks: `danger` (red) for what takes something away (Revoke, Delete,
   * Mark lost, Sign out everywhere), `primary` for a confirmation that is not (Mark recovered).
   */
  tone?: 'danger' | 'primary';
  /** The way out, when "Cancel" would read as the action itself (Cancel invitation). */
  cancelLabel?: string;
  /** The action `onConfirm` runs: its own useAction(), not one whose refusal the page shows too. */
  action: Pick<Action, 'busy' | 'error' | 'clear'>;
  onConfirm: () => void;
  onClose: () => void;
  returnFocusTo?: HTMLElement;
}) {
  const close = () => {
    onClose();
    action.clear();
  };
  return (
    <Dialog title={title} onClose={close} returnFocusTo={returnFocusTo}>
      <div className="stack">
        <div>{message}</div>
        {action.error && (
          <p className="error-note" role="alert">
            {action.error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={close}>
            {cancelLabel}
          </button>
          <BusyButton type="button" className={`button ${tone}`} onClick={onConfirm} busy={action.busy}>
            {confirmLabel}
          </BusyButton>
        </div>
      </div>
    </Dialog>
  );
}
