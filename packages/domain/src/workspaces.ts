import { Type } from '@sinclair/typebox';
import {
  Currency,
  notFound,
  invalidField,
  OneOf,
  PROCESSOR_STATUSES,
  toIsoMillis,
  type FxRates,
  type ProcessorStatus,
} from '@retention/core';
import { loadFxRates, type Db, type Queryable } from '@retention/db';
import { assertUuid, inputValidator, NameInput, withTidyName } from './validate.js';

export interface Workspace {
  id: string;
  object: 'workspace';
  name: string;
  processor: ProcessorStatus;
  display_currency: string;
  created_at: string;
}

interface WorkspaceRow {
  id: string;
  name: string;
  processor_status: ProcessorStatus;
  display_currency: string;
  created_at: Date;
  updated_at: Date;
}

export function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    object: 'workspace',
    name: row.name,
    processor: row.processor_status,
    display_currency: row.display_currency,
    created_at: toIsoMillis(row.created_at),
  };
}

const Name = NameInput(200);

const validateCreate = inputValidator(
  Type.Object(
    {
      name: Name,
      processor: Type.Optional(OneOf(PROCESSOR_STATUSES)),
      display_currency: Type.Optional(Currency()),
    },
    { additionalProperties: false },
  ),
);

const validateUpdate = inputValidator(
  Type.Object(
    {
      name: Type.Optional(Name),
      processor: Type.Optional(OneOf(PROCESSOR_STATUSES)),
      display_currency: Type.Optional(Currency()),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

/**
 * Who reads a refusal of a display currency with no FX rate: an operator (the CLI, fixtures), who
 * can add one with `fx set`, or an owner on the dashboard's Workspace settings, who cannot and
 * knows nothing of the CLI.
 */
export type CurrencyRefusalReader = 'operator' | 'owner';

/**
 * Totals are normalised to the display currency, so it needs an FX rate. The refusal lists the
 * currencies that can be chosen now; an operator's names `fx set`, the way to add one, and an
 * owner's asks them to ask their operator, with the codes in capitals, as the dashboard shows them.
 */
export function assertDisplayCurrencyConvertible(
  rates: FxRates,
  currency: string | undefined,
  reader: CurrencyRefusalReader = 'operator',
): void {
  if (currency !== undefined && !rates.has(currency)) {
    const codes = [...rates.keys()].sort();
    throw invalidField(
      'display_currency',
      reader === 'owner'
        ? `no exchange rate for ${currency.toUpperCase()} yet: ask whoever runs this service to add one, or choose one of ` +
            codes.map((code) => code.toUpperCase()).join(', ')
        : `no FX rate is known for "${currency}", so totals cannot be shown in it; choose one of ` +
            `${codes.join(', ')} (an operator can add a rate with \`fx set\`)`,
    );
  }
}

async function assertConvertible(db: Queryable, currency: string | undefined, reader?: CurrencyRefusalReader) {
  if (currency !== undefined) assertDisplayCurrencyConvertible(await loadFxRates(db), currency, reader);
}

export async function createWorkspace(
  db: Db,
  input: { name: string; processor?: ProcessorStatus; display_currency?: string },
): Promise<Workspace> {
  const valid = validateCreate(withTidyName(input));
  await assertConvertible(db, valid.display_currency);
  const [row] = await db<WorkspaceRow>('workspaces')
    .insert({
      name: valid.name,
      processor_status: valid.processor ?? 'connected',
      display_currency: valid.display_currency ?? 'usd',
    })
    .returning('*');
  return toWorkspace(row as WorkspaceRow);
}

export async function updateWorkspace(
  db: Db,
  id: string,
  input: { name?: string; processor?: ProcessorStatus; display_currency?: string },
  reader?: CurrencyRefusalReader,
): Promise<Workspace> {
  assertUuid(id);
  const valid = validateUpdate(withTidyName(input));
  await assertConvertible(db, valid.display_currency, reader);
  const [row] = await db<WorkspaceRow>('workspaces')
    .where({ id })
    .update({
      ...(valid.name !== undefined && { name: valid.name }),
      ...(valid.processor !== undefined && { processor_status: valid.processor }),
      ...(valid.display_currency !== undefined && { display_currency: valid.display_currency }),
      updated_at: db.fn.now(),
    })
    .returning('*');
  if (!row) throw notFound(`No workspace with id ${id}`);
  return toWorkspace(row);
}

export async function getWorkspace(db: Queryable, id: string): Promise<Workspace> {
  assertUuid(id, 'workspace_id');
  const row = await db<WorkspaceRow>('workspaces').where({ id }).first();
  if (!row) throw notFound(`No workspace with id ${id}`);
  return toWorkspace(row);
}
