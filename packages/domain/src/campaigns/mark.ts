import { Type } from '@sinclair/typebox';
import { notFound, type RecoveryCampaign, type UserRole } from '@retention/core';
import { inTransaction, type Db, type Transaction } from '@retention/db';
import { assertCan } from '../accounts/permissions.js';
import { OPERATOR, recordSecurityEvent, type Actor } from '../security-log.js';
import { IdInput, inputValidator } from '../validate.js';
import { loseCampaign, recoverCampaign, type LoseCampaignInput, type RecoverCampaignInput } from './close.js';

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
  /** When, for a replay of history (the demo seed): the close and its log record; now when omitted. */
  at?: Date;
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

/**
 * A closing action by a user (who must be allowed to close campaigns), with its security-log
 * record, in one transaction.
 */
async function markCampaign(
  db: Db,
  input: MarkCampaignInput,
  action: 'campaign.marked_recovered' | 'campaign.marked_lost',
  close: (
    trx: Transaction,
    campaign: { id: string; workspace_id: string; actor_id: string; at?: Date },
  ) => Promise<RecoveryCampaign>,
  details?: Record<string, unknown>,
): Promise<RecoveryCampaign> {
  const valid = validateMark({ id: input.id, workspace_id: input.workspace_id, user_id: input.actor.user_id });
  return inTransaction(db, async (trx) => {
    const label = await requireCloser(trx, valid.user_id, valid.workspace_id);
    const at = input.at !== undefined ? { at: input.at } : {};
    const campaign = await close(trx, {
      id: valid.id,
      workspace_id: valid.workspace_id,
      actor_id: valid.user_id,
      ...at,
    });
    await recordSecurityEvent(trx, {
      workspace_id: valid.workspace_id,
      action,
      actor: { ...input.actor, type: 'user', label: input.actor.label ?? label },
      target: { type: 'campaign', id: campaign.id, label: campaign.psp_invoice_id },
      ...(details && { details }),
      ...at,
    });
    return campaign;
  });
}

/** `in_flight → recovered` with `recovered_via: manual`; security log `campaign.marked_recovered`. */
export function markCampaignRecovered(db: Db, input: MarkCampaignInput): Promise<RecoveryCampaign> {
  return markCampaign(
    db,
    input,
    'campaign.marked_recovered',
    (trx, campaign) => recoverCampaign(trx, { ...campaign, via: 'manual' }),
    { recovered_via: 'manual' },
  );
}

/** `in_flight → lost`; event `recovery.lost` with `source: "dashboard"`; security log `campaign.marked_lost`. */
export function markCampaignLost(db: Db, input: MarkCampaignInput): Promise<RecoveryCampaign> {
  return markCampaign(db, input, 'campaign.marked_lost', (trx, campaign) =>
    loseCampaign(trx, { ...campaign, by: 'operator' }),
  );
}

/**
 * The operator CLI's closes that are someone's decision, not a stand-in for the processor:
 * `campaign recover --via manual`, `campaign recover` naming someone with `--actor`, and
 * `campaign lose --actor U`. Each is logged as the dashboard's mark is, in the close's
 * transaction, its actor the operator CLI with the person `--actor` names (as the CLI's
 * endpoint changes are logged), so that the Security log lists it and the campaign's page and
 * timeline say who closed it from the record (docs/operator-cli.md, "Campaign notes"). A close that
 * reports what the processor did (`--via retry`, `customer_update` or `spontaneous` with no one
 * named, `lose --processor`) writes no record, as the processor's own closes write none.
 */
export async function operatorRecoverCampaign(db: Db, input: RecoverCampaignInput): Promise<RecoveryCampaign> {
  if (input.via !== 'manual' && input.actor_id === undefined) return recoverCampaign(db, input);
  return inTransaction(db, async (trx) => {
    const campaign = await recoverCampaign(trx, input);
    await recordOperatorClose(trx, campaign, 'campaign.marked_recovered', input, { recovered_via: input.via });
    return campaign;
  });
}

/** `campaign lose`: logged when an operator names who marked it lost (operatorRecoverCampaign). */
export async function operatorLoseCampaign(db: Db, input: LoseCampaignInput): Promise<RecoveryCampaign> {
  if (input.by === 'processor') return loseCampaign(db, input);
  return inTransaction(db, async (trx) => {
    const campaign = await loseCampaign(trx, input);
    await recordOperatorClose(trx, campaign, 'campaign.marked_lost', input);
    return campaign;
  });
}

async function recordOperatorClose(
  trx: Transaction,
  campaign: RecoveryCampaign,
  action: 'campaign.marked_recovered' | 'campaign.marked_lost',
  input: { actor_id?: string; at?: Date },
  details?: Record<string, unknown>,
): Promise<void> {
  // The CLI acts for every workspace and names none: the campaign's is the record's.
  const { workspace_id } = await trx('recovery_campaigns')
    .where({ id: campaign.id })
    .first<{ workspace_id: string }>('workspace_id');
  await recordSecurityEvent(trx, {
    workspace_id,
    action,
    actor: { ...OPERATOR, user_id: input.actor_id ?? null },
    target: { type: 'campaign', id: campaign.id, label: campaign.psp_invoice_id },
    ...(details && { details }),
    ...(input.at !== undefined && { at: input.at }),
  });
}
