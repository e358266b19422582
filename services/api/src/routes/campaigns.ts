import { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { CAMPAIGN_STATUSES, notFound, OneOf, TimestampInput } from '@retention/core';
import { findCampaignDetail, listCampaigns, type Db } from '@retention/db';
import { callerOf } from '../middleware/authenticate.js';
import { cursorOf, NoQuery, pathId, queryOf, validateQuery } from '../middleware/validate-query.js';

export const CampaignListQuery = Type.Object(
  {
    status: Type.Optional(OneOf(CAMPAIGN_STATUSES, 'Only campaigns in this status')),
    cursor: Type.Optional(TimestampInput()),
  },
  { additionalProperties: false },
);

export function campaignRoutes(db: Db): Router {
  const router = Router();

  router.get('/campaigns', validateQuery(CampaignListQuery), async (_req, res) => {
    const query = queryOf(res, CampaignListQuery);
    res.json(
      await listCampaigns(db, callerOf(res).workspaceId, {
        ...(query.status !== undefined && { status: query.status }),
        ...(query.cursor !== undefined && { cursor: cursorOf(query.cursor)! }),
      }),
    );
  });

  router.get('/campaigns/:id', validateQuery(NoQuery), async (req, res) => {
    const id = pathId(req.params.id);
    const campaign = await findCampaignDetail(db, callerOf(res).workspaceId, id);
    if (!campaign) throw notFound(`No campaign with id ${id}.`);
    res.json(campaign);
  });

  return router;
}
