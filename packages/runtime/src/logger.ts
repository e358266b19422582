import { pino, type Logger, type DestinationStream } from 'pino';
import { scrubSecrets, type LogLevel } from '@retention/core';

export type { Logger } from 'pino';

/**
 * Structured JSON logs. Secrets must never reach a log line: a field named as a credential is
 * censored wherever it appears (to a depth of 8, in a child logger's bindings too), and `scrubSecrets` masks any token or signing
 * secret that slips into free text (messages, error messages, and every string field of a
 * logged object, such as a request path a client put a token in).
 *
 * Fields are censored by name in the same walk that scrubs strings, not by pino's `redact`
 * paths: those cost about 13 µs a line (two thirds of a request log line's cost, measured in
 * docs/performance.md), where a name looked up in a set while walking costs next to nothing,
 * and names match at every depth, not only the paths listed.
 */
const CENSORED_FIELDS = new Set([
  'authorization',
  'token',
  'secret',
  'signing_secret',
  // An endpoint's signing secrets as stored: sealed, but no log line needs them.
  'previous_signing_secret',
  'signing_secret_sealed',
  'previous_signing_secret_sealed',
  // The processor connection's secrets and the key that seals them at rest.
  'api_key',
  'webhook_secret',
  'secretsKey',
]);
const CENSORED = '[redacted]';

/**
 * Objects and arrays with every credential field censored and every string scrubbed, down to
 * a depth of 8. Every object is walked by its own enumerable keys, which is what its JSON holds
 * (class instances, null-prototype objects, an Error logged under a key other than `err`), but
 * for values that write themselves (`toJSON`: dates, buffers) and binary views. Copy on write:
 * a value holding no secret is returned as it is, so the usual log line (one per request)
 * copies nothing (the walk allocates only its key lists, and an array's mapped copy); one that
 * does is copied into a plain object with the same JSON.
 */
function scrubFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 8 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const scrubbed = value.map((item) => scrubFields(item, depth + 1));
    return scrubbed.some((item, index) => item !== value[index]) ? scrubbed : value;
  }
  if (ArrayBuffer.isView(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    const scrubbed = CENSORED_FIELDS.has(key) && item !== undefined ? CENSORED : scrubFields(item, depth + 1);
    if (scrubbed !== item) (copy ??= { ...value })[key] = scrubbed;
  }
  return copy ?? value;
}

export function createLogger(service: string, level: LogLevel, destination?: DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => scrubFields(fields) as Record<string, unknown>,
      },
      hooks: {
        // Messages are free text: mask anything that looks like a secret before it is written.
        logMethod(args, method) {
          const [first, ...rest] = args as unknown[];
          // A lone Error's message would become the line's message past this hook, unscrubbed.
          const spelled =
            first instanceof Error && typeof rest[0] !== 'string' ? [{ err: first }, first.message] : args;
          method.apply(
            this,
            spelled.map((arg) => (typeof arg === 'string' ? scrubSecrets(arg) : arg)) as Parameters<typeof method>,
          );
        },
      },
      serializers: {
        err: (error: unknown) => serializeError(error),
      },
    },
    destination,
  );
  // A child logger's bindings are written on every line of it, and pino formats them with
  // neither `log` nor (for a child) `bindings`: scrubbed here as they are bound, for children
  // of children too (each inherits this method, called on itself).
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below on the logger asked for a child
  const bindChild = logger.child;
  logger.child = function child(this: Logger, bindings, options) {
    return bindChild.call(this, scrubFields(bindings) as typeof bindings, options);
  } as typeof logger.child;
  return logger;
}

function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: scrubSecrets(String(error)) };
  return {
    type: error.name,
    message: scrubSecrets(error.message),
    ...('code' in error && { code: error.code }),
    stack: error.stack ? scrubSecrets(error.stack) : undefined,
  };
}
