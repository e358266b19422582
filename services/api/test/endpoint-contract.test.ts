import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express, { Router } from 'express';
import { Type } from '@sinclair/typebox';
import { Uuid } from '@retention/core';
import { createLogger } from '@retention/runtime';
import { errorHandler } from '../src/middleware/errors.js';
import { NoQuery } from '../src/middleware/validate-query.js';
import { serve, type Endpoint } from '../src/routes/endpoint.js';

/**
 * serve() enforces what an endpoint declares: its path parameters are checked and handed to
 * the handler typed (a UUID lowercased), and a parameter it cannot check is refused when the
 * route is built, not at the first request.
 */
const echoEndpoint = {
  operationId: 'echo',
  path: '/things/:id',
  tag: 'Test',
  summary: 'Echo',
  description: 'Echoes its id.',
  query: NoQuery,
  params: { id: Uuid('The thing id') },
  returns: 'The id.',
  response: Type.Object({ id: Type.String() }, { $id: 'Echo' }),
} satisfies Endpoint<typeof NoQuery>;

let server: ReturnType<express.Express['listen']>;
let base = '';

beforeAll(async () => {
  const router = Router();
  serve(router, echoEndpoint, ({ params }) => Promise.resolve({ id: params.id }));
  const app = express();
  app.use((_req, res, next) => {
    res.locals.caller = { workspaceId: 'w', tokenId: 't' };
    next();
  });
  app.use(router);
  app.use(errorHandler(createLogger('api', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('serve()', () => {
  it('hands the handler a checked, lowercased id', async () => {
    const response = await fetch(`${base}/things/4F1C2B8E-9A7D-4C3B-8E2F-1A2B3C4D5E6F`);
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toEqual({ id: '4f1c2b8e-9a7d-4c3b-8e2f-1a2b3c4d5e6f' });
  });

  it('answers 400 invalid_param naming the parameter for anything else', async () => {
    const response = await fetch(`${base}/things/not-an-id`);
    expect(response.status).toBe(400);
    await expect(response.json()).resolves.toEqual({
      error: { type: 'invalid_param', message: 'Invalid id "not-an-id": must be a UUID.' },
    });
  });

  it('refuses, when the route is built, a path parameter it cannot check', () => {
    const free = { ...echoEndpoint, operationId: 'free', params: { id: Type.String() } };
    expect(() => serve(Router(), free, ({ params }) => Promise.resolve({ id: params.id }))).toThrow(
      'free: path parameter id must be a UUID schema',
    );
  });
});
