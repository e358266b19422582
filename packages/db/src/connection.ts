import knexModule, { type Knex } from 'knex';
import pg from 'pg';

const knex = knexModule.default ?? knexModule;

// COUNT(*) and SUM(bigint) come back as int8, which pg returns as strings. Every int8 in
// this schema is a count or an amount in minor units, far below 2^53; refuse rather than
// silently round if one is not.
pg.types.setTypeParser(pg.types.builtins.INT8, (text: string) => {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} exceeds the safe integer range`);
  return value;
});

export type Db = Knex;
export type Transaction = Knex.Transaction;
/** Either the pool or an open transaction: query modules accept both. */
export type Queryable = Knex | Knex.Transaction;

export interface DbOptions {
  poolMax?: number;
  /** Longest a statement may run; 30 s unless a bulk job (a seed, a benchmark) needs more. */
  statementTimeoutMs?: number;
  applicationName?: string;
  /** Where knex's own warnings go; by default nowhere (callers report failures themselves). */
  log?: (level: 'warn' | 'error' | 'debug' | 'deprecate', message: string) => void;
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const db = knex({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      application_name: options.applicationName ?? 'retention',
      // A statement that runs longer than this is a bug or an outage, never a normal request.
      statement_timeout: options.statementTimeoutMs ?? 30_000,
      connectionTimeoutMillis: 5_000,
    },
    pool: { min: 0, max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 10_000,
    log: Object.fromEntries(
      (['warn', 'error', 'debug', 'deprecate'] as const).map((level) => [
        level,
        (message: unknown) => options.log?.(level, message instanceof Error ? message.message : String(message)),
      ]),
    ),
  });
  // knex puts the statement before the database's own message (`<sql> - <message>`); keep that
  // message apart, for what a workspace's owner may read (databaseFailure).
  db.on('query-error', (error: unknown, query: { sql?: unknown }) => {
    if (!(error instanceof Error) || typeof query?.sql !== 'string') return;
    const prefix = `${query.sql} - `;
    if (error.message.startsWith(prefix))
      Object.defineProperty(error, DATABASE_MESSAGE, { value: error.message.slice(prefix.length) });
  });
  return db;
}

const DATABASE_MESSAGE = Symbol('the database message');

/**
 * A failure Postgres reported, in words fit for a workspace's owner: its SQLSTATE and its own
 * message, without the statement knex puts before it (our query text, and with bound values
 * it would be data too). Null for anything else (a refused connection has no SQLSTATE of
 * five characters; a JavaScript error none at all). The message is null when knex did not
 * run the statement as a query it knows (nothing to tell it from the statement).
 */
export function databaseFailure(error: unknown): { code: string; message: string | null } | null {
  const code = pgErrorCode(error);
  if (!code || !/^[0-9A-Z]{5}$/.test(code) || !(error instanceof Error) || !('severity' in error)) return null;
  const message = (error as unknown as Record<symbol, unknown>)[DATABASE_MESSAGE];
  return { code, message: typeof message === 'string' ? message : null };
}

/**
 * `error` as it was before knex put the statement, with its bound values, in front of its
 * message: for a log line that says what failed (`read ECONNRESET`) in a few words, and holds
 * no data. The error itself when knex did not (a failure to connect has no statement).
 */
export function withoutStatement(error: unknown): unknown {
  const message = error instanceof Error ? (error as unknown as Record<symbol, unknown>)[DATABASE_MESSAGE] : undefined;
  if (typeof message !== 'string') return error;
  const bare = new Error(message);
  bare.name = (error as Error).name;
  const code = pgErrorCode(error);
  return code === undefined ? bare : Object.assign(bare, { code });
}

const RETRYABLE_CODES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/**
 * Runs `work` in a transaction, retrying a few times when Postgres aborts it for a deadlock
 * or a serialization failure: both are safe to retry because nothing was committed.
 */
export function inTransaction<T>(db: Db, work: (trx: Transaction) => Promise<T>, attempts = 5): Promise<T> {
  return retryOnConflict(() => db.transaction(work), attempts);
}

/**
 * Runs `statement` (a transaction or a single statement) again, after a short jittered pause,
 * when Postgres aborted it for a deadlock or a serialization failure: both mean "try again",
 * and the retry is what Postgres's documentation prescribes.
 */
export async function retryOnConflict<T>(statement: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await statement();
    } catch (error) {
      if (attempt >= attempts || !RETRYABLE_CODES.has(pgErrorCode(error) ?? '')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 10));
    }
  }
}

export function pgErrorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** Errors that mean the database could not be reached, as opposed to a bad query. */
export function isConnectionError(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (code && (code.startsWith('08') || code === '57P01' || code === '57P03' || code === '53300')) return true;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN'].includes(code))
    return true;
  const name = typeof error === 'object' && error !== null && 'name' in error ? String(error.name) : '';
  return name === 'KnexTimeoutError';
}

/** Rows per INSERT statement by default: well under Postgres's 65,535 bind parameters for every table. */
const INSERT_BATCH_ROWS = 2_000;

/**
 * Inserts many rows, `batchRows` to a statement (one statement's bind parameters are limited);
 * in a transaction, all or none of them.
 */
export async function insertInBatches(
  db: Queryable,
  table: string,
  rows: readonly object[],
  batchRows = INSERT_BATCH_ROWS,
): Promise<void> {
  for (let start = 0; start < rows.length; start += batchRows) {
    await db(table).insert(rows.slice(start, start + batchRows));
  }
}
