import type { CancelOutcome, CancelSession, ListEnvelope } from '@retention/core';
import type { Queryable } from '../connection.js';
import { toCancelSession, type CancelSessionRow } from '../resources.js';
import { keysetPage, listEnvelope } from './pagination.js';

export interface CancelSessionFilters {
  outcome?: CancelOutcome;
  cursor?: Date;
}

const createdAt = (row: CancelSessionRow) => row.created_at;

export async function listCancelSessions(
  db: Queryable,
  workspaceId: string,
  filters: CancelSessionFilters,
): Promise<ListEnvelope<CancelSession>> {
  const filtered = () => {
    const query = db<CancelSessionRow>('cancel_sessions').where({ workspace_id: workspaceId });
    if (filters.outcome !== undefined) query.where({ outcome: filters.outcome });
    return query;
  };
  const page = await keysetPage<CancelSessionRow>({
    filtered,
    column: 'created_at',
    timestampOf: createdAt,
    cursor: filters.cursor,
  });
  return listEnvelope(page, toCancelSession, createdAt);
}
