import ajvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { parseTimestamp } from './time.js';

// Both packages are CommonJS: imported from ESM, their classes sit on `.default`.
const Ajv = ajvModule.default;
const addFormats = ajvFormatsModule.default;

/**
 * One ajv instance for the whole process: each schema compiles once, at its first use.
 * `allErrors` is off so a hostile document cannot make validation do unbounded work;
 * `verbose` puts the failing schema on the error, so a schema can carry its own message.
 */
export const ajv = new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false, verbose: true });
addFormats(ajv);
ajv.addKeyword('kind').addKeyword('modifier');
// `errorMessage` on a schema replaces ajv's wording when that schema fails.
ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
// Timestamps the service accepts: RFC 3339 date-times or plain dates, impossible ones refused.
ajv.addFormat('timestamp', { type: 'string', validate: (text: string) => parseTimestamp(text) !== null });

/**
 * What is wrong with a value: the field (`events[2]`, or null for the value as a whole) and
 * the reason, and both as one message, `events[2]: must be one of …` (`(root): …` when no
 * field is to blame).
 */
export interface ValueProblem {
  param: string | null;
  reason: string;
  message: string;
}

function problem(path: string, reason: string): ValueProblem {
  return { param: path || null, reason, message: `${path || '(root)'}: ${reason}` };
}

/** ajv's first error as a ValueProblem, in the schema's own words when it has them. */
export function describeAjvProblem(error: ErrorObject, root = ''): ValueProblem {
  const path = jsonPointerToPath(error.instancePath, root);
  const custom = (error.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof custom === 'string') return problem(path, custom);
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return problem(joinPath(path, extra), 'is not a recognised field');
  }
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return problem(joinPath(path, missing), 'is required');
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    return problem(path, `must be one of ${allowed.map((value) => JSON.stringify(value)).join(', ')}`);
  }
  return problem(path, error.message ?? 'is invalid');
}

function jsonPointerToPath(pointer: string, root: string): string {
  let path = root;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path = /^\d+$/.test(segment) ? `${path}[${segment}]` : joinPath(path, segment);
  }
  return path;
}

function joinPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * Every schema given to compileProblemFinder in this process, for `compileDeclaredSchemas`: a
 * schema ajv refuses then fails a test, not a request.
 */
const declaredSchemas: TSchema[] = [];

/**
 * A function that returns null when a value is valid, or what is wrong. The schema is compiled
 * at the function's first call rather than here: the validators are declared when their modules
 * load, and compiling them all was a quarter of the CPU of every process's start (the operator
 * CLI's, 139 of 538 ms) and of every test file's loading, most of them for schemas that process
 * never uses (docs/performance.md, "Test run").
 */
export function compileProblemFinder(schema: TSchema, root = ''): (value: unknown) => ValueProblem | null {
  declaredSchemas.push(schema);
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= ajv.compile(schema);
    if (validate(value)) return null;
    const first = validate.errors?.[0];
    return first ? describeAjvProblem(first, root) : problem(root, 'is invalid');
  };
}

/** Compiles a schema into a function that returns null when valid, or a readable problem. */
export function compileValidator(schema: TSchema, root = ''): (value: unknown) => string | null {
  const findProblem = compileProblemFinder(schema, root);
  return (value) => findProblem(value)?.message ?? null;
}

/**
 * Compiles every schema declared so far (by the modules loaded), as their first uses would:
 * throws what ajv says of the first it refuses. For the test that loads every module.
 */
export function compileDeclaredSchemas(): number {
  for (const schema of declaredSchemas) ajv.compile(schema);
  return declaredSchemas.length;
}
