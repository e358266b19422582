import { Type } from '@sinclair/typebox';
import { notFound, type RecoveryCampaign, type UserRole } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { assertCan } from '../accounts/permissions.js';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { IdInput, inputValidator } from '../validate.js';
import { loseCampaign, recoverCampaign } from './close.js';

/**
 * The dashboard's Mark recovered and Mark lost: the same closing actions as the operator
 * CLI's `campaign recover --via manual` and `campaign lose --actor U` (close.ts: same lock,
 * same conflict message, same webhook event), plus the security log record, all in one
 * transaction. Only owners and admins may close a campaign by hand (`manage_campaigns` in
 * accounts/permissions.ts); the check is here, beside the action, so no edge can skip it.
 */

export interface MarkCampaignInput {
  id: string;
  workspace_id: string;
  /** The signed-in user, with the request's address and user agent for the log. */
  actor: Actor & { user_id: string };
}

const validateMark = inputValidator(
  Type.Object({ id: IdInput(), workspace_id: IdInput(), user_id: IdInput() }, { additionalProperties: false }),
);

async function requireCloser(db: Db, userId: string, workspaceId: string): Promise<string> {
  const user = await db('users')
    .where({ id: userId, workspace_id: workspaceId })
    .first<{ role: UserRole; email: string } | undefined>('role', 'email');
  if (!user) throw notFound(`No user with id ${userId} in this workspace`);
  assertCan(user.role, 'manage_campaigns');
  return user.email;
}

/** `in_flight → recovered` with `recovered_via: manual`; security log `campaign.marked_recovered`. */
export async function markCampaignRecovered(db: Db, input: MarkCampaignInput): Promise<RecoveryCampaign> {
  const valid = validateMark({ id: input.id, workspace_id: input.workspace_id, user_id: input.actor.user_id });
  return inTransaction(db, async (trx) => {
    const label = await requireCloser(trx, valid.user_id, valid.workspace_id);
    const campaign = await recoverCampaign(trx, {
      id: valid.id,
      workspace_id: valid.workspace_id,
      via: 'manual',
      actor_id: valid.user_id,
    });
    await recordSecurityEvent(trx, {
      workspace_id: valid.workspace_id,
      action: 'campaign.marked_recovered',
      actor: { ...input.actor, type: 'user', label: input.actor.label ?? label },
      target: { type: 'campaign', id: campaign.id, label: campaign.psp_invoice_id },
      details: { recovered_via: 'manual' },
    });
    return campaign;
  });
}

/** `in_flight → lost`; event `recovery.lost` with `source: "dashboard"`; security log `campaign.marked_lost`. */
export async function markCampaignLost(db: Db, input: MarkCampaignInput): Promise<RecoveryCampaign> {
  const valid = validateMark({ id: input.id, workspace_id: input.workspace_id, user_id: input.actor.user_id });
  return inTransaction(db, async (trx) => {
    const label = await requireCloser(trx, valid.user_id, valid.workspace_id);
    const campaign = await loseCampaign(trx, {
      id: valid.id,
      workspace_id: valid.workspace_id,
      by: 'operator',
      actor_id: valid.user_id,
    });
    await recordSecurityEvent(trx, {
      workspace_id: valid.workspace_id,
      action: 'campaign.marked_lost',
      actor: { ...input.actor, type: 'user', label: input.actor.label ?? label },
      target: { type: 'campaign', id: campaign.id, label: campaign.psp_invoice_id },
    });
    return campaign;
  });
}
