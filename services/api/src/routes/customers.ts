import { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { notFound, PlainText, TimestampInput } from '@retention/core';
import { findCustomerDetail, listCustomers, type Db } from '@retention/db';
import { callerOf } from '../middleware/authenticate.js';
import { cursorOf, NoQuery, pathId, queryOf, validateQuery } from '../middleware/validate-query.js';

export const CustomerListQuery = Type.Object(
  {
    email: Type.Optional(PlainText(320, 'Exact email address, case-insensitive')),
    tag: Type.Optional(PlainText(100, 'Customers carrying this tag, case-insensitive')),
    cursor: Type.Optional(TimestampInput()),
  },
  { additionalProperties: false },
);

export function customerRoutes(db: Db): Router {
  const router = Router();

  router.get('/customers', validateQuery(CustomerListQuery), async (_req, res) => {
    const query = queryOf(res, CustomerListQuery);
    res.json(
      await listCustomers(db, callerOf(res).workspaceId, {
        ...(query.email !== undefined && { email: query.email }),
        ...(query.tag !== undefined && { tag: query.tag }),
        ...(query.cursor !== undefined && { cursor: cursorOf(query.cursor)! }),
      }),
    );
  });

  router.get('/customers/:id', validateQuery(NoQuery), async (req, res) => {
    const id = pathId(req.params.id);
    const customer = await findCustomerDetail(db, callerOf(res).workspaceId, id);
    if (!customer) throw notFound(`No customer with id ${id}.`);
    res.json(customer);
  });

  return router;
}
