import { isNativeError } from 'node:util/types';

/**
 * The error worth showing: a refused connection to a name with several addresses is an
 * AggregateError with no message of its own, one error per address; the first says what
 * happened. Checked by shape, not instanceof: errors from Node's own modules may come from
 * another realm.
 */
export function firstCause(error: unknown): unknown {
  if (
    isNativeError(error) &&
    !error.message &&
    'errors' in error &&
    Array.isArray(error.errors) &&
    error.errors.length > 0
  ) {
    return firstCause(error.errors[0]);
  }
  return error;
}
