import { Type } from '@sinclair/typebox';
import { conflict, notFound, OneOf, toIsoMillis, USER_ROLES, type ServiceError, type UserRole } from '@retention/core';
import { inTransaction, pgErrorCode, type Db, type Queryable } from '@retention/db';
import { OPERATOR, recordSecurityEvent, type Actor } from '../security-log.js';
import { assertUuid, inputValidator, NameInput, withTidyName } from '../validate.js';
import { getWorkspace } from '../workspaces.js';
import { AccountEmailInput } from './account-email.js';
import { userActor, type AccountUser, type AccountUserRow } from './account-user.js';
import {
  createLink,
  findOpenLink,
  linkUrl,
  renewLink,
  revokeOpenLinks,
  spendLink,
  type LinkRow,
} from './one-time-links.js';
import { assertAcceptablePassword, hashPassword } from './passwords.js';
import {
  assertMayAssign,
  assertMayInviteAccount,
  assignableRoles,
  mayInviteAccount,
  mayRenewInvitation,
} from './permissions.js';
import { lastOwnerConflict, lockOwners, recordRoleChange } from './team.js';

/** Invitations: an owner or admin invites an address with a role; the link signs them up. */

export interface Invitation {
  id: string;
  object: 'invitation';
  email: string;
  role: UserRole;
  invited_by: { id: string; email: string; name: string | null } | null;
  created_at: string;
  expires_at: string;
}

const validateInvite = inputValidator(
  Type.Object({ email: AccountEmailInput(), role: OneOf(USER_ROLES) }, { additionalProperties: false }),
);

/**
 * `inviterRole` is the acting user's role (null for the operator CLI without --actor, who may
 * give any role). A fresh invitation revokes the address's earlier open ones. An inviter may
 * touch only what the role table lets them: the role they give, the role of the password-less
 * user the address already names (the operator makes owners that way, and accepting would give
 * that account to whoever holds the link), and the roles of the open invitations it replaces.
 */
export async function inviteMember(
  db: Db,
  input: { workspace_id: string; email: string; role: UserRole; inviter_role: UserRole | null; base_url: string },
  actor: Actor,
): Promise<{
  invitation: Invitation;
  invite_url: string;
  token: string;
  /** The address's pending invitation this one replaced (its link no longer works), if any. */
  replaced: ReplacedInvitation | null;
  /** The account without a password the address already names, which accepting takes over. */
  existing_account: ExistingAccount | null;
}> {
  const valid = validateInvite({ email: input.email, role: input.role });
  if (input.inviter_role) assertMayAssign(input.inviter_role, valid.role);
  await getWorkspace(db, input.workspace_id);
  return inTransaction(db, async (trx) => {
    await lockAddress(trx, input.workspace_id, valid.email);
    const member = await passwordlessAccountAt(trx, input.workspace_id, valid.email, actor);
    const open = await openInvitations(trx, input.workspace_id, valid.email);
    if (input.inviter_role) {
      if (member) assertMayInviteAccount(input.inviter_role, member);
      for (const { role } of open) assertMayAssign(input.inviter_role, role);
    }
    await revokeOpenLinks(trx, input.workspace_id, 'invitation', valid.email);
    const { token, link } = await createLink(trx, {
      kind: 'invitation',
      workspace_id: input.workspace_id,
      email: valid.email,
      role: valid.role,
      invited_by: actor.user_id ?? null,
    });
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'team.invited',
      actor,
      target: { type: 'invitation', id: link.id, label: valid.email },
      details: { role: valid.role },
    });
    return {
      ...(await sentLink(trx, link, token, input.base_url)),
      replaced: open[0] ?? null,
      existing_account: member ? { id: member.id, role: member.role } : null,
    };
  });
}

/**
 * The account an invitation's address already names: one without a password yet (made by the
 * operator, or never signed up). Accepting gives it a password and the invitation's role, so the
 * inviter is told its role as it is now, read in the same transaction: a Team page loaded earlier
 * may list it with another, changed since in another tab.
 */
interface ExistingAccount {
  id: string;
  role: UserRole;
}

/**
 * An address that already signs in here cannot be invited: said as a sentence, and an inviter
 * who typed their own address is told it is them (not that "they" are a member already).
 */
function alreadyAMember(member: Pick<AccountUserRow, 'id' | 'email' | 'role'>, inviter?: Actor): ServiceError {
  if (inviter?.user_id === member.id) {
    const article = member.role === 'member' ? 'a' : 'an';
    return conflict(`That is you: you are already ${article} ${member.role} of this workspace.`);
  }
  return conflict(`${member.email} is already a member of this workspace.`);
}

/**
 * Holds the address, in any case, for the transaction: two invitations to it at once (two tabs,
 * "Ann@Example.COM" and "ann@example.com") would each find no open invitation to replace, and
 * both stay open. The second now waits, then replaces the first, as one sent later does
 * (migration 0027's index keeps one open per address).
 */
async function lockAddress(trx: Queryable, workspaceId: string, email: string): Promise<void> {
  await trx.raw("SELECT pg_advisory_xact_lock(hashtext('invitation:' || ? || ':' || lower(?)))", [workspaceId, email]);
}

/** A pending invitation replaced by a new one to the same address. */
export interface ReplacedInvitation {
  id: string;
  role: UserRole;
  created_at: string;
}

/** The address's open invitations, newest first, held until the transaction replaces them. */
async function openInvitations(trx: Queryable, workspaceId: string, email: string): Promise<ReplacedInvitation[]> {
  const links = await trx<LinkRow>('account_links')
    .where({ workspace_id: workspaceId, kind: 'invitation' })
    .whereRaw('lower(email) = lower(?)', [email])
    .whereNull('used_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .forUpdate()
    .select('id', 'role', 'created_at');
  return links.map((link) => ({ id: link.id, role: link.role!, created_at: toIsoMillis(link.created_at) }));
}

type Inviter = Pick<AccountUserRow, 'id' | 'email' | 'name'>;

async function toInvitation(db: Queryable, link: LinkRow): Promise<Invitation> {
  const inviter = link.invited_by
    ? await db<AccountUserRow>('users').where({ id: link.invited_by }).first('id', 'email', 'name')
    : undefined;
  return invitationOf(link, inviter);
}

/** The invitation a link is, with its inviter's row as read (none: the operator's, or removed). */
function invitationOf(link: LinkRow, inviter: Inviter | undefined): Invitation {
  return {
    id: link.id,
    object: 'invitation',
    email: link.email,
    role: link.role!,
    invited_by: inviter ? { id: inviter.id, email: inviter.email, name: inviter.name } : null,
    created_at: toIsoMillis(link.created_at),
    expires_at: toIsoMillis(link.expires_at),
  };
}

/**
 * How long after its link expired an invitation is still listed (GET /team), marked expired,
 * with its New link or Resend and Cancel invitation as a pending one has them: as Stripe's team
 * page keeps an expired invitation in sight to send again. Before, it vanished from the list at
 * its expiry, and only a page loaded earlier could make it a new link. Long enough to notice that
 * someone never joined; after it, the invitation is no longer shown, and inviting the address
 * again is the way (which revokes it, as it revokes any open one).
 */
export const EXPIRED_INVITATION_LISTED_MS = 30 * 24 * 3_600_000;

/** An invitation as GET /team lists it: whether its link still works, and what the viewer may do. */
export interface ListedInvitation extends Invitation {
  /** `pending`: its link works until `expires_at`; `expired`: it no longer does (a new link would). */
  status: 'pending' | 'expired';
  /** Whether the viewer may make it a new link (New link, Resend): mayRenewInvitation. */
  can_make_new_link: boolean;
}

/**
 * The Team page's invitations: neither accepted nor cancelled (nor replaced), whose link works or
 * expired less than EXPIRED_INVITATION_LISTED_MS ago; the pending ones first, then the expired,
 * each newest first.
 */
export async function listInvitations(
  db: Queryable,
  workspaceId: string,
  viewer: { role: UserRole },
): Promise<ListedInvitation[]> {
  const now = new Date();
  const links = await db<LinkRow>('account_links')
    .where({ workspace_id: workspaceId, kind: 'invitation' })
    .whereNull('used_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', new Date(now.getTime() - EXPIRED_INVITATION_LISTED_MS))
    .orderByRaw('expires_at > ? DESC, created_at DESC', [now])
    .limit(500);
  // The accounts the addresses already name (the operator's, without a password), in one read.
  const accounts = links.length
    ? await db<AccountUserRow>('users')
        .where({ workspace_id: workspaceId })
        .whereIn(
          db.raw('lower(email)') as never,
          links.map((link) => link.email.toLowerCase()),
        )
        .select('email', 'role', 'highest_former_role', 'password_hash')
    : [];
  const accountOf = (email: string) =>
    accounts.find((account) => account.email.toLowerCase() === email.toLowerCase()) ?? null;
  // Their inviters, in one read too, rather than one a row (toInvitation).
  const inviterIds = [...new Set(links.flatMap((link) => (link.invited_by ? [link.invited_by] : [])))];
  const inviters = inviterIds.length
    ? await db<AccountUserRow>('users').whereIn('id', inviterIds).select('id', 'email', 'name')
    : [];
  const inviterOf = (link: LinkRow) => inviters.find((inviter) => inviter.id === link.invited_by);
  return links.map((link) => ({
    ...invitationOf(link, inviterOf(link)),
    status: link.expires_at > now ? ('pending' as const) : ('expired' as const),
    can_make_new_link: mayRenewInvitation(viewer.role, link.role!, accountOf(link.email)),
  }));
}

const noLongerPending = () => notFound('This invitation is no longer pending: it was accepted or canceled.');

/**
 * The account the address already names in this workspace, if any: one that signs in here
 * (has a password) is refused as a member already (409); one without a password (made by the
 * operator) is returned, for the inviter's role to be checked against every role it has held.
 */
async function passwordlessAccountAt(
  trx: Queryable,
  workspaceId: string,
  email: string,
  actor: Actor,
): Promise<AccountUserRow | undefined> {
  const account = await trx<AccountUserRow>('users')
    .where({ workspace_id: workspaceId })
    .whereRaw('lower(email) = lower(?)', [email])
    .first();
  if (account?.password_hash) throw alreadyAMember(account, actor);
  return account;
}

/** An invitation's link as made or renewed: the invitation, its URL and its token. */
async function sentLink(
  trx: Queryable,
  link: LinkRow,
  token: string,
  baseUrl: string,
): Promise<{ invitation: Invitation; invite_url: string; token: string }> {
  return { invitation: await toInvitation(trx, link), invite_url: linkUrl(baseUrl, 'invitation', token), token };
}

/**
 * A pending invitation of the workspace (not accepted, not cancelled; expired or not), for a
 * route that must know its address before it acts (Resend counts an email to it first). Another
 * workspace's reads as one accepted or cancelled: not found.
 */
export async function findPendingInvitation(db: Queryable, workspaceId: string, id: string): Promise<Invitation> {
  assertUuid(id);
  return toInvitation(db, await pendingInvitationRow(db, workspaceId, id));
}

/**
 * A pending invitation's row in this workspace (neither used nor revoked), locked for the
 * transaction's change when `lock` is set; 404 in words when there is none: the page that asks
 * listed it earlier, and it was accepted or cancelled since (in another tab).
 */
async function pendingInvitationRow(db: Queryable, workspaceId: string, id: string, lock = false): Promise<LinkRow> {
  const query = db<LinkRow>('account_links')
    .where({ id, workspace_id: workspaceId, kind: 'invitation' })
    .whereNull('used_at')
    .whereNull('revoked_at');
  const link = await (lock ? query.forUpdate() : query).first();
  if (!link) throw noLongerPending();
  return link;
}

/**
 * New link (no SMTP_URL) and Resend (SMTP_URL) on the Team page: a pending invitation gets a new
 * one-time link, good for a whole new 7 days, in place (its id, address, role and sending date
 * stay); the old link stops working and then reads as any revoked link does ("not valid"). One
 * that has expired may be renewed too: GET /team lists it, marked expired, for 30 days
 * (EXPIRED_INVITATION_LISTED_MS), and this is how it is sent again.
 *
 * Allowed to whoever may send that invitation now (mayRenewInvitation): the role table for its
 * role, and, for the address of an account the operator made without a password, every role
 * that account has held; an address that signs in here already is 409, as inviting it is. The
 * new link is its maker's: they become its `invited_by`, so that, removed or moved down, their
 * link is revoked with the others they made (revokeInvitationsSentBy), and accepting it checks
 * their role (inviterActor). Only a dashboard user makes one.
 */
export async function renewInvitationLink(
  db: Db,
  input: { workspace_id: string; id: string; actor_role: UserRole; base_url: string },
  actor: Actor,
): Promise<{ invitation: Invitation; invite_url: string; token: string }> {
  assertUuid(input.id);
  if (actor.type !== 'user' || !actor.user_id) throw new Error('a new invitation link is made by a dashboard user');
  return inTransaction(db, async (trx) => {
    const link = await pendingInvitationRow(trx, input.workspace_id, input.id, true);
    assertMayAssign(input.actor_role, link.role!);
    const account = await passwordlessAccountAt(trx, input.workspace_id, link.email, actor);
    if (account) assertMayInviteAccount(input.actor_role, account);
    const renewed = await renewLink(trx, link, { invited_by: actor.user_id });
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'team.invitation_link_renewed',
      actor,
      target: { type: 'invitation', id: link.id, label: link.email },
      details: { role: link.role },
    });
    return sentLink(trx, renewed.link, renewed.token, input.base_url);
  });
}

export async function revokeInvitation(
  db: Db,
  input: { workspace_id: string; id: string; actor_role: UserRole | null },
  actor: Actor,
): Promise<void> {
  assertUuid(input.id);
  await inTransaction(db, async (trx) => {
    const link = await pendingInvitationRow(trx, input.workspace_id, input.id, true);
    if (input.actor_role) assertMayAssign(input.actor_role, link.role!);
    await trx('account_links').where({ id: link.id }).update({ revoked_at: trx.fn.now() });
    await recordSecurityEvent(trx, {
      workspace_id: input.workspace_id,
      action: 'team.invitation_revoked',
      actor,
      target: { type: 'invitation', id: link.id, label: link.email },
    });
  });
}

/** What the invitation page shows before the person accepts. */
export async function describeInvitation(
  db: Queryable,
  token: string,
): Promise<{ email: string; role: UserRole; workspace_name: string; expires_at: string }> {
  const link = await findOpenLink(db, 'invitation', token);
  const workspace = await getWorkspace(db, link.workspace_id);
  return {
    email: link.email,
    role: link.role!,
    workspace_name: workspace.name,
    expires_at: toIsoMillis(link.expires_at),
  };
}

const validateAccept = inputValidator(
  Type.Object({ name: NameInput(200), password: Type.String() }, { additionalProperties: false }),
);

/**
 * Spends the link and makes the account (or gives a password to the user the operator made
 * without one, and the invitation's role: a change of role recorded as the Team page records
 * one, in the inviter's name). The caller signs the new user in.
 */
export async function acceptInvitation(
  db: Db,
  token: string,
  input: { name: string; password: string },
  request: { ip?: string | null; user_agent?: string | null } = {},
): Promise<AccountUserRow> {
  const valid = validateAccept(withTidyName(input));
  const password = assertAcceptablePassword(valid.password);
  // Looked up before the memory-hard hash, so that a made-up token costs an indexed read, not
  // 19 MiB and tens of milliseconds; looked up again below, locked, to be spent.
  await findOpenLink(db, 'invitation', token);
  const hash = await hashPassword(password);
  try {
    return await inTransaction(db, async (trx) => {
      const link = await findOpenLink(trx, 'invitation', token, true);
      // Owners first, then the account, in the order the team's changes lock them.
      const owners = await lockOwners(trx, link.workspace_id);
      const existing = await trx<AccountUserRow>('users')
        .where({ workspace_id: link.workspace_id })
        .whereRaw('lower(email) = lower(?)', [link.email])
        .forUpdate()
        .first();
      if (existing?.password_hash) throw alreadyAMember(existing);
      // Who gave the role, read once: checked now, and named by the role change below.
      const inviter = existing ? await inviterActor(trx, link) : null;
      if (existing) await assertInviterStillMayGive(trx, link, existing, inviter!);
      if (existing?.role === 'owner' && link.role !== 'owner' && owners.length <= 1) throw lastOwnerConflict();
      const [user] = existing
        ? await trx<AccountUserRow>('users')
            .where({ id: existing.id })
            .update({ name: valid.name, password_hash: hash, role: link.role! })
            .returning('*')
        : await trx<AccountUserRow>('users')
            .insert({
              workspace_id: link.workspace_id,
              email: link.email,
              role: link.role!,
              name: valid.name,
              password_hash: hash,
            })
            .returning('*');
      await spendLink(trx, link.id);
      await recordSecurityEvent(trx, {
        workspace_id: link.workspace_id,
        action: 'team.joined',
        actor: userActor(user!, request),
        target: { type: 'user', id: user!.id, label: user!.email },
        details: { role: link.role, invitation_id: link.id },
      });
      if (existing && existing.role !== link.role) {
        await recordRoleChange(trx, existing, link.role!, inviter!);
      }
      return user as AccountUserRow;
    });
  } catch (error) {
    // The address holds a password in another workspace (one address, one workspace). Not said
    // in words: without SMTP_URL whoever accepts may be the inviter, not the address's owner
    // (docs/dashboard-api.md, "Without email, in a deployment of several workspaces").
    if (pgErrorCode(error) === '23505') {
      throw conflict('This email address cannot accept this invitation; ask whoever runs this service.');
    }
    throw error;
  }
}

const noLongerAcceptable = () =>
  conflict('This invitation can no longer be accepted: ask an owner of the workspace for a new one.');

/**
 * An invitation to the address of a password-less account hands that account over, so the rule
 * it was sent under (assertMayInviteAccount) is checked again as it is accepted: the account may
 * have been made an owner since, or made by the operator after the invitation was sent. The
 * inviter's present role is what counts (one moved down has had their invitations revoked). The
 * operator's invitations, with or without --actor, are the operator's to give.
 */
async function assertInviterStillMayGive(
  trx: Queryable,
  link: LinkRow,
  account: AccountUserRow,
  inviter: Actor,
): Promise<void> {
  if (inviter.type !== 'user' || !inviter.user_id) return;
  const row = await trx<AccountUserRow>('users').where({ id: inviter.user_id }).first('role');
  if (row && mayInviteAccount(row.role, account) && assignableRoles(row.role).includes(link.role!)) return;
  // Not said why: whoever holds the link may be the inviter.
  throw noLongerAcceptable();
}

/**
 * Who gave the role an accepted invitation gives: whoever made its present link. That is its
 * inviter, as the invitation's own record names them (a dashboard user, or the operator CLI with
 * or without --actor), until someone makes it a new link (New link, Resend: renewInvitationLink),
 * who is a dashboard user and became its `invited_by`. They chose or re-gave the role, as whoever
 * changes it on the Team page does; the person accepting only takes what was offered. They make
 * no request now, so no client address or user agent goes with it.
 */
async function inviterActor(trx: Queryable, link: LinkRow): Promise<Actor> {
  const recordOf = (action: 'team.invited' | 'team.invitation_link_renewed') =>
    trx('security_events')
      .where({ workspace_id: link.workspace_id, action, target_type: 'invitation', target_id: link.id })
      .first<{ actor_type: Actor['type']; actor_user_id: string | null; actor_label: string | null } | undefined>(
        'actor_type',
        'actor_user_id',
        'actor_label',
      );
  const inviter = link.invited_by
    ? await trx<AccountUserRow>('users').where({ id: link.invited_by }).first('id', 'email')
    : undefined;
  if (await recordOf('team.invitation_link_renewed')) {
    // Its maker, removed, would have had the link revoked with them: never the operator's to give.
    if (!inviter) throw noLongerAcceptable();
    return userActor(inviter);
  }
  const invited = await recordOf('team.invited');
  if (invited) return { type: invited.actor_type, user_id: invited.actor_user_id, label: invited.actor_label };
  // Every invitation is recorded when it is made; should that record be gone, its inviter still is.
  return inviter ? userActor(inviter) : OPERATOR;
}

export type { AccountUser };
