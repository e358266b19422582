import type { Router } from 'express';
import { Type } from '@sinclair/typebox';
import {
  CAMPAIGN_STATUSES,
  CampaignDetailSchema,
  ListSchema,
  notFound,
  OneOf,
  RecoveryCampaignSchema,
  Uuid,
} from '@retention/core';
import { findCampaignDetail, listCampaigns, type Db } from '@retention/db';
import { CursorParam, cursorOf, NoQuery } from '../middleware/validate-query.js';
import { apiRouter } from './api-router.js';
import { serve, type Endpoint } from './endpoint.js';

export const CampaignListQuery = Type.Object(
  {
    status: Type.Optional(OneOf(CAMPAIGN_STATUSES, 'Only campaigns in this status')),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);

export const listCampaignsEndpoint = {
  operationId: 'listCampaigns',
  path: '/campaigns',
  tag: 'Recovery campaigns',
  summary: 'List recovery campaigns',
  description:
    'Failed-payment recovery campaigns, newest first by `first_failed_at`, up to 50 per page. ' +
    'Send the previous page’s `next_cursor` as `cursor` for the next page.',
  query: CampaignListQuery,
  returns: 'A page of recovery campaigns.',
  response: ListSchema(RecoveryCampaignSchema, 'RecoveryCampaignList'),
} satisfies Endpoint<typeof CampaignListQuery>;

export const retrieveCampaignEndpoint = {
  operationId: 'retrieveCampaign',
  path: '/campaigns/:id',
  tag: 'Recovery campaigns',
  summary: 'Retrieve a recovery campaign',
  description: 'One campaign with its `customer` and a summary of its `subscription`.',
  query: NoQuery,
  params: { id: Uuid('The campaign id') },
  returns: 'The recovery campaign.',
  response: CampaignDetailSchema,
  errors: ['not_found'],
} satisfies Endpoint<typeof NoQuery>;

export function campaignRoutes(db: Db): Router {
  const router = apiRouter();

  serve(router, listCampaignsEndpoint, ({ query, caller }) =>
    listCampaigns(db, caller.workspaceId, { status: query.status, cursor: cursorOf(query.cursor) }),
  );

  serve(router, retrieveCampaignEndpoint, async ({ params: { id }, caller }) => {
    const campaign = await findCampaignDetail(db, caller.workspaceId, id);
    if (!campaign) throw notFound(`No campaign with id ${id}.`);
    return campaign;
  });

  return router;
}
