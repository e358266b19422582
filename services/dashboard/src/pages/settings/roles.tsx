import { useId } from 'react';
import type { Role } from '../../api/types.js';
import { ROLE_NAMES } from '../../labels.js';

/**
 * What each role may do (dashboard.md, "Who uses it", and dashboard-api.md's permissions): said
 * beside each role in the Invite dialog and in the confirmation of a role change.
 */
export const ROLE_SENTENCES: Record<Role, string> = {
  owner:
    'Owners can do everything, including connecting the payment processor, changing the workspace settings and managing other owners.',
  admin:
    'Admins can manage API tokens, webhook endpoints and campaigns, invite and manage admins and members, and read the security log, but not the payment processor or the workspace settings.',
  member:
    'Members can read the overview, campaigns, customers, cancel sessions and webhook endpoints with their delivery logs, but change nothing and see no API tokens or security log.',
};

// Defined with the other labels (a plain module, which the security log's words read too).
export { ROLE_NAMES };

export const withArticle = (role: Role) => (role === 'member' ? 'a member' : `an ${role}`);

/**
 * The roles to pick from, each a radio button described by what that role may do (its
 * `aria-describedby`), so the choice is made knowing it; a picker of bare role names said nothing
 * of what each allows. `error`: the server's refusal of the role, shown under the group.
 */
export function RoleChoice({
  roles,
  value,
  onChange,
  error,
}: {
  roles: Role[];
  value: Role;
  onChange: (role: Role) => void;
  error?: string | null;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  return (
    <fieldset className="role-choice" aria-describedby={error ? errorId : undefined}>
      <legend>Role</legend>
      {roles.map((role) => (
        <div className="role-option" key={role}>
          <label className="checkbox">
            <input
              type="radio"
              name={`${id}-role`}
              value={role}
              checked={value === role}
              aria-describedby={`${id}-${role}`}
              aria-invalid={error ? true : undefined}
              onChange={() => onChange(role)}
            />
            {ROLE_NAMES[role]}
          </label>
          <span className="hint" id={`${id}-${role}`}>
            {ROLE_SENTENCES[role]}
          </span>
        </div>
      ))}
      {error && (
        <span className="field-error" id={errorId} role="alert">
          {error}
        </span>
      )}
    </fieldset>
  );
}
