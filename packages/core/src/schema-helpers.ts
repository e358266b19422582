import { Type, type TSchema } from '@sinclair/typebox';
import { WITHOUT_CONTROL_CHARACTERS } from './control-characters.js';

/** Builders shared by the resource and event schemas, so each JSON type is spelled once. */

/** A timestamp the service emits: always UTC with milliseconds, `2026-03-07T09:15:02.123Z`. */
export const Timestamp = (description?: string) =>
  Type.String({
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
    ...(description ? { description } : {}),
  });

export const Uuid = (description?: string) => Type.String({ format: 'uuid', ...(description ? { description } : {}) });

export const MinorUnits = (description = 'Integer amount in minor currency units') =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

export const Currency = () => Type.String({ pattern: '^[a-z]{3}$', description: 'Lowercase ISO 4217 currency code' });

export const Email = () =>
  Type.String({ format: 'email', maxLength: 320, errorMessage: 'must be an email address such as ann@example.com' });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** A timestamp accepted as input: RFC 3339 date-time or date, checked by `parseTimestamp`. */
export const TimestampInput = () =>
  Type.String({
    format: 'timestamp',
    maxLength: 40,
    description: 'RFC 3339 date-time, or a date meaning midnight UTC',
    errorMessage: 'must be an ISO 8601 timestamp such as 2026-03-07T09:15:02Z, or a date such as 2026-03-07',
  });

/** Free text from a query string or a file: no control characters (Postgres refuses NUL). */
export const PlainText = (maxLength: number, description?: string) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: WITHOUT_CONTROL_CHARACTERS,
    errorMessage: `must be 1 to ${maxLength} characters without control characters`,
    ...(description ? { description } : {}),
  });
