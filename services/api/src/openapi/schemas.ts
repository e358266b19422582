import type { TSchema } from '@sinclair/typebox';
import { TIMESTAMP_PATTERN } from '@retention/core';

export type JsonSchema = { [keyword: string]: unknown };

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['anyOf', 'allOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
/** Keywords of our own validator (core's ajv) that mean nothing to an OpenAPI reader. */
const PRIVATE_KEYWORDS = new Set(['errorMessage']);

export const COMPONENT_SCHEMA_PREFIX = '#/components/schemas/';

/**
 * Core's validator knows a `timestamp` format (`parseTimestamp`: an RFC 3339 date-time or a
 * date); JSON Schema does not, so a generated client would ignore it or fail on it. The
 * document says the same in standard terms: the exact syntax as a pattern, the calendar (no
 * 30 February) as the standard formats. The service itself still validates with core's format.
 */
const TIMESTAMP_SCHEMA: JsonSchema = {
  pattern: TIMESTAMP_PATTERN,
  anyOf: [
    { type: 'string', format: 'date-time' },
    { type: 'string', format: 'date' },
  ],
};

/**
 * Turns the TypeBox schemas the service validates with into OpenAPI 3.1 Schema Objects
 * (JSON Schema 2020-12). Every schema that carries an `$id` (Customer, Subscription, ...)
 * becomes one entry of `components.schemas`, referred to by `$ref` wherever it appears, so a
 * reader (or a code generator) sees one Customer type, not one per embedding.
 *
 * The published schemas are open: `additionalProperties: false` is dropped. Core's schemas
 * are closed so that the service's own tests catch a field sent by mistake
 * (`resources.test.ts` validates every response against them), but the API grows fields on
 * request (spec part 9), and a client generated from a closed document would start
 * rejecting responses the day one is added.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  /** The schema as OpenAPI wants it: plain JSON, named sub-schemas replaced by `$ref`s. */
  refer(schema: TSchema): JsonSchema {
    // A JSON round trip drops TypeBox's symbol-keyed metadata.
    return this.convert(JSON.parse(JSON.stringify(schema)) as JsonSchema);
  }

  private convert(schema: JsonSchema): JsonSchema {
    const { $id, ...rest } = schema;
    const body: JsonSchema = {};
    for (const [keyword, value] of Object.entries(rest)) {
      if (PRIVATE_KEYWORDS.has(keyword)) continue;
      if (keyword === 'additionalProperties' && value === false) continue;
      if (keyword === 'format' && value === 'timestamp') {
        Object.assign(body, TIMESTAMP_SCHEMA);
        continue;
      }
      if (SCHEMA_KEYWORDS.has(keyword) && isObject(value)) body[keyword] = this.convert(value);
      else if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value))
        body[keyword] = value.map((item: JsonSchema) => this.convert(item));
      else if (SCHEMA_MAP_KEYWORDS.has(keyword) && isObject(value))
        body[keyword] = Object.fromEntries(
          Object.entries(value).map(([name, item]) => [name, this.convert(item as JsonSchema)]),
        );
      else body[keyword] = value;
    }
    if (typeof $id !== 'string') return body;
    this.register($id, body);
    return { $ref: `${COMPONENT_SCHEMA_PREFIX}${$id}` };
  }

  private register(name: string, body: JsonSchema): void {
    const existing = this.schemas[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(body)) {
      throw new Error(`two different schemas are both named ${name}`);
    }
    this.schemas[name] = body;
  }
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
