import { Type } from '@sinclair/typebox';
import { mintApiToken, notFound, toIsoMillis, toIsoMillisOrNull, Uuid } from '@retention/core';
import { inTransaction, type Db, type Queryable } from '@retention/db';
import { OPERATOR, recordSecurityEvent, type Actor } from './security-log.js';
import { getWorkspace } from './workspaces.js';
import { assertUuid, inputValidator, NameInput, withTidyName } from './validate.js';

/** A token as operators see it: everything but the value, which exists only at creation. */
export interface ApiToken {
  id: string;
  object: 'api_token';
  workspace_id: string;
  name: string;
  /** The last four characters of the value, to tell tokens apart. */
  hint: string;
  rate_limit_per_minute: number;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface ApiTokenRow {
  id: string;
  workspace_id: string;
  name: string;
  token_hash: string;
  token_hint: string;
  rate_limit_per_minute: number;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;
export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000;

export function toApiToken(row: ApiTokenRow): ApiToken {
  return {
    id: row.id,
    object: 'api_token',
    workspace_id: row.workspace_id,
    name: row.name,
    hint: row.token_hint,
    rate_limit_per_minute: row.rate_limit_per_minute,
    created_at: toIsoMillis(row.created_at),
    revoked_at: toIsoMillisOrNull(row.revoked_at),
    last_used_at: toIsoMillisOrNull(row.last_used_at),
  };
}

const RateLimit = Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT_PER_MINUTE });

const validateCreate = inputValidator(
  Type.Object(
    {
      workspace_id: Uuid(),
      name: NameInput(200),
      rate_limit_per_minute: Type.Optional(RateLimit),
    },
    { additionalProperties: false },
  ),
);
const validateTokenId = inputValidator(Type.Object({ id: Uuid() }, { additionalProperties: false }));
const validateLimitChange = inputValidator(
  Type.Object({ id: Uuid(), rate_limit_per_minute: RateLimit }, { additionalProperties: false }),
);

/** Rows for a new token: the value goes to the caller, only its hash to the database. */
export function newTokenRow(input: { workspace_id: string; name: string; rate_limit_per_minute?: number }) {
  const minted = mintApiToken();
  return {
    token: minted.token,
    row: {
      workspace_id: input.workspace_id,
      name: input.name,
      token_hash: minted.hash,
      token_hint: minted.hint,
      rate_limit_per_minute: input.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    },
  };
}

export async function createToken(
  db: Db,
  input: { workspace_id: string; name: string; rate_limit_per_minute?: number },
  actor: Actor = OPERATOR,
): Promise<ApiToken & { token: string }> {
  const valid = validateCreate(withTidyName(input));
  await getWorkspace(db, valid.workspace_id);
  const { token, row } = newTokenRow(valid);
  return inTransaction(db, async (trx) => {
    // Who made it: by id while they are in the workspace, and by email for good, which the
    // insert trigger of migration 0025 copies from created_by (a token outlives its creator's
    // membership, and its list must still say who made it).
    const [saved] = await trx<ApiTokenRow>('api_tokens')
      .insert({ ...row, created_by: actor.user_id ?? null } as never)
      .returning('*');
    await recordSecurityEvent(trx, {
      workspace_id: valid.workspace_id,
      action: 'token.created',
      actor,
      target: { type: 'api_token', id: saved!.id, label: saved!.name },
      details: { hint: saved!.token_hint, rate_limit_per_minute: saved!.rate_limit_per_minute },
    });
    return { ...toApiToken(saved as ApiTokenRow), token };
  });
}

export async function listTokens(db: Queryable, workspaceId: string): Promise<ApiToken[]> {
  assertUuid(workspaceId, 'workspace_id');
  await getWorkspace(db, workspaceId);
  const rows = await db<ApiTokenRow>('api_tokens')
    .where({ workspace_id: workspaceId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  return rows.map(toApiToken);
}

/**
 * Tells the API processes that a token changed, once the change is committed: they cache
 * token look-ups (see `announceTokenChange` in @retention/runtime). A change is not done until
 * it is announced, so the functions that change a token require one.
 */
export type AnnounceTokenChange = () => Promise<void>;

/** What every change of a token carries besides its input: its announcement, and who made it. */
export interface TokenChange {
  announce: AnnounceTokenChange;
  actor?: Actor;
}

/** Idempotent: revoking a revoked token keeps its first revocation time (and announces again). */
export async function revokeToken(
  db: Db,
  input: { id: string },
  { announce, actor = OPERATOR }: TokenChange,
): Promise<ApiToken> {
  const { id } = validateTokenId(input);
  const row = await inTransaction(db, async (trx) => {
    const before = await trx<ApiTokenRow>('api_tokens').where({ id }).forUpdate().first();
    if (!before) throw notFound(`No API token with id ${id}`);
    if (before.revoked_at) return before;
    const [revoked] = await trx<ApiTokenRow>('api_tokens')
      .where({ id })
      .update({ revoked_at: trx.fn.now() as unknown as Date })
      .returning('*');
    await recordSecurityEvent(trx, {
      workspace_id: before.workspace_id,
      action: 'token.revoked',
      actor,
      target: { type: 'api_token', id, label: before.name },
      details: { hint: before.token_hint },
    });
    return revoked as ApiTokenRow;
  });
  await announce();
  return toApiToken(row);
}

export async function setTokenRateLimit(
  db: Db,
  input: { id: string; rate_limit_per_minute: number },
  { announce, actor = OPERATOR }: TokenChange,
): Promise<ApiToken> {
  const { id, rate_limit_per_minute: limit } = validateLimitChange(input);
  const row = await inTransaction(db, async (trx) => {
    const before = await trx<ApiTokenRow>('api_tokens').where({ id }).forUpdate().first();
    if (!before) throw notFound(`No API token with id ${id}`);
    // The limit it has already: nothing changes, and the log records no change.
    if (before.rate_limit_per_minute === limit) return before;
    const [changed] = await trx<ApiTokenRow>('api_tokens')
      .where({ id })
      .update({ rate_limit_per_minute: limit })
      .returning('*');
    await recordSecurityEvent(trx, {
      workspace_id: before.workspace_id,
      action: 'token.limit_changed',
      actor,
      target: { type: 'api_token', id, label: before.name },
      details: { from: before.rate_limit_per_minute, to: limit },
    });
    return changed as ApiTokenRow;
  });
  await announce();
  return toApiToken(row);
}
