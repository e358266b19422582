import { useId, useRef, useState, type ReactNode } from 'react';
import { api, errorMessage } from '../api/client.js';
import { Link, NavLink } from '../router.js';
import { ROLE_NAMES } from '../pages/settings/roles.js';
import { useSession } from '../session.js';
import { KeyRejectedBanner } from './KeyRejectedBanner.js';
import { forgetSession } from '../session-memory.js';
import { useDisclosure } from './use-disclosure.js';

const NAVIGATION = [
  { to: '/', label: 'Overview', exact: true },
  { to: '/campaigns', label: 'Campaigns' },
  { to: '/customers', label: 'Customers' },
  { to: '/cancel-sessions', label: 'Cancel sessions' },
  { to: '/settings', label: 'Settings' },
];

function AccountMenu() {
  const { me } = useSession();
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const { open, toggle, onBlur } = useDisclosure(ref, buttonRef);

  const signOut = async () => {
    try {
      await api('DELETE', '/session', { anonymous: true });
      forgetSession();
      window.location.assign('/dashboard/sign-in');
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };

  // The focus gone elsewhere closes it (useDisclosure): it stayed open over the controls the
  // focus went to (the Menu button at 390 px, the Overview's Period select at 1280).
  return (
    <div className="account-menu" ref={ref} onBlur={onBlur}>
      <button
        ref={buttonRef}
        type="button"
        className="account-button"
        aria-expanded={open}
        aria-controls="account-menu-list"
        onClick={toggle}
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

/**
 * The main navigation: a side column of links, a row of them across the top on a tablet, and on a
 * phone a Menu button at the end of the top bar that shows them as a list under it (a disclosure:
 * `aria-expanded`, `aria-controls`), so that the navigation takes the top bar's one row, not two
 * rows of its own (docs/dashboard-ui.md, "The navigation on a phone"). The button is inside the
 * landmark, so "Main" is there at every width; the links are what CSS hides, only on a phone.
 */
function MainNavigation() {
  const ref = useRef<HTMLElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const { open, toggle, close, onBlur } = useDisclosure(ref, buttonRef);
  const listId = useId();
  return (
    <nav className={open ? 'sidebar open' : 'sidebar'} aria-label="Main" ref={ref} onBlur={onBlur}>
      <button
        ref={buttonRef}
        type="button"
        className="nav-toggle"
        aria-expanded={open}
        aria-controls={listId}
        onClick={toggle}
      >
        <span className="nav-toggle-icon" aria-hidden="true" />
        Menu
      </button>
      <ul id={listId}>
        {NAVIGATION.map((item) => (
          <li key={item.to}>
            {/* Closed by the page change too, but not when the link is the page shown. */}
            <NavLink to={item.to} exact={item.exact} className="nav-link" onClick={close}>
              {item.label}
            </NavLink>
          </li>
        ))}
      </ul>
    </nav>
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
      <MainNavigation />
      <main className="content" id="main" tabIndex={-1}>
        <KeyRejectedBanner />
        {children}
      </main>
    </div>
  );
}
