/**
 * The API representation of each resource, built by Postgres as JSON text. The read API
 * serves these bytes as they come: parsing rows into objects (dates above all), mapping them
 * and serialising them again cost the API more CPU than everything else a list request does.
 *
 * Each builder here must produce exactly what its mapper in resources.ts produces from the
 * same row, key order included; `resource-json.test.ts` holds the two together, field by
 * field, over rows with every nullable field both null and set.
 *
 * `alias` is the table's alias in the query (`k` for `recovery_campaigns AS k`).
 */
import { THREE_DECIMAL_CURRENCIES, ZERO_DECIMAL_CURRENCIES } from '@retention/core';

/** UTC, ISO 8601 with milliseconds: what `toIsoMillis` makes of the same instant; null stays null. */
export function isoMillisSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

type JsonValue = { column: string } | { timestamp: string } | { literal: string } | { sql: string };

/**
 * A JSON object of `fields`, in order. row_to_json over a one-row subquery, rather than
 * json_build_object, writes compact JSON (`{"id":"…"}`, no spaces around colons), as
 * JSON.stringify does.
 */
function jsonObjectSql(alias: string, fields: Array<[key: string, value: JsonValue]>): string {
  const values = fields.map(([key, value]) => {
    const sql =
      'literal' in value
        ? `'${value.literal}'::text`
        : 'timestamp' in value
          ? isoMillisSql(`${alias}.${value.timestamp}`)
          : 'column' in value
            ? `${alias}.${value.column}`
            : value.sql;
    return `${sql} AS "${key}"`;
  });
  return `(SELECT row_to_json(resource) FROM (SELECT ${values.join(', ')}) resource)`;
}

const column = (name: string) => ({ column: name });
const timestamp = (name: string) => ({ timestamp: name });

/** Fields a detail response adds after the resource's own, as SQL expressions. */
export type EmbeddedJson = Array<[key: string, sql: string]>;

const embedded = (extra: EmbeddedJson): Array<[string, JsonValue]> => extra.map(([key, sql]) => [key, { sql }]);

export function customerJsonSql(alias: string, extra: EmbeddedJson = []): string {
  return jsonObjectSql(alias, [
    ['id', column('id')],
    ['object', { literal: 'customer' }],
    ['psp_customer_id', column('psp_customer_id')],
    ['email', column('email')],
    ['name', column('name')],
    ['tags', column('tags')],
    ['created_at', timestamp('created_at')],
    ...embedded(extra),
  ]);
}

const SUBSCRIPTION_SUMMARY_FIELDS: Array<[string, JsonValue]> = [
  ['id', column('id')],
  ['object', { literal: 'subscription' }],
  ['psp_subscription_id', column('psp_subscription_id')],
  ['status', column('status')],
  ['plan_name', column('plan_name')],
  ['amount_cents', column('amount_cents')],
  ['currency', column('currency')],
  ['interval', column('interval')],
];

export function subscriptionSummaryJsonSql(alias: string): string {
  return jsonObjectSql(alias, SUBSCRIPTION_SUMMARY_FIELDS);
}

export function subscriptionJsonSql(alias: string): string {
  return jsonObjectSql(alias, [
    ...SUBSCRIPTION_SUMMARY_FIELDS,
    ['customer_id', column('customer_id')],
    ['trial_end', timestamp('trial_end')],
    ['current_period_end', timestamp('current_period_end')],
    ['canceled_at', timestamp('canceled_at')],
    ['created_at', timestamp('created_at')],
  ]);
}

export function campaignJsonSql(alias: string, extra: EmbeddedJson = []): string {
  return jsonObjectSql(alias, [
    ['id', column('id')],
    ['object', { literal: 'recovery_campaign' }],
    ['psp_invoice_id', column('psp_invoice_id')],
    ['amount_cents', column('amount_cents')],
    ['currency', column('currency')],
    ['status', column('status')],
    ['decline_code', column('decline_code')],
    ['decline_category', column('decline_category')],
    ['recovered_via', column('recovered_via')],
    ['first_failed_at', timestamp('first_failed_at')],
    ['recovered_at', timestamp('recovered_at')],
    ['closed_at', timestamp('closed_at')],
    ['customer_id', column('customer_id')],
    ['subscription_id', column('subscription_id')],
    ...embedded(extra),
  ]);
}

export function cancelSessionJsonSql(alias: string, extra: EmbeddedJson = []): string {
  return jsonObjectSql(alias, [
    ['id', column('id')],
    ['object', { literal: 'cancel_session' }],
    ['customer_id', column('customer_id')],
    ['subscription_id', column('subscription_id')],
    ['outcome', column('outcome')],
    ['reason_code', column('reason_code')],
    ['feedback', column('feedback')],
    ['monthly_mrr_cents', column('monthly_mrr_cents')],
    ['currency', column('currency')],
    ['created_at', timestamp('created_at')],
    ['ended_at', timestamp('ended_at')],
    ...embedded(extra),
  ]);
}

/**
 * A JSON document as text, typed by the value it encodes. The API writes `text` to the wire
 * untouched; `parse()` is for callers that want the value (tests, the dashboard).
 */
export class JsonText<T> {
  constructor(readonly text: string) {}

  parse(): T {
    return JSON.parse(this.text) as T;
  }
}

/** A win-back as the dashboard's customer page lists it (docs/dashboard-api.md, "Data pages"). */
export function winbackSummaryJsonSql(alias: string): string {
  return jsonObjectSql(alias, [
    ['id', column('id')],
    ['psp_subscription_id', column('psp_subscription_id')],
    ['days_away', column('days_away')],
    ['amount_cents', column('amount_cents')],
    ['currency', column('currency')],
    ['recorded_at', timestamp('recorded_at')],
  ]);
}

/**
 * An amount in minor units as a decimal of major units, in SQL: `amount_cents` 1900 in usd is
 * 19.00, 2500 in jpy is 2500, 1234 in kwd is 1.234 (each currency's exponent: minorUnitExponent).
 * For the CSV exports, where a spreadsheet sums it as money without a rule per currency.
 */
export function majorUnitsSql(amountColumn: string, currencyColumn: string): string {
  const list = (currencies: readonly string[]) => currencies.map((currency) => `'${currency}'`).join(', ');
  const exponent =
    `CASE WHEN ${currencyColumn} IN (${list(ZERO_DECIMAL_CURRENCIES)}) THEN 0 ` +
    `WHEN ${currencyColumn} IN (${list(THREE_DECIMAL_CURRENCIES)}) THEN 3 ELSE 2 END`;
  return `round(${amountColumn}::numeric / power(10::numeric, ${exponent}), ${exponent})`;
}
