import type { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { CANCEL_OUTCOMES, CancelSessionSchema, ListSchema, OneOf } from '@retention/core';
import { listCancelSessions, type Db } from '@retention/db';
import { CursorParam, cursorOf } from '../middleware/validate-query.js';
import { apiRouter } from './api-router.js';
import { serve, type Endpoint } from './endpoint.js';

export const CancelSessionListQuery = Type.Object(
  {
    outcome: Type.Optional(OneOf(CANCEL_OUTCOMES, 'Only sessions with this outcome')),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);

export const listCancelSessionsEndpoint = {
  operationId: 'listCancelSessions',
  path: '/cancel_sessions',
  tag: 'Cancel sessions',
  summary: 'List cancel sessions',
  description:
    'Cancel-flow sessions, newest first by `created_at`, up to 50 per page. ' +
    'Send the previous page’s `next_cursor` as `cursor` for the next page.',
  query: CancelSessionListQuery,
  returns: 'A page of cancel sessions.',
  response: ListSchema(CancelSessionSchema, 'CancelSessionList'),
} satisfies Endpoint<typeof CancelSessionListQuery>;

export function cancelSessionRoutes(db: Db): Router {
  const router = apiRouter();
  serve(router, listCancelSessionsEndpoint, ({ query, caller }) =>
    listCancelSessions(db, caller.workspaceId, { outcome: query.outcome, cursor: cursorOf(query.cursor) }),
  );
  return router;
}
