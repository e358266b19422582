import { notFound, toIsoMillis, type UserRole } from '@retention/core';
import type { Queryable } from '@retention/db';
import { hashOpaqueValue, newOpaqueValue, OPAQUE_VALUE } from './opaque-values.js';

/**
 * One-time links (invitations, password resets): the token is handed out once, only its
 * SHA-256 kept; a link is good until it expires, is used or is revoked.
 */
export type LinkKind = 'invitation' | 'password_reset';

export const INVITATION_LIFETIME_MS = 7 * 24 * 3_600_000;
export const PASSWORD_RESET_LIFETIME_MS = 3_600_000;

export interface LinkRow {
  id: string;
  kind: LinkKind;
  workspace_id: string;
  email: string;
  role: UserRole | null;
  user_id: string | null;
  invited_by: string | null;
  /**
   * Who made a reset link for someone; null when its holder asked for it (Forgot password) or
   * the operator CLI made it.
   */
  created_by: string | null;
  /**
   * A reset link the operator CLI made (`user reset-link`); false for other reset links, null for
   * invitations and for reset links made before migration 0036 (or by the release before it).
   */
  made_by_operator: boolean | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

const lifetimeOf = (kind: LinkKind) => (kind === 'invitation' ? INVITATION_LIFETIME_MS : PASSWORD_RESET_LIFETIME_MS);

export async function createLink(
  db: Queryable,
  input: {
    kind: LinkKind;
    workspace_id: string;
    email: string;
    role?: UserRole | null;
    user_id?: string | null;
    invited_by?: string | null;
    created_by?: string | null;
    made_by_operator?: boolean;
  },
): Promise<{ token: string; link: LinkRow }> {
  const { value, hash } = newOpaqueValue();
  const [link] = await db<LinkRow>('account_links')
    .insert({
      token_hash: hash,
      kind: input.kind,
      workspace_id: input.workspace_id,
      email: input.email,
      role: input.role ?? null,
      user_id: input.user_id ?? null,
      invited_by: input.invited_by ?? null,
      created_by: input.created_by ?? null,
      made_by_operator: input.kind === 'password_reset' ? (input.made_by_operator ?? false) : null,
      expires_at: new Date(Date.now() + lifetimeOf(input.kind)),
    } as never)
    .returning('*');
  return { token: value, link: link as LinkRow };
}

/**
 * The open link a token names; `lock` holds it for the transaction that spends it, so a link
 * raced from two tabs is spent once. Unknown, used, revoked and expired all read the same.
 */
export async function findOpenLink(db: Queryable, kind: LinkKind, token: string, lock = false): Promise<LinkRow> {
  const refuse = () => notFound('This link is not valid: it may have expired or been used already.');
  if (typeof token !== 'string' || !OPAQUE_VALUE.test(token)) throw refuse();
  const query = db<LinkRow>('account_links')
    .where('token_hash', hashOpaqueValue(token))
    .where('kind', kind)
    .whereNull('used_at')
    .whereNull('revoked_at')
    .where('expires_at', '>', new Date())
    .first();
  const link = await (lock ? query.forUpdate() : query);
  if (!link) throw refuse();
  return link;
}

/**
 * A new token and a whole new lifetime for an open link, in place (an invitation's New link or
 * Resend): only the new token's hash is kept, so the old token is known no more and reads as any
 * revoked link does. `invited_by`: who made the new link, when it changes hands.
 */
export async function renewLink(
  db: Queryable,
  link: LinkRow,
  changes: { invited_by?: string | null } = {},
): Promise<{ token: string; link: LinkRow }> {
  const { value, hash } = newOpaqueValue();
  const [renewed] = await db<LinkRow>('account_links')
    .where({ id: link.id })
    .update({ token_hash: hash, expires_at: new Date(Date.now() + lifetimeOf(link.kind)), ...changes } as never)
    .returning('*');
  return { token: value, link: renewed as LinkRow };
}

export async function spendLink(db: Queryable, id: string): Promise<void> {
  await db('account_links').where({ id }).update({ used_at: db.fn.now() });
}

/** Revokes the open links of one kind for an address in a workspace (a new one replaces them). */
export async function revokeOpenLinks(
  db: Queryable,
  workspaceId: string,
  kind: LinkKind,
  email: string,
): Promise<number> {
  return db('account_links')
    .where({ workspace_id: workspaceId, kind })
    .whereRaw('lower(email) = lower(?)', [email])
    .whereNull('used_at')
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() });
}

export function linkUrl(baseUrl: string, kind: LinkKind, token: string): string {
  return `${baseUrl}/dashboard/${kind === 'invitation' ? 'invite' : 'reset'}/${token}`;
}

export const linkExpiry = (link: LinkRow) => toIsoMillis(link.expires_at);
