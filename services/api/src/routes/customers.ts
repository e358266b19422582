import type { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { CustomerDetailSchema, CustomerSchema, ListSchema, notFound, PlainText, Uuid } from '@retention/core';
import { findCustomerDetail, listCustomers, type Db } from '@retention/db';
import { CursorParam, cursorOf, NoQuery } from '../middleware/validate-query.js';
import { apiRouter } from './api-router.js';
import { serve, type Endpoint } from './endpoint.js';

/**
 * An address has no spaces, so one with a space is refused rather than searched for and not found:
 * it is almost always a `+` sent unencoded (`email=dev+walk@example.com`, which a query string
 * reads as `dev walk@…`), and the refusal says to send it as %2B (validate-query.ts).
 */
const EmailFilter = Type.String({
  minLength: 1,
  maxLength: 320,
  pattern: '^[^\\s\\x00-\\x1f\\x7f]+$',
  errorMessage: 'must be 1 to 320 characters without spaces or control characters',
  description: 'Exact email address, case-insensitive; send a `+` in it as `%2B`',
});

export const CustomerListQuery = Type.Object(
  {
    email: Type.Optional(EmailFilter),
    tag: Type.Optional(PlainText(100, 'Customers carrying this tag, case-insensitive')),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);

export const listCustomersEndpoint = {
  operationId: 'listCustomers',
  path: '/customers',
  tag: 'Customers',
  summary: 'List customers',
  description:
    'Customers of the workspace, newest first by `created_at`, up to 50 per page. ' +
    'Send the previous page’s `next_cursor` as `cursor` for the next page.',
  query: CustomerListQuery,
  returns: 'A page of customers.',
  response: ListSchema(CustomerSchema, 'CustomerList'),
} satisfies Endpoint<typeof CustomerListQuery>;

export const retrieveCustomerEndpoint = {
  operationId: 'retrieveCustomer',
  path: '/customers/:id',
  tag: 'Customers',
  summary: 'Retrieve a customer',
  description: 'One customer with its `subscriptions` and its 5 newest `recent_campaigns`.',
  query: NoQuery,
  params: { id: Uuid('The customer id') },
  returns: 'The customer.',
  response: CustomerDetailSchema,
  errors: ['not_found'],
} satisfies Endpoint<typeof NoQuery>;

export function customerRoutes(db: Db): Router {
  const router = apiRouter();

  serve(router, listCustomersEndpoint, ({ query, caller }) =>
    listCustomers(db, caller.workspaceId, { email: query.email, tag: query.tag, cursor: cursorOf(query.cursor) }),
  );

  serve(router, retrieveCustomerEndpoint, async ({ params: { id }, caller }) => {
    const customer = await findCustomerDetail(db, caller.workspaceId, id);
    if (!customer) throw notFound(`No customer with id ${id}.`);
    return customer;
  });

  return router;
}
