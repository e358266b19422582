import { useEffect, useState, type FocusEvent, type RefObject } from 'react';
import { usePath } from '../router.js';

export interface Disclosure {
  open: boolean;
  toggle: () => void;
  close: () => void;
  /** For the element holding the button and what it shows: closes when the focus leaves both. */
  onBlur: (event: FocusEvent<HTMLElement>) => void;
}

/**
 * A button that shows and hides what it controls (the account menu, the phone's navigation),
 * closed as a reader expects it to be: on a page change, a pointer down outside `ref`, Escape (the
 * focus back on the button when it was inside, not on the body once the focused item is gone),
 * and the focus leaving it (Tab past its last item, Shift+Tab off the button), or it stayed open
 * over the controls the focus went to.
 */
export function useDisclosure(
  ref: RefObject<HTMLElement | null>,
  buttonRef: RefObject<HTMLElement | null>,
): Disclosure {
  const [open, setOpen] = useState(false);
  const path = usePath();

  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!ref.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      if (ref.current?.contains(document.activeElement)) buttonRef.current?.focus();
      setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open, ref, buttonRef]);

  return {
    open,
    toggle: () => setOpen((value) => !value),
    close: () => setOpen(false),
    onBlur: (event) => {
      const to = event.relatedTarget as Node | null;
      if (to && !event.currentTarget.contains(to)) setOpen(false);
    },
  };
}
