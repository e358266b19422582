import type { CancelOutcome, CancelSession, ListEnvelope } from '@retention/core';
import type { Queryable } from '../connection.js';
import { cancelSessionJsonSql, type JsonText } from '../resource-json.js';
import { keysetPage, listEnvelope } from './pagination.js';

export interface CancelSessionFilters {
  outcome?: CancelOutcome | undefined;
  cursor?: Date | undefined;
}

export async function listCancelSessions(
  db: Queryable,
  workspaceId: string,
  filters: CancelSessionFilters,
): Promise<JsonText<ListEnvelope<CancelSession>>> {
  const filtered = () => {
    const query = db('cancel_sessions').where({ workspace_id: workspaceId });
    if (filters.outcome !== undefined) query.where({ outcome: filters.outcome });
    return query;
  };
  const page = await keysetPage({
    db,
    filtered,
    column: 'created_at',
    json: cancelSessionJsonSql('cancel_sessions'),
    cursor: filters.cursor,
  });
  return listEnvelope(page);
}
