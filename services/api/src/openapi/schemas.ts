import type { TSchema } from '@sinclair/typebox';

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
 * Turns the TypeBox schemas the service validates with into OpenAPI 3.1 Schema Objects
 * (JSON Schema 2020-12). Every schema that carries an `$id` (Customer, Subscription, ...)
 * becomes one entry of `components.schemas`, referred to by `$ref` wherever it appears, so a
 * reader (or a code generator) sees one Customer type, not one per embedding.
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
