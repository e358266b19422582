import type { Role } from '../api/types.js';
import { ROLE_NAMES, ROLE_SENTENCES, withArticle } from '../pages/settings/roles.js';

/** A role read again that differs from the one the page was drawn for (App's readRoleAgain). */
export interface RoleChange {
  from: Role;
  to: Role;
  /**
   * Whether a refused request found it (a click on a control the new role does not have); the
   * refusal's own words are the page's to show where it shows them, not said twice.
   */
  refused: boolean;
}

/**
 * Says, above the page, that the signed-in person's role changed while the page was open (an
 * owner changed it on the Team page, in another browser), so the tabs and buttons that appeared
 * or went away meanwhile are explained, not a mystery; after a refusal, that the click did nothing
 * and why, since the control clicked may be gone with the dialog it was in, and its message too. An alert after a
 * refusal (something the person asked for was not done), a status line otherwise. It stays,
 * across pages, until dismissed or the next change.
 */
export function RoleChangedNote({ change, onDismiss }: { change: RoleChange; onDismiss: () => void }) {
  const { from, to, refused } = change;
  return (
    <div className="notice page-notice role-changed" role={refused ? 'alert' : 'status'}>
      <p>
        {refused ? 'That was not done: your role' : 'Your role'} in this workspace changed from {ROLE_NAMES[from]} to{' '}
        {ROLE_NAMES[to]}, so this page now shows what {withArticle(to)} can do. {ROLE_SENTENCES[to]}
      </p>
      <button type="button" className="button small" onClick={onDismiss}>
        Dismiss<span className="visually-hidden"> the role change note</span>
      </button>
    </div>
  );
}
