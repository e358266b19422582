import type { Static, TSchema } from '@sinclair/typebox';
import { compileValidator, invalidParam, isUuid } from '@retention/core';

/**
 * Compiles a schema for validating the input of a domain action. The returned function
 * throws `invalid_param` naming the offending field, or returns the value typed.
 * `root` names the value itself when it is not an object of named fields.
 */
export function inputValidator<T extends TSchema>(schema: T, root = ''): (value: unknown) => Static<T> {
  const check = compileValidator(schema, root);
  return (value) => {
    const problem = check(value);
    if (problem) throw invalidParam(problem);
    return value;
  };
}

/** Ids reach the domain from operators and scripts: a non-UUID is their mistake, not a 500. */
export function assertUuid(value: string, field = 'id'): string {
  if (!isUuid(value)) throw invalidParam(`${field}: must be a UUID`);
  return value;
}
