import { describe, expect, it } from '@jest/globals';
import {
  ATTEMPT_OUTCOMES,
  CAMPAIGN_STATUSES,
  CANCEL_OUTCOMES,
  CANCEL_REASON_CODES,
  DECLINE_CATEGORIES,
  DELIVERY_STATUSES,
  ENDPOINT_DISABLED_REASONS,
  EVENT_TYPES,
  PING_EVENT_TYPE,
  PROCESSOR_STATUSES,
  RECOVERED_VIA,
  SUBSCRIPTION_INTERVALS,
  SUBSCRIPTION_STATUSES,
  USER_ROLES,
} from '@retention/core';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();

/**
 * Migrations write their CHECK lists out literally (a migration is a snapshot), so nothing ties
 * them to core's enums but this test: the migrated schema must allow exactly each enum's values.
 * Adding a value to an enum therefore needs a migration, and this test says which.
 */
const COLUMNS: Array<[table: string, column: string, values: readonly string[]]> = [
  ['workspaces', 'processor_status', PROCESSOR_STATUSES],
  ['users', 'role', USER_ROLES],
  ['subscriptions', 'status', SUBSCRIPTION_STATUSES],
  ['subscriptions', 'interval', SUBSCRIPTION_INTERVALS],
  ['recovery_campaigns', 'status', CAMPAIGN_STATUSES],
  ['recovery_campaigns', 'decline_category', DECLINE_CATEGORIES],
  ['recovery_campaigns', 'recovered_via', RECOVERED_VIA],
  ['cancel_sessions', 'outcome', CANCEL_OUTCOMES],
  ['cancel_sessions', 'reason_code', CANCEL_REASON_CODES],
  ['events', 'type', EVENT_TYPES],
  ['webhook_endpoints', 'event_types', EVENT_TYPES],
  ['webhook_endpoints', 'disabled_reason', ENDPOINT_DISABLED_REASONS],
  ['webhook_deliveries', 'event_type', [...EVENT_TYPES, PING_EVENT_TYPE]],
  ['webhook_deliveries', 'status', DELIVERY_STATUSES],
  ['webhook_attempts', 'outcome', ATTEMPT_OUTCOMES],
];

/** The quoted values of every CHECK on `table` that lists values for `column` alone. */
async function allowedValues(table: string, column: string): Promise<string[][]> {
  const { rows } = await database.current.db.raw<{ rows: Array<{ definition: string }> }>(
    `SELECT pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
      WHERE c.contype = 'c' AND c.conrelid = ?::regclass AND a.attname = ? AND cardinality(c.conkey) = 1`,
    [table, column],
  );
  return rows
    .map(({ definition }) => [...definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1]!))
    .filter((values) => values.length > 0);
}

describe('CHECK constraints against core enums', () => {
  it.each(COLUMNS)('%s.%s allows exactly the enum values', async (table, column, values) => {
    const lists = await allowedValues(table, column);
    expect(lists).toHaveLength(1);
    expect([...lists[0]!].sort()).toEqual([...values].sort());
  });
});
