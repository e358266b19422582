import { Type } from '@sinclair/typebox';
import {
  closingFields,
  conflict,
  invalidField,
  notFound,
  OneOf,
  RECOVERED_VIA,
  type EventData,
  type RecoveredVia,
  type RecoveryCampaign,
} from '@retention/core';
import { inTransaction, toCampaign, type CampaignRow, type Db, type Transaction } from '@retention/db';
import { recordEvent } from '../outbox.js';
import { requireActor } from '../lookups.js';
import { assertPastDate, IdInput, inputValidator } from '../validate.js';
import { campaignEventFields } from './event-data.js';

/**
 * The two ways an operator or the processor closes an open campaign: recovered or lost.
 * Each locks the campaign row first, so of two simultaneous calls exactly one finds it
 * `in_flight`; the other waits for that commit, then finds it closed and is refused.
 */

type LockedCampaign = CampaignRow & { customer_email: string };

/**
 * The campaign, and the workspace it must be in: a dashboard passes its own; the operator
 * CLI, which acts for every workspace, passes none.
 */
interface CampaignReference {
  id: string;
  workspace_id?: string;
}

/**
 * The moment of the close (its `closed_at` and its event), for a replay of history (the demo
 * seed) or a close the processor reported (Stripe's time of it, bounded by the applier:
 * docs/processor.md, "Times"); now when omitted. Not in the future, nor before the failure.
 */
interface ClosingTime {
  at?: Date;
}

export interface RecoverCampaignInput extends CampaignReference, ClosingTime {
  via: RecoveredVia;
  /** The operator who marked it recovered, if one did. */
  actor_id?: string;
}

export type LoseCampaignInput = CampaignReference &
  ClosingTime &
  (
    | { by: 'operator'; actor_id: string } // marked lost from the dashboard: `source: "dashboard"`
    | { by: 'processor' } // the processor gave up: neither `reason` nor `source`
  );

const validateRecover = inputValidator(
  Type.Object(
    {
      id: IdInput(),
      workspace_id: Type.Optional(IdInput()),
      via: OneOf(RECOVERED_VIA),
      actor_id: Type.Optional(IdInput()),
    },
    { additionalProperties: false },
  ),
);

const validateLose = inputValidator(
  Type.Object(
    {
      id: IdInput(),
      workspace_id: Type.Optional(IdInput()),
      by: OneOf(['operator', 'processor'] as const),
      actor_id: Type.Optional(IdInput()),
    },
    { additionalProperties: false },
  ),
);

/** The operator who marks a campaign lost is named; the processor has no actor. */
function actorOfLoss(valid: ReturnType<typeof validateLose>): string | null {
  if (valid.by === 'processor') {
    if (valid.actor_id !== undefined) throw invalidField('actor_id', 'the processor giving up has no actor');
    return null;
  }
  if (valid.actor_id === undefined)
    throw invalidField('actor_id', 'is required when an operator marks a campaign lost');
  return valid.actor_id;
}

async function lockCampaign(trx: Transaction, reference: CampaignReference): Promise<LockedCampaign> {
  const query = trx('recovery_campaigns as k')
    .join('customers as c', function joinCustomer() {
      this.on('c.workspace_id', 'k.workspace_id').andOn('c.id', 'k.customer_id');
    })
    .where('k.id', reference.id)
    .select('k.*', 'c.email as customer_email')
    .forUpdate('k');
  if (reference.workspace_id !== undefined) query.where('k.workspace_id', reference.workspace_id);
  const row = (await query.first()) as LockedCampaign | undefined;
  if (!row) throw notFound(`No campaign with id ${reference.id}`);
  return row;
}

/** A replayed close happens after the failure, as the table's constraint holds. */
function assertAfterFailure(campaign: CampaignRow, at: Date | undefined): void {
  if (at !== undefined && at.getTime() < campaign.first_failed_at.getTime()) {
    throw invalidField('at', 'must not be before the campaign first failed');
  }
}

function assertOpen(campaign: CampaignRow): void {
  if (campaign.status !== 'in_flight') {
    throw conflict(
      `Campaign ${campaign.id} is already ${campaign.status}; a closed campaign cannot change`,
      // A page that still showed it in flight reads it again, and says who closed it and when.
      { code: 'campaign_closed' },
    );
  }
}

async function close(
  trx: Transaction,
  campaignId: string,
  change: Pick<CampaignRow, 'status' | 'recovered_via'> & { closed_by_user_id: string | null },
  at: Date | undefined,
): Promise<CampaignRow> {
  const now = at ?? trx.fn.now();
  const [closed] = (await trx('recovery_campaigns')
    .where({ id: campaignId })
    .update({
      status: change.status,
      closed_by_user_id: change.closed_by_user_id,
      ...closingFields(change.status, now, change.recovered_via),
      updated_at: now,
    })
    .returning('*')) as CampaignRow[];
  return closed!;
}

/** `in_flight → recovered`, with `recovered_at = closed_at`; event `recovery.recovered`. */
export async function recoverCampaign(db: Db, input: RecoverCampaignInput): Promise<RecoveryCampaign> {
  const { at, ...fields } = input;
  const valid = validateRecover(fields);
  if (at !== undefined) assertPastDate(at, 'at');
  return inTransaction(db, async (trx) => {
    const campaign = await lockCampaign(trx, valid);
    if (valid.actor_id !== undefined) await requireActor(trx, valid.actor_id, campaign.workspace_id);
    assertOpen(campaign);
    assertAfterFailure(campaign, at);
    const recovered = await close(
      trx,
      campaign.id,
      { status: 'recovered', recovered_via: valid.via, closed_by_user_id: valid.actor_id ?? null },
      at,
    );
    await recordEvent(
      trx,
      campaign.workspace_id,
      'recovery.recovered',
      { ...campaignEventFields(recovered, campaign.customer_email), recovered_via: valid.via },
      at,
    );
    return toCampaign(recovered);
  });
}

/** `in_flight → lost`; event `recovery.lost` with `source: "dashboard"` when an operator did it. */
export async function loseCampaign(db: Db, input: LoseCampaignInput): Promise<RecoveryCampaign> {
  const { at, ...rest } = input;
  const valid = validateLose(rest);
  const actorId = actorOfLoss(valid);
  if (at !== undefined) assertPastDate(at, 'at');
  return inTransaction(db, async (trx) => {
    const campaign = await lockCampaign(trx, valid);
    if (actorId !== null) await requireActor(trx, actorId, campaign.workspace_id);
    assertOpen(campaign);
    assertAfterFailure(campaign, at);
    const lost = await close(trx, campaign.id, { status: 'lost', recovered_via: null, closed_by_user_id: actorId }, at);
    const fields = campaignEventFields(lost, campaign.customer_email);
    const data: EventData<'recovery.lost'> = actorId !== null ? { ...fields, source: 'dashboard' } : fields;
    await recordEvent(trx, campaign.workspace_id, 'recovery.lost', data, at);
    return toCampaign(lost);
  });
}
