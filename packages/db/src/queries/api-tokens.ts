import type { Queryable } from '../connection.js';

/** What authenticating a request needs to know about its token. */
export interface TokenCredentials {
  id: string;
  workspace_id: string;
  rate_limit_per_minute: number;
  revoked_at: Date | null;
}

export async function findTokenByHash(db: Queryable, tokenHash: string): Promise<TokenCredentials | undefined> {
  return db<TokenCredentials & { token_hash: string }>('api_tokens')
    .where({ token_hash: tokenHash })
    .first('id', 'workspace_id', 'rate_limit_per_minute', 'revoked_at');
}

/** Records use without making every request a write: callers throttle how often they call it. */
export async function touchTokenLastUsed(db: Queryable, id: string): Promise<void> {
  await db('api_tokens').where({ id }).update({ last_used_at: db.fn.now() });
}
