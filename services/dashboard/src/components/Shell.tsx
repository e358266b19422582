import { useEffect, useRef, useState, type FocusEvent, type ReactNode } from 'react';
import { api, errorMessage } from '../api/client.js';
import { Link, NavLink, usePath } from '../router.js';
import { ROLE_NAMES } from '../pages/settings/roles.js';
import { useSession } from '../session.js';
import { KeyRejectedBanner } from './KeyRejectedBanner.js';
import { forgetSession } from '../session-memory.js';

const NAVIGATION = [
  { to: '/', label: 'Overview', exact: true },
  { to: '/campaigns', label: 'Campaigns' },
  { to: '/customers', label: 'Customers' },
  { to: '/cancel-sessions', label: 'Cancel sessions' },
  { to: '/settings', label: 'Settings' },
];

function AccountMenu() {
  const { me } = useSession();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const path = usePath();

  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!ref.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      // Closing removes the focused item; the focus goes back to the button, not to the body.
      if (ref.current?.contains(document.activeElement)) buttonRef.current?.focus();
      setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  const signOut = async () => {
    try {
      await api('DELETE', '/session', { anonymous: true });
      forgetSession();
      window.location.assign('/dashboard/sign-in');
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };

  // Focus gone elsewhere (Tab past Sign out, Shift+Tab off the button): the menu closes, or it
  // stayed open over the controls the focus went to (the nav links at 390 px, the Overview's
  // Period select at 1280). A click in the page does the same (pointerdown, above).
  const closeWhenFocusLeaves = (event: FocusEvent<HTMLDivElement>) => {
    const to = event.relatedTarget as Node | null;
    if (to && !event.currentTarget.contains(to)) setOpen(false);
  };

  return (
    <div className="account-menu" ref={ref} onBlur={closeWhenFocusLeaves}>
      <button
        ref={buttonRef}
        type="button"
        className="account-button"
        aria-expanded={open}
        aria-controls="account-menu-list"
        onClick={() => setOpen((value) => !value)}
      >
        <span className="avatar" aria-hidden="true">
          {(me.user.name || me.user.email).slice(0, 1).toUpperCase()}
        </span>
        <span className="account-name" title={me.user.name || me.user.email}>
          {me.user.name || me.user.email}
        </span>
        <span className="visually-hidden">Account menu</span>
      </button>
      {open && (
        <div className="menu" id="account-menu-list">
          <p className="menu-caption">
            <strong>{me.user.email}</strong>
            <span>{ROLE_NAMES[me.user.role]}</span>
          </p>
          <Link to="/account" className="menu-item">
            Account
          </Link>
          <button type="button" className="menu-item" onClick={() => void signOut()}>
            Sign out
          </button>
          {error && (
            <p className="error-note" role="alert">
              {error}
            </p>
          )}
        </div>
      )}
    </div>
  );
}

export function Shell({ children }: { children: ReactNode }) {
  const { me } = useSession();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span className="brand-name">{me.workspace.name}</span>
        </Link>
        <AccountMenu />
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {NAVIGATION.map((item) => (
            <li key={item.to}>
              <NavLink to={item.to} exact={item.exact} className="nav-link">
                {item.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main className="content" id="main" tabIndex={-1}>
        <KeyRejectedBanner />
        {children}
      </main>
    </div>
  );
}
