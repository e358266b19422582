import { useEffect, type ComponentType } from 'react';
import { lazyPage } from '../../lazy-page.js';
import { NavLink, navigate, pathOnly } from '../../router.js';
import { useSession } from '../../session.js';
import type { Me } from '../../api/types.js';
import { NotForYourRole } from './NotForYourRole.js';
import { NotFound } from '../../components/states.js';

const Tokens = lazyPage(() => import('./Tokens.js'));
const Webhooks = lazyPage(() => import('./Webhooks.js'));
const EndpointPage = lazyPage(() => import('./EndpointPage.js'));
const Team = lazyPage(() => import('./Team.js'));
const WorkspaceSettings = lazyPage(() => import('./WorkspaceSettings.js'));
const SecurityLog = lazyPage(() => import('./SecurityLog.js'));
const Processor = lazyPage(() => import('./Processor.js'));

interface Section {
  path: string;
  /** Its tab's name. */
  label: string;
  Page: ComponentType;
  /**
   * For a section only some roles may use: the permission that lets a viewer use it, and what
   * NotForYourRole says to the others who open its address (a bookmark, a shared link).
   */
  restricted?: { allowed: (me: Me) => boolean; what: string; who: string };
}

/**
 * The Settings sections in tab order, and the one place that says which roles may use which:
 * the tabs leave out a restricted section for a viewer it does not allow, and its address shows
 * NotForYourRole.
 */
const SECTIONS: Section[] = [
  {
    path: '/settings/tokens',
    label: 'API tokens',
    Page: Tokens,
    restricted: { allowed: (me) => me.permissions.read_tokens, what: 'The API tokens list', who: 'owners and admins' },
  },
  { path: '/settings/webhooks', label: 'Outbound webhooks', Page: Webhooks },
  { path: '/settings/team', label: 'Team', Page: Team },
  { path: '/settings/workspace', label: 'Workspace', Page: WorkspaceSettings },
  {
    path: '/settings/security-log',
    label: 'Security log',
    Page: SecurityLog,
    restricted: {
      allowed: (me) => me.permissions.read_security_log,
      what: 'The security log',
      who: 'owners and admins',
    },
  },
  {
    path: '/settings/processor',
    label: 'Processor',
    Page: Processor,
    restricted: { allowed: (me) => me.permissions.manage_processor, what: 'The processor', who: 'owners' },
  },
];

/** The section at `path` (an endpoint's page is Outbound webhooks'), or the not-found page. */
function page(path: string, me: Me) {
  const endpoint = /^\/settings\/webhooks\/([^/]+)$/.exec(path);
  if (endpoint) return <EndpointPage id={endpoint[1]!} />;
  const section = SECTIONS.find((each) => each.path === path);
  // An address that is no section (`/settings/nope`, a mistyped or stale link) says so, as any
  // unknown address does, under the tabs: it used to be replaced by the first tab without a word.
  if (!section) return <NotFound />;
  const { restricted } = section;
  if (restricted && !restricted.allowed(me)) {
    return <NotForYourRole what={restricted.what} role={me.user.role} who={restricted.who} />;
  }
  return <section.Page />;
}

export default function Settings({ path }: { path: string }) {
  const { me } = useSession();
  const route = pathOnly(path);
  const tabs = SECTIONS.filter((section) => !section.restricted || section.restricted.allowed(me));
  // /settings itself: the first tab this viewer has, in place of the address.
  const first = tabs[0]!.path;
  const index = route === '/settings';
  useEffect(() => {
    if (index) navigate(first, { replace: true });
  }, [index, first]);
  if (index) return null;
  const content = page(route, me);
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label="Settings">
        <ul>
          {tabs.map((tab) => (
            <li key={tab.path}>
              <NavLink to={tab.path} className="tab">
                {tab.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings-body">{content}</div>
    </div>
  );
}
