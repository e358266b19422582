import { STATUS_CODES } from 'node:http';
import { Type, type TObject } from '@sinclair/typebox';
import { ERROR_STATUS, PAGE_SIZE, type ErrorType } from '@retention/core';
import { errorsOf, type Endpoint } from '../routes/endpoint.js';
import { API_VERSION_HEADER } from '../routes/index.js';
import { SchemaComponents, type JsonSchema } from './schemas.js';
import { buildWebhooks, WEBHOOKS_TAG, webhooksDescription, type WebhookOperation } from './webhooks.js';

/**
 * The OpenAPI 3.1 document of /api/v1, built from the endpoint contracts the router serves:
 * the query schemas that validate requests, core's resource schemas for responses and
 * core's error catalog for errors.
 */

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  /** The requests the service sends to receivers (OpenAPI 3.1), keyed by event type. */
  webhooks: Record<string, { post: WebhookOperation }>;
  tags: Array<{ name: string; description?: string }>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
    headers: Record<string, OpenApiHeader>;
    securitySchemes: Record<string, JsonSchema>;
  };
} & JsonSchema;

export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  parameters: OpenApiParameter[];
  responses: Record<string, OpenApiResponse | { $ref: string }>;
}

export interface OpenApiParameter {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  headers: Record<string, { $ref: string }>;
  content: { 'application/json': { schema: JsonSchema } };
}

interface OpenApiHeader {
  description: string;
  required: boolean;
  schema: JsonSchema;
}

/** What each error type (docs/api.md, "Errors") means, as the documentation tells it. */
const ERROR_CONDITIONS: Partial<Record<ErrorType, string>> = {
  authentication_required: 'The request has no `Authorization` header.',
  invalid_token:
    'The token is malformed (the header is not `Bearer sk_live_…`, or the request has more than one `Authorization` header), unknown, or revoked. A revoked token is refused from the very next request.',
  invalid_param:
    'A query parameter is invalid (a bad `cursor`, `status` or `outcome`; a parameter that is unknown, repeated or empty, or whose percent-encoding is malformed or not UTF-8), or an `:id` is not a UUID. The message names the parameter.',
  not_found: 'No such resource in the token’s workspace (a resource of another workspace is reported the same way).',
  rate_limit_exceeded:
    'The token’s rate limit is reached, or the client address made too many failed authentications in the last minute. The message states the limit and the seconds to wait; `Retry-After` carries the wait. Tokens are never banned for receiving 429s.',
  database_error: 'A server-side failure. Nothing was changed (the API is read-only): retry the request.',
};

const HEADERS: Record<string, OpenApiHeader & { name: string }> = {
  RequestId: {
    name: 'Request-Id',
    description: 'Identifies the request in the service’s logs; quote it when asking for support.',
    required: true,
    schema: { type: 'string' },
  },
  ApiVersion: {
    name: API_VERSION_HEADER.name,
    description:
      'Always `1`. On every answer of the API, errors included: an error without it came from something else (a proxy, or a wrong base URL).',
    required: true,
    schema: { type: 'string', const: API_VERSION_HEADER.value },
  },
  RateLimitLimit: {
    name: 'X-RateLimit-Limit',
    description:
      'The per-minute ceiling that applies: the token’s (60 unless raised), or on a 401 the failed-authentication allowance of the client address. Present on every response except one that failed before the request could be counted (the rate limiter or the database unavailable).',
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitRemaining: {
    name: 'X-RateLimit-Remaining',
    description: 'Requests left in the current sliding one-minute window.',
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitReset: {
    name: 'X-RateLimit-Reset',
    description:
      'Seconds until the oldest request counted in the window leaves it, freeing room for one more: the window refills a request at a time, as each turns a minute old. With none left, the same as Retry-After.',
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  RetryAfter: {
    name: 'Retry-After',
    description: 'Seconds to wait before the request can succeed.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
};

const EVERY_RESPONSE_HEADERS = ['RequestId', 'ApiVersion', 'RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset'];

const headerRefs = (names: string[]) =>
  Object.fromEntries(names.map((name) => [HEADERS[name]!.name, { $ref: `#/components/headers/${name}` }]));

/** `Not Found` → `NotFound`: the name of a status's entry in `components.responses`. */
function responseName(status: number): string {
  return (STATUS_CODES[status] ?? `Status${status}`).replace(/[^A-Za-z]/g, '');
}

/** `/customers/:id` → `/customers/{id}`. */
function openApiPath(prefix: string, expressPath: string): string {
  return `${prefix}${expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

export interface DocumentOptions {
  prefix: string;
  serverUrl: string;
  /** The worker's WEBHOOK_TIMEOUT_MS and WEBHOOK_RETRY_DELAYS, which the webhooks section states. */
  webhookTimeoutMs: number;
  webhookRetryDelaysMs: readonly number[];
}

export function buildOpenApiDocument(endpoints: readonly Endpoint[], options: DocumentOptions): OpenApiDocument {
  const components = new SchemaComponents();
  const errorTypes = [...new Set(endpoints.flatMap(errorsOf))];
  const statuses = [...new Set(errorTypes.map((type) => ERROR_STATUS[type]))].sort((a, b) => a - b);
  components.refer(ErrorSchema(errorTypes, 'Error'));

  const responses = Object.fromEntries(
    statuses.map((status) => {
      const types = errorTypes.filter((type) => ERROR_STATUS[type] === status);
      return [responseName(status), errorResponse(status, types, components)];
    }),
  );

  const webhookOptions = {
    serverUrl: options.serverUrl,
    timeoutMs: options.webhookTimeoutMs,
    retryDelaysMs: options.webhookRetryDelaysMs,
  };

  const paths: OpenApiDocument['paths'] = {};
  for (const endpoint of endpoints) {
    const path = openApiPath(options.prefix, endpoint.path);
    if (paths[path]) throw new Error(`${path} is described twice`);
    paths[path] = { get: operation(endpoint, components) };
  }

  return {
    openapi: '3.1.0',
    info: { title: 'Retention service API', version: '1.0.0', description: API_DESCRIPTION },
    servers: [{ url: options.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      ...[...new Set(endpoints.map((endpoint) => endpoint.tag))].map((name) => ({ name })),
      { name: WEBHOOKS_TAG, description: webhooksDescription(webhookOptions) },
    ],
    paths,
    webhooks: buildWebhooks(webhookOptions, components),
    components: {
      schemas: components.schemas,
      responses,
      headers: Object.fromEntries(Object.entries(HEADERS).map(([key, { name: _name, ...header }]) => [key, header])),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'sk_live_…',
          description:
            'An API token minted in the dashboard (Settings, API tokens), scoped to one workspace: `Authorization: Bearer sk_live_…`.',
        },
      },
    },
  };
}

function operation(endpoint: Endpoint, components: SchemaComponents): OpenApiOperation {
  const response = endpoint.response as { $id?: unknown };
  if (typeof response.$id !== 'string') throw new Error(`the response schema of ${endpoint.path} needs an $id`);
  const errors = errorsOf(endpoint);
  const errorStatuses = [...new Set(errors.map((type) => ERROR_STATUS[type]))].sort((a, b) => a - b);
  return {
    operationId: endpoint.operationId,
    tags: [endpoint.tag],
    summary: endpoint.summary,
    description: endpoint.description,
    parameters: [...pathParameters(endpoint, components), ...queryParameters(endpoint.query, components)],
    responses: {
      '200': {
        description: endpoint.returns,
        headers: headerRefs(EVERY_RESPONSE_HEADERS),
        content: { 'application/json': { schema: components.refer(endpoint.response) } },
      },
      ...Object.fromEntries(
        errorStatuses.map((status) => [String(status), { $ref: `#/components/responses/${responseName(status)}` }]),
      ),
    },
  };
}

function pathParameters(endpoint: Endpoint, components: SchemaComponents): OpenApiParameter[] {
  const names = [...endpoint.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  const described = Object.keys(endpoint.params ?? {});
  if (names.join() !== described.join()) {
    throw new Error(`${endpoint.path}: path parameters ${names.join()} but schemas for ${described.join()}`);
  }
  return names.map((name) => {
    const schema = components.refer(endpoint.params![name]!);
    return {
      name,
      in: 'path',
      required: true,
      ...(typeof schema.description === 'string' && { description: schema.description }),
      schema,
    };
  });
}

function queryParameters(query: TObject, components: SchemaComponents): OpenApiParameter[] {
  const required = new Set(query.required ?? []);
  return Object.entries(query.properties).map(([name, property]) => {
    const schema = components.refer(property);
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(typeof schema.description === 'string' && { description: schema.description }),
      schema,
    };
  });
}

function errorResponse(status: number, types: ErrorType[], components: SchemaComponents): OpenApiResponse {
  const description = types
    .map((type) => {
      const condition = ERROR_CONDITIONS[type];
      if (!condition) throw new Error(`error type ${type} has no documented condition`);
      return `\`${type}\`: ${condition}`;
    })
    .join('\n\n');
  return {
    description,
    headers: headerRefs(status === 429 ? [...EVERY_RESPONSE_HEADERS, 'RetryAfter'] : EVERY_RESPONSE_HEADERS),
    content: { 'application/json': { schema: components.refer(ErrorSchema(types)) } },
  };
}

/** The error body (docs/api.md, "Errors"), its `type` limited to `types`. */
function ErrorSchema(types: ErrorType[], $id?: string) {
  return Type.Object(
    {
      error: Type.Object(
        {
          type: Type.Unsafe<ErrorType>({ type: 'string', enum: types, description: 'Branch on this' }),
          message: Type.String({ description: 'Human-readable; may change' }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, ...($id && { $id }) },
  );
}

const API_DESCRIPTION = `Read-only JSON API over the workspace's failed-payment recovery campaigns, customers,
cancel sessions and statistics. Every endpoint is a GET.

**Authentication.** Send \`Authorization: Bearer sk_live_…\`. A token is scoped to one workspace: a
resource of another workspace is reported as \`not_found\`.

**Pagination.** Lists return \`{object: "list", data, has_more, next_cursor}\` with up to ${PAGE_SIZE} rows,
newest first. Send \`next_cursor\` back as \`cursor\` for the next page; \`cursor\` returns only rows
strictly older than it. Rows that share a timestamp are never split across pages.

**Errors.** Every error is \`{error: {type, message}}\`; branch on \`error.type\`. Unknown, repeated or
empty query parameters are \`invalid_param\`. Percent-encode a \`+\` in a query value as \`%2B\`: a bare
\`+\` reads as a space. Any method but GET and HEAD, OPTIONS included, is \`not_found\`. A request that is
not valid HTTP, whose URL and headers exceed the server's limit (16 KB), or that is not received in
time, is \`invalid_param\` with status 400, like every \`invalid_param\`.

**Rate limit.** 60 requests per minute per token (a sliding one-minute window) unless the operator
raised it. Responses under \`/api/v1\` carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\`; a 429 carries \`Retry-After\` in seconds. While the limiter's store is
unavailable each API process limits on its own (a fixed one-minute window, the same headers), so a
limit holds through an outage. A request the HTTP parser refused (above) carries no \`X-RateLimit-*\`,
since no token was read.`;
