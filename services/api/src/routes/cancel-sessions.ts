import { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { CANCEL_OUTCOMES, OneOf, TimestampInput } from '@retention/core';
import { listCancelSessions, type Db } from '@retention/db';
import { callerOf } from '../middleware/authenticate.js';
import { cursorOf, queryOf, validateQuery } from '../middleware/validate-query.js';

export const CancelSessionListQuery = Type.Object(
  {
    outcome: Type.Optional(OneOf(CANCEL_OUTCOMES, 'Only sessions with this outcome')),
    cursor: Type.Optional(TimestampInput()),
  },
  { additionalProperties: false },
);

export function cancelSessionRoutes(db: Db): Router {
  const router = Router();
  router.get('/cancel_sessions', validateQuery(CancelSessionListQuery), async (_req, res) => {
    const query = queryOf(res, CancelSessionListQuery);
    res.json(
      await listCancelSessions(db, callerOf(res).workspaceId, {
        ...(query.outcome !== undefined && { outcome: query.outcome }),
        ...(query.cursor !== undefined && { cursor: cursorOf(query.cursor)! }),
      }),
    );
  });
  return router;
}
