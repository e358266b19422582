import { Router } from 'express';
import { inTransaction, type Queryable } from '@retention/db';
import {
  assertMayMakeResetLinkFor,
  changeMemberRole,
  createResetLink,
  findPendingInvitation,
  findWorkspaceUser,
  higherRole,
  type AccountUserRow,
  getWorkspace,
  inviteMember,
  listMembers,
  listInvitations,
  mayMakeResetLinkFor,
  removeMember,
  renewInvitationLink,
  revokeInvitation,
} from '@retention/domain';
import { forbidden, invalidField, type UserRole } from '@retention/core';
import { actorOf, allow, signedIn, type DashboardContext } from './context.js';
import { bodyOf } from './json-body.js';
import { sessionsChanged } from './session-change.js';

/** Team: anyone reads it; owners and admins change it, within the role table's limits. */
export function teamRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;

  /** Emails an invitation's link when this service sends email; whether it was sent. */
  const emailInvitation = async (
    workspaceId: string,
    { invitation, invite_url }: { invitation: { email: string; role: UserRole }; invite_url: string },
  ): Promise<boolean> =>
    context.mailer
      ? context.mailer.sendInvitation(invitation.email, {
          workspace_name: (await getWorkspace(db, workspaceId)).name,
          role: invitation.role,
          invite_url,
        })
      : false;

  router.get('/team', async (_req, res) => {
    const { user, workspaceId } = signedIn(res);
    // `emails`: whether this service sends email (SMTP_URL), as GET /password-reset says it, so
    // that an invitation's action reads Resend (emailed) or New link (shown to copy). The
    // invitations are the pending ones and those expired in the last 30 days (listInvitations).
    res.json({
      members: await listMembers(db, workspaceId, user, context.mailer !== null),
      invitations: await listInvitations(db, workspaceId, user),
      emails: context.mailer !== null,
    });
  });

  router.post('/team/invitations', allow('manage_team'), async (req, res) => {
    const body = bodyOf(req.body, ['email', 'role']);
    const { user, workspaceId } = signedIn(res);
    const invite = () =>
      inviteMember(
        db,
        {
          workspace_id: workspaceId,
          email: body.email as string,
          role: body.role as UserRole,
          inviter_role: user.role,
          base_url: context.config.baseUrl,
        },
        actorOf(req, res),
      );
    const result = context.mailer
      ? await context.teamMailLimit.admitWhile(workspaceId, body.email, invite)
      : await invite();
    const emailed = await emailInvitation(workspaceId, result);
    // The link goes to the address, or, with no email to send it, to the inviter to pass on:
    // never both, so an inviter cannot accept in the invitee's name what was emailed to them.
    // `replaced`: the pending invitation to that address this one replaced (its link no longer
    // works), or null, so the inviter is told rather than the invitee finding a dead link.
    // `existing_account`: the account without a password the address already names, with its
    // role now, or null: accepting gives it a password and this role, so the inviter is told from
    // this answer, not from a Team page listed before another tab changed it.
    res.status(201).json({
      invitation: result.invitation,
      emailed,
      ...(!emailed && { invite_url: result.invite_url }),
      replaced: result.replaced,
      existing_account: result.existing_account,
    });
  });

  /**
   * New link (no SMTP_URL) or Resend (SMTP_URL): the invitation, pending or expired, gets a new
   * link for a fresh 7 days and its old one stops working (renewInvitationLink). Sent and shown as
   * a new invitation's is, and counted as one against the Team page's email limits.
   */
  router.post('/team/invitations/:id/new-link', allow('manage_team'), async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    const id = String(req.params.id);
    const renew = () =>
      renewInvitationLink(
        db,
        { workspace_id: workspaceId, id, actor_role: user.role, base_url: context.config.baseUrl },
        actorOf(req, res),
      );
    // The email is counted before the transaction opens, as for a reset link: the invitation is
    // read first for its address (an unknown one is 404 and counts nothing), and again inside it.
    const result = context.mailer
      ? await context.teamMailLimit.admitWhile(
          workspaceId,
          (await findPendingInvitation(db, workspaceId, id)).email,
          renew,
        )
      : await renew();
    const emailed = await emailInvitation(workspaceId, result);
    // As for a new invitation: to the address, or, with no email sent, to whoever asked, never both.
    res.json({ invitation: result.invitation, emailed, ...(!emailed && { invite_url: result.invite_url }) });
  });

  router.delete('/team/invitations/:id', allow('manage_team'), async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    await revokeInvitation(
      db,
      { workspace_id: workspaceId, id: String(req.params.id), actor_role: user.role },
      actorOf(req, res),
    );
    res.status(204).end();
  });

  router.patch('/team/members/:id', allow('manage_team'), async (req, res) => {
    const { role } = bodyOf(req.body, ['role']);
    const { user, workspaceId } = signedIn(res);
    const changed = await changeMemberRole(
      db,
      { workspace_id: workspaceId, user_id: String(req.params.id), role: role as UserRole, actor_role: user.role },
      actorOf(req, res),
    );
    // The role is part of the cached look-up of their sessions: the next request is under the new one.
    await sessionsChanged(context);
    res.json({ user: changed });
  });

  router.delete('/team/members/:id', allow('manage_team'), async (req, res) => {
    // `revoke_tokens`: also revoke the active API tokens they made, in the same transaction;
    // by default those keep working (they belong to the workspace).
    const { revoke_tokens: revokeTokens = false } = bodyOf(req.body, ['revoke_tokens']);
    if (typeof revokeTokens !== 'boolean') throw invalidField('revoke_tokens', 'must be true or false');
    const { user, workspaceId } = signedIn(res);
    const removed = await removeMember(
      db,
      { workspace_id: workspaceId, user_id: String(req.params.id), actor_role: user.role, revoke_tokens: revokeTokens },
      actorOf(req, res),
    );
    // Their browsers are no longer trusted: should the address join again, none is exempt.
    await sessionsChanged(context, { forgetDevicesOf: removed.user.email });
    if (removed.revoked_tokens > 0) await context.announceTokenChange();
    res.status(204).end();
  });

  router.post('/team/members/:id/reset-link', allow('manage_team'), async (req, res) => {
    const { user, workspaceId } = signedIn(res);
    // A link shown to copy is the account itself: only for someone whose every role here, present
    // and former, is below one's own, never for oneself (mayMakeResetLinkFor, which GET /team
    // answers too).
    const targetFor = async (q: Queryable) => {
      const target = await findWorkspaceUser(q, workspaceId, String(req.params.id));
      assertMayMakeResetLinkFor(user.role, target.role);
      if (!mayMakeResetLinkFor(user, target, context.mailer !== null)) throw forbidden(copyRefusal(user, target));
      return target;
    };
    const makeLink = () =>
      inTransaction(db, async (trx) => {
        const target = await targetFor(trx);
        return { target, link: await createResetLink(trx, target, context.config.baseUrl, actorOf(req, res)) };
      });
    // The email is counted before the transaction opens, to hold no pooled connection with BEGIN
    // open across a Redis round trip; the member is checked first, and again inside it.
    const { target, link } = context.mailer
      ? await context.teamMailLimit.admitWhile(workspaceId, (await targetFor(db)).email, makeLink)
      : await makeLink();
    // As for invitations: emailed to the member when it can be, shown to copy only when not,
    // and then only when it could have been made without email.
    const emailed = context.mailer ? await context.mailer.sendPasswordReset(target.email, link.reset_url) : false;
    res.json({
      expires_at: link.expires_at,
      emailed,
      ...(!emailed && mayMakeResetLinkFor(user, target, false) && { reset_url: link.reset_url }),
    });
  });

  return router;
}

/**
 * Why a reset link for `target` may not be shown to `maker` to copy (no SMTP_URL), and whom to
 * ask: an owner when one outranks every role the account has held, else only the operator (the
 * CLI's `user reset-link`), since no role is above owner. For oneself, the Account page.
 */
function copyRefusal(maker: { id: string; role: UserRole }, target: AccountUserRow): string {
  const held = higherRole(target.role, target.highest_former_role);
  const ask =
    held === 'owner' || maker.role === 'owner'
      ? 'Ask whoever runs this service for one (the CLI’s user reset-link makes it)'
      : 'Ask an owner';
  if (target.id === maker.id) {
    const forgotten =
      ask === 'Ask an owner' ? 'ask an owner for a reset link' : 'ask whoever runs this service for one';
    return (
      'Change your own password on the Account page, which asks for the current one: this service sends no email, ' +
      `and a reset link shown here would let anyone at this screen set a password without it. If you have forgotten it, ${forgotten}.`
    );
  }
  const rule = 'This service sends no email, so a reset link is shown to copy, and it is the account itself';
  if (held === target.role) {
    return `${rule}: you may make one only for someone whose role is below yours. ${ask}, or have email set up.`;
  }
  // Their role now is below the maker's; one they held before is not.
  const was = held === 'admin' ? 'an admin' : 'an owner';
  const who = held === 'admin' ? 'only an owner may make one for them' : 'no one here may make one for them';
  return `${target.email} was ${was} here before. ${rule}: ${who}. ${ask}, or have email set up.`;
}
