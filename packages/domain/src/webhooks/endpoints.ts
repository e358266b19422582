import { Type } from '@sinclair/typebox';
import { isIP } from 'node:net';
import {
  conflict,
  EVENT_TYPES,
  invalidField,
  invalidParam,
  MAX_WEBHOOK_URL_LENGTH,
  newSigningSecret,
  notFound,
  OneOf,
  sealSecret,
  toIsoMillis,
  toIsoMillisOrNull,
  Uuid,
  validateWebhookUrl,
  type EndpointDisabledReason,
  type EventType,
  type SecretsKeyring,
} from '@retention/core';
import { MAX_WEBHOOK_ENDPOINTS, TOO_MANY_WEBHOOK_ENDPOINTS } from '@retention/core/webhook-endpoints';
import { inTransaction, type Db, type Queryable, type Transaction } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { assertUuid, inputValidator, NAME_CHARACTERS_RULE, NAME_PATTERN, withTidyName } from '../validate.js';
import { getWorkspace } from '../workspaces.js';
import { skipPendingDeliveries } from './deliveries.js';
import { refusedRange } from './address-guard.js';
import { assertWebhookManager } from './permissions.js';
import { openOverlapEnd } from './signing-secrets.js';

/**
 * Webhook endpoints: the dashboard's Settings, Outbound webhooks (docs/dashboard-api.md). Every change
 * names the acting user, who must be an owner or admin of the endpoint's workspace. The
 * signing secret leaves this module once, in the result of `createEndpoint`; it is stored
 * sealed with SECRETS_KEY (signing-secrets.ts).
 */

/** Consecutive failed attempts that turn an endpoint off (docs/webhooks.md, "When your receiver fails"). */
export const AUTO_DISABLE_AFTER_FAILURES = 10;

export interface WebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  workspace_id: string;
  name: string;
  url: string;
  /** Subscribed event types; empty means every type. */
  events: EventType[];
  enabled: boolean;
  disabled_reason: EndpointDisabledReason | null;
  /** Consecutive failed attempts; AUTO_DISABLE_AFTER_FAILURES turns the endpoint off. */
  failure_count: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  /**
   * While a Roll secret's overlap lasts, when the secret it replaced stops signing; null when
   * only the current secret signs. A roll before then is refused unless it ends the overlap.
   */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface EndpointRow {
  id: string;
  workspace_id: string;
  name: string;
  url: string;
  event_types: EventType[];
  /** Sealed with SECRETS_KEY (openSigningSecrets): never shown, never logged. */
  signing_secret_sealed: string;
  previous_signing_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  enabled: boolean;
  disabled_reason: EndpointDisabledReason | null;
  failure_count: number;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function toWebhookEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    workspace_id: row.workspace_id,
    name: row.name,
    url: row.url,
    events: row.event_types,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    failure_count: row.failure_count,
    last_success_at: toIsoMillisOrNull(row.last_success_at),
    last_failure_at: toIsoMillisOrNull(row.last_failure_at),
    previous_secret_expires_at: openOverlapEnd(row.previous_secret_expires_at),
    created_at: toIsoMillis(row.created_at),
    updated_at: toIsoMillis(row.updated_at),
  };
}

const Name = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: NAME_PATTERN,
  errorMessage: `must be 1 to 200 characters, not blank, ${NAME_CHARACTERS_RULE}`,
});
const Events = Type.Array(OneOf(EVENT_TYPES), { maxItems: 100 });

const validateCreate = inputValidator(
  Type.Object(
    {
      workspace_id: Uuid(),
      actor_id: Uuid(),
      name: Name,
      url: Type.String(),
      events: Type.Optional(Events),
      allow_private_networks: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);

const validateUpdate = inputValidator(
  Type.Object(
    {
      actor_id: Uuid(),
      name: Type.Optional(Name),
      url: Type.Optional(Type.String()),
      events: Type.Optional(Events),
      expected: Type.Optional(
        Type.Object(
          {
            name: Type.Optional(Type.String({ maxLength: 200 })),
            url: Type.Optional(Type.String({ maxLength: MAX_WEBHOOK_URL_LENGTH })),
            events: Type.Optional(Events),
          },
          { additionalProperties: false },
        ),
      ),
      allow_private_networks: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);

const validateAction = inputValidator(Type.Object({ id: Uuid(), actor_id: Uuid() }, { additionalProperties: false }));

/** The CLI names its user with --actor; the dashboard passes the signed-in user's actor. */
const operatorNaming = (userId: string): Actor => ({ type: 'operator', user_id: userId, label: 'operator CLI' });

/**
 * An endpoint as the security log's records name it (their target): by its name and, in
 * parentheses, its URL, as they were before the change ("Dunning emails (https://…/hooks)"),
 * so the log names it as the Outbound webhooks page does and still says where it sent. A URL
 * too long for the label (2,048 characters with the name) is cut, never the name. Records written
 * before the name was added name the endpoint by its URL alone (docs/dashboard-api.md).
 */
export function endpointTarget(endpoint: { id: string; name: string; url: string }) {
  const room = MAX_TARGET_LABEL - endpoint.name.length - ' ()'.length;
  const url = endpoint.url.length > room ? `${endpoint.url.slice(0, room - 1)}…` : endpoint.url;
  return { type: 'webhook_endpoint', id: endpoint.id, label: `${endpoint.name} (${url})` };
}
const MAX_TARGET_LABEL = 2048;

/** Duplicates dropped, in catalog order, so equal subscriptions always look equal. */
function normalizeEvents(events: readonly EventType[] | undefined): EventType[] {
  const chosen = new Set(events ?? []);
  return EVENT_TYPES.filter((type) => chosen.has(type));
}

export interface CreateEndpointInput {
  workspace_id: string;
  actor_id: string;
  name: string;
  url: string;
  events?: EventType[];
  /**
   * WEBHOOK_ALLOW_PRIVATE_NETWORKS of the process that sends Send test and shares the workers'
   * configuration (the API): false refuses a URL whose host is a literal non-public IP
   * (receiverUrl). Left out, any host is saved: the operator CLI leaves it out, since its own
   * process need not share the workers' setting (npm start's prints no such variable), and
   * fixtures and tests save local receivers.
   */
  allow_private_networks?: boolean;
}

/**
 * The endpoint's URL, normalised: a literal IP in a range deliveries are refused (address-guard.ts,
 * refusedRange: with private networks allowed, link-local and the cloud metadata services still)
 * is refused when it is saved, rather than on every delivery after: the owner typed it, and it can
 * never become allowed. A host name is judged when it is sent to only, since what it points at can
 * change (docs/decisions.md, "SSRF").
 */
function receiverUrl(raw: string, allowPrivateNetworks = true): string {
  const url = validateWebhookUrl(raw);
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  const range = isIP(host) === 0 ? null : refusedRange(host, allowPrivateNetworks);
  if (range) throw invalidField('url', `${host} is a ${range} address: receivers must be on the public internet`);
  return url;
}

export async function createEndpoint(
  db: Db,
  secretsKey: SecretsKeyring,
  input: CreateEndpointInput,
  audit?: Actor,
): Promise<WebhookEndpoint & { secret: string }> {
  const valid = validateCreate(withTidyName(input));
  await getWorkspace(db, valid.workspace_id);
  await assertWebhookManager(db, valid.workspace_id, valid.actor_id);
  const url = receiverUrl(valid.url, input.allow_private_networks);
  const secret = newSigningSecret();
  return inTransaction(db, async (trx) => {
    await assertRoomForEndpoint(trx, valid.workspace_id);
    const [row] = await trx<EndpointRow>('webhook_endpoints')
      .insert({
        workspace_id: valid.workspace_id,
        name: valid.name,
        url,
        event_types: normalizeEvents(valid.events),
        signing_secret_sealed: sealSecret(secretsKey, secret),
      })
      .returning('*');
    await recordSecurityEvent(trx, {
      workspace_id: valid.workspace_id,
      action: 'webhook.created',
      actor: audit ?? operatorNaming(valid.actor_id),
      target: endpointTarget(row!),
      details: { name: row!.name, events: row!.event_types },
    });
    return { ...toWebhookEndpoint(row as EndpointRow), secret };
  });
}

/**
 * Refuses an endpoint past MAX_WEBHOOK_ENDPOINTS. Two adds at once are taken in turn (a lock
 * per workspace for the transaction), so neither can count the other's room as its own.
 */
async function assertRoomForEndpoint(trx: Transaction, workspaceId: string): Promise<void> {
  await trx.raw("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || ?))", [workspaceId]);
  const row = await trx('webhook_endpoints').where({ workspace_id: workspaceId }).count<{ count: string }>('*').first();
  if (Number(row?.count) >= MAX_WEBHOOK_ENDPOINTS) throw conflict(TOO_MANY_WEBHOOK_ENDPOINTS);
}

export async function listEndpoints(db: Queryable, workspaceId: string): Promise<WebhookEndpoint[]> {
  await getWorkspace(db, workspaceId);
  const rows = await db<EndpointRow>('webhook_endpoints')
    .where({ workspace_id: workspaceId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  return rows.map(toWebhookEndpoint);
}

export async function getEndpoint(db: Queryable, id: string): Promise<WebhookEndpoint> {
  return toWebhookEndpoint(await findEndpointRow(db, id));
}

/**
 * The full row, sealed secrets included: for the senders, never for output. `lock` takes the row
 * lock of the change to come (a delete needs the strongest; an update must not block the
 * foreign-key checks of deliveries being dispatched to the endpoint).
 */
export async function findEndpointRow(
  db: Queryable,
  id: string,
  lock?: 'for-update' | 'for-no-key-update',
): Promise<EndpointRow> {
  assertUuid(id);
  const query = db<EndpointRow>('webhook_endpoints').where({ id }).first();
  const row = await (lock === 'for-update' ? query.forUpdate() : lock ? query.forNoKeyUpdate() : query);
  if (!row) throw notFound(`No webhook endpoint with id ${id}`);
  return row;
}

export interface UpdateEndpointInput {
  actor_id: string;
  name?: string;
  url?: string;
  events?: EventType[];
  /**
   * The fields as the client last saw them: if one is no longer so, nothing changes and the
   * update is refused (409 `conflict`, `code: endpoint_changed`), so a page open in one tab
   * does not undo a change made in another (docs/dashboard-api.md, "Stale edits").
   */
  expected?: Partial<Pick<EndpointFields, 'name' | 'url'> & { events: EventType[] }>;
  /** As CreateEndpointInput's. */
  allow_private_networks?: boolean;
}

export async function updateEndpoint(
  db: Db,
  id: string,
  input: UpdateEndpointInput,
  audit?: Actor,
): Promise<WebhookEndpoint> {
  assertUuid(id);
  const valid = validateUpdate(withTidyName(input));
  if (valid.name === undefined && valid.url === undefined && valid.events === undefined) {
    throw invalidParam('nothing to change: give a new name, url or events');
  }
  return inTransaction(db, async (trx) => {
    const current = await findEndpointRow(trx, id, 'for-no-key-update');
    await assertWebhookManager(trx, current.workspace_id, valid.actor_id);
    const url = valid.url === undefined ? undefined : receiverUrl(valid.url, input.allow_private_networks);
    const events = valid.events === undefined ? undefined : normalizeEvents(valid.events);
    // Only what differs from the endpoint as it is: a form saved unchanged is a success that
    // writes nothing, and the log's entry names the fields that did change, each from and to.
    const before = { name: current.name, url: current.url, events: normalizeEvents(current.event_types) };
    // Compared under the row's lock taken above, in the update's transaction: two saves from the
    // same stale page cannot both pass, and the refusal carries the endpoint as the check saw it.
    if (valid.expected) assertAsExpected(current, before, valid.expected);
    const changes = {
      ...(valid.name !== undefined && valid.name !== before.name && { name: valid.name }),
      ...(url !== undefined && url !== before.url && { url }),
      ...(events !== undefined && !sameEvents(events, before.events) && { events }),
    };
    if (Object.keys(changes).length === 0) return toWebhookEndpoint(current);
    const [row] = await trx<EndpointRow>('webhook_endpoints')
      .where({ id })
      .update({
        ...(changes.name !== undefined && { name: changes.name }),
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.events !== undefined && { event_types: changes.events }),
        updated_at: trx.fn.now() as unknown as Date,
      })
      .returning('*');
    await recordEndpointChange(
      trx,
      'webhook.updated',
      current,
      audit ?? operatorNaming(valid.actor_id),
      endpointChangeDetails(before, changes),
    );
    const subscribed = (row as EndpointRow).event_types;
    // Narrowed: what it no longer subscribes to is not retried (to a new URL, perhaps).
    if (changes.events !== undefined && subscribed.length > 0) {
      await skipPendingDeliveries(
        trx,
        id,
        'the endpoint no longer subscribes to this event type',
        undefined,
        subscribed,
      );
    }
    return toWebhookEndpoint(row as EndpointRow);
  });
}

/** What an endpoint edit can change: its name, URL and events (in EVENT_TYPES' order; none is every event). */
export interface EndpointFields {
  name: string;
  url: string;
  events: string[];
}

/**
 * `webhook.updated`'s details (docs/dashboard-api.md, "Security log"): each field that changed,
 * `{ from, to }`, and no other; an endpoint's signing secret is no field of it, so it is never
 * recorded. The dashboard (updateEndpoint), the CLI's `webhook update` (the same function) and
 * `npm start` pointing the demo's endpoints at its receiver write this one shape.
 */
export function endpointChangeDetails<Field extends keyof EndpointFields>(
  before: Pick<EndpointFields, Field>,
  changes: Partial<Pick<EndpointFields, Field>>,
): Partial<Record<Field, { from: unknown; to: unknown }>> {
  return Object.fromEntries(
    (Object.keys(before) as Field[])
      .filter((field) => changes[field] !== undefined)
      .map((field) => [field, { from: before[field], to: changes[field] }]),
  ) as Partial<Record<Field, { from: unknown; to: unknown }>>;
}

const FIELD_WORDS: Record<keyof EndpointFields, string> = { name: 'name', url: 'URL', events: 'events' };

/**
 * Refuses an update made from a page that saw other values than the endpoint has now: which
 * fields changed since, in words, and to review them, with the endpoint as it is now (the
 * dashboard API sends it as `error.endpoint`, for the page to show beside what was typed).
 */
function assertAsExpected(
  current: EndpointRow,
  before: EndpointFields,
  expected: NonNullable<UpdateEndpointInput['expected']>,
): void {
  const changed = (Object.keys(FIELD_WORDS) as Array<keyof EndpointFields>).filter((field) => {
    const seen = expected[field];
    if (seen === undefined) return false;
    return field === 'events'
      ? !sameEvents(normalizeEvents(seen as EventType[]), before.events)
      : seen !== before[field];
  });
  if (changed.length === 0) return;
  const words = changed.map((field) => FIELD_WORDS[field]);
  const list = words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
  throw conflict(
    `Someone changed this endpoint's ${list} after you opened it, so nothing was saved. Review the endpoint as it is now, then save again.`,
    { code: 'endpoint_changed', objects: { endpoint: toWebhookEndpoint(current) } },
  );
}

/** Two lists of event types, both in EVENT_TYPES' order (normalizeEvents). */
function sameEvents(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((type, index) => type === b[index]);
}

function recordEndpointChange(
  trx: Queryable,
  action: 'webhook.updated' | 'webhook.enabled' | 'webhook.disabled' | 'webhook.deleted',
  endpoint: EndpointRow,
  actor: Actor,
  details: Record<string, unknown> = {},
) {
  return recordSecurityEvent(trx, {
    workspace_id: endpoint.workspace_id,
    action,
    actor,
    target: endpointTarget(endpoint),
    details,
  });
}

/** An action on one endpoint, by a user who may manage webhooks. */
export interface EndpointActionInput {
  id: string;
  actor_id: string;
}

/** Turning an endpoint on clears its failure count (docs/webhooks.md); new events flow to it again. No-op when on. */
export function enableEndpoint(db: Db, input: EndpointActionInput, audit?: Actor): Promise<WebhookEndpoint> {
  return setEnabled(db, input, true, audit);
}

/** Turning an endpoint off skips its pending deliveries, each logged as skipped. No-op when off. */
export function disableEndpoint(db: Db, input: EndpointActionInput, audit?: Actor): Promise<WebhookEndpoint> {
  return setEnabled(db, input, false, audit);
}

async function setEnabled(
  db: Db,
  input: EndpointActionInput,
  enabled: boolean,
  audit: Actor | undefined,
): Promise<WebhookEndpoint> {
  const { id, actor_id: actorId } = validateAction(input);
  return inTransaction(db, async (trx) => {
    const current = await findEndpointRow(trx, id, 'for-no-key-update');
    await assertWebhookManager(trx, current.workspace_id, actorId);
    if (current.enabled === enabled) return toWebhookEndpoint(current);
    const [row] = await trx<EndpointRow>('webhook_endpoints')
      .where({ id })
      .update(
        enabled
          ? { enabled: true, disabled_reason: null, failure_count: 0, updated_at: trx.fn.now() as unknown as Date }
          : { enabled: false, disabled_reason: 'manual', updated_at: trx.fn.now() as unknown as Date },
      )
      .returning('*');
    if (!enabled) await skipPendingDeliveries(trx, id, 'the endpoint was disabled');
    await recordEndpointChange(
      trx,
      enabled ? 'webhook.enabled' : 'webhook.disabled',
      current,
      audit ?? operatorNaming(actorId),
    );
    return toWebhookEndpoint(row as EndpointRow);
  });
}

export async function deleteEndpoint(
  db: Db,
  input: EndpointActionInput,
  audit?: Actor,
): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
  const { id, actor_id: actorId } = validateAction(input);
  return inTransaction(db, async (trx: Transaction) => {
    const current = await findEndpointRow(trx, id, 'for-update');
    await assertWebhookManager(trx, current.workspace_id, actorId);
    await recordEndpointChange(trx, 'webhook.deleted', current, audit ?? operatorNaming(actorId), {
      name: current.name,
    });
    await trx('webhook_endpoints').where({ id }).delete();
    return { id, object: 'webhook_endpoint' as const, deleted: true as const };
  });
}
