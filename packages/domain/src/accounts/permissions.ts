import { forbidden, type UserRole } from '@retention/core';

/**
 * The role table of docs/dashboard-api.md, in one place: the dashboard API's guards and
 * GET /me's `permissions` both read it, so the page never re-derives a rule.
 */
export const PERMISSIONS = [
  'manage_campaigns',
  'read_tokens',
  'manage_tokens',
  'manage_webhooks',
  'manage_team',
  'manage_workspace',
  'manage_processor',
  'read_security_log',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const GRANTS: Record<UserRole, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: ['manage_campaigns', 'read_tokens', 'manage_tokens', 'manage_webhooks', 'manage_team', 'read_security_log'],
  member: [],
};

/** The roles each role may give (invite as, change to, and remove people holding). */
const ASSIGNABLE: Record<UserRole, readonly UserRole[]> = {
  owner: ['owner', 'admin', 'member'],
  admin: ['admin', 'member'],
  member: [],
};

export function can(role: UserRole, permission: Permission): boolean {
  return GRANTS[role].includes(permission);
}

export function assignableRoles(role: UserRole): UserRole[] {
  return [...ASSIGNABLE[role]];
}

const RANK: Record<UserRole, number> = { owner: 2, admin: 1, member: 0 };

/**
 * The roles of the people `role` may make a password-reset link for. Emailed, the link goes
 * to its owner: as for every other change, the roles it may assign. Shown to copy (no email),
 * the link is the account itself: only for roles below its own, so that no admin can sign in
 * as another admin, nor an owner as another owner.
 */
export function resetLinkRoles(role: UserRole, emailed: boolean): UserRole[] {
  return ASSIGNABLE[role].filter((target) => emailed || RANK[target] < RANK[role]);
}

/** The higher of two roles; `null` is no role at all. */
export function higherRole(a: UserRole, b: UserRole | null): UserRole {
  return b !== null && RANK[b] > RANK[a] ? b : a;
}

/**
 * Whether someone of `makerRole` may be shown a reset link to copy for `target` (someone else:
 * one's own is never shown to copy, mayMakeResetLinkFor). The link is the account itself, so the maker must outrank every
 * role the account has held here, not only its present one: else an admin could move a fellow
 * admin down to member, copy the link, set the password and move them back up, signed in as them
 * (docs/dashboard-api.md, "A reset link to copy, and a role held before").
 */
export function mayCopyResetLinkFor(
  makerRole: UserRole,
  target: { role: UserRole; highest_former_role: UserRole | null },
): boolean {
  return RANK[makerRole] > RANK[higherRole(target.role, target.highest_former_role)];
}

/** GET /me's `permissions`. */
export function permissionsFor(role: UserRole): Record<Permission, boolean> & { assignable_roles: UserRole[] } {
  const flags = Object.fromEntries(PERMISSIONS.map((permission) => [permission, can(role, permission)]));
  return { ...(flags as Record<Permission, boolean>), assignable_roles: assignableRoles(role) };
}

/** What each permission lets one do, after "can" in a refusal (no code or role id shown). */
const DOES: Record<Permission, string> = {
  manage_campaigns: 'change recovery campaigns',
  read_tokens: 'see the API tokens',
  manage_tokens: 'manage API tokens',
  manage_webhooks: 'manage webhook endpoints',
  manage_team: 'manage the team',
  manage_workspace: 'change the workspace settings',
  manage_processor: 'change the payment processor connection',
  read_security_log: 'read the security log',
};
const PLURAL: Record<UserRole, string> = { owner: 'owners', admin: 'admins', member: 'members' };

/**
 * What a permission lets one read, where a read needs it: an admin who only opened the Processor
 * page was told owners may "change" it.
 */
const READS: Partial<Record<Permission, string>> = {
  manage_processor: 'see the payment processor connection',
};

/** "Only owners and admins can manage API tokens.": the roles read off the role table. */
function refusalFor(permission: Permission, reading: boolean): string {
  const does = (reading && READS[permission]) || DOES[permission];
  return `Only ${rolesInWords((Object.keys(GRANTS) as UserRole[]).filter((role) => can(role, permission)))} can ${does}.`;
}

/** `reading`: the request only reads (a GET), said so in the refusal where the words differ. */
export function assertCan(role: UserRole, permission: Permission, reading = false): void {
  if (!can(role, permission)) throw forbidden(refusalFor(permission, reading));
}

/** "owners and admins": the roles listed, as a refusal names them. */
function rolesInWords(roles: readonly UserRole[]): string {
  const words = roles.map((role) => PLURAL[role]);
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} and ${words.at(-1)}` : (words[0] ?? 'nobody');
}

const ONE: Record<UserRole, string> = { owner: 'an owner', admin: 'an admin', member: 'a member' };

/** "owners and admins": whoever may give `role`. */
const giversOf = (role: UserRole) =>
  rolesInWords((Object.keys(ASSIGNABLE) as UserRole[]).filter((r) => ASSIGNABLE[r].includes(role)));

/** Refuses, in the role table's words, an act on someone of `role` that `actorRole` may not assign. */
function refuseUnlessAssignable(actorRole: UserRole, role: UserRole, act: string): void {
  if (!ASSIGNABLE[actorRole].includes(role)) throw forbidden(`Only ${giversOf(role)} can ${act}.`);
}

/** An admin may touch only admins and members, and never make an owner. */
export function assertMayAssign(actorRole: UserRole, role: UserRole): void {
  refuseUnlessAssignable(actorRole, role, `give the ${role} role, or change or remove ${ONE[role]}`);
}

/**
 * Whether someone of `inviterRole` may invite the address of an account the operator made
 * without a password. Accepting gives whoever holds the link that account, so the inviter must
 * be able to give every role it has held here (the role table's ASSIGNABLE), not only its
 * present one, as a copied reset link is judged on every role held (mayCopyResetLinkFor, which
 * asks for a role above them: an invitation is the role table's). Checked when the invitation is sent
 * and again when it is accepted, since the account's role may change in between.
 */
export function mayInviteAccount(
  inviterRole: UserRole,
  account: { role: UserRole; highest_former_role: UserRole | null },
): boolean {
  return ASSIGNABLE[inviterRole].includes(higherRole(account.role, account.highest_former_role));
}

/** mayInviteAccount, refused in words: the role table's, or the role the account held before. */
export function assertMayInviteAccount(
  inviterRole: UserRole,
  account: { email: string; role: UserRole; highest_former_role: UserRole | null },
): void {
  assertMayAssign(inviterRole, account.role);
  if (!mayInviteAccount(inviterRole, account)) {
    const held = higherRole(account.role, account.highest_former_role);
    throw forbidden(
      `${account.email} has been ${ONE[held]} of this workspace: only ${giversOf(held)} can invite that address.`,
    );
  }
}

/**
 * Whether someone of `actorRole` may make a new link for a pending invitation of `role` (New
 * link, Resend): the rule it was sent under, since whoever makes the link hands it out. The role
 * table's, and, when its address names an account the operator made without a password
 * (`account`), mayInviteAccount; an address whose account has a password cannot be invited at all.
 * The route's check (renewInvitationLink) and GET /team's `can_make_new_link` both read it.
 */
export function mayRenewInvitation(
  actorRole: UserRole,
  role: UserRole,
  account: { role: UserRole; highest_former_role: UserRole | null; password_hash: string | null } | null,
): boolean {
  if (!ASSIGNABLE[actorRole].includes(role)) return false;
  return !account || (account.password_hash === null && mayInviteAccount(actorRole, account));
}

/**
 * Whether `maker` may make a password-reset link for `target` on the Team page: someone whose
 * role they may give (the role table), and, when it would be shown to copy rather than emailed,
 * one that never held a role at or above theirs (mayCopyResetLinkFor). Their own account only by
 * email: a link to copy for oneself would set a new password without the current one that the
 * Account page asks for, so whoever sits at a signed-in owner's screen could take the account
 * and sign its holder out. The route's guard and GET /team's `can_make_reset_link` both read it,
 * so the page offers Reset link exactly where it works.
 */
export function mayMakeResetLinkFor(
  maker: { id: string; role: UserRole },
  target: { id: string; role: UserRole; highest_former_role: UserRole | null },
  emailed: boolean,
): boolean {
  if (!ASSIGNABLE[maker.role].includes(target.role)) return false;
  if (target.id === maker.id) return emailed;
  return emailed || mayCopyResetLinkFor(maker.role, target);
}

/**
 * The role `target` held here before that alone keeps `maker` from making them a reset link
 * (mayMakeResetLinkFor): without email, their present role is below the maker's, but a former one
 * is not (docs/dashboard-api.md, "A reset link to copy, and a role held before"). GET /team gives
 * it on each person, so the Team page can say why their row has no Reset link and who can make
 * one. Null when the maker may make one, or when the present role already keeps it from them (the
 * row shows that role), or is not theirs to manage at all.
 */
export function formerRoleWithholdingResetLink(
  maker: { id: string; role: UserRole },
  target: { id: string; role: UserRole; highest_former_role: UserRole | null },
  emailed: boolean,
): 'admin' | 'owner' | null {
  if (mayMakeResetLinkFor(maker, target, emailed)) return null;
  const byPresentRoleAlone = mayMakeResetLinkFor(maker, { ...target, highest_former_role: null }, emailed);
  const former = target.highest_former_role;
  return byPresentRoleAlone && former !== null && former !== 'member' ? former : null;
}

/** Why `actorRole` may not make a reset link for someone of `role` at all: the role table's words. */
export function assertMayMakeResetLinkFor(actorRole: UserRole, role: UserRole): void {
  refuseUnlessAssignable(actorRole, role, `make a reset link for ${ONE[role]}`);
}
