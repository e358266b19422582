import { createHmac } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import {
  conflict,
  currentKey,
  invalidField,
  lastFour,
  modeOfKey,
  notFound,
  openSecret,
  sealSecret,
  toIsoMillis,
  toIsoMillisOrNull,
  type ProcessorMode,
  type SecretsKeyring,
  SET_ASIDE_REASONS,
  type SetAsideReason,
} from '@retention/core';
import { inTransaction, type Db, type Queryable, type Transaction } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { requireActor } from '../lookups.js';
import { getWorkspace } from '../workspaces.js';
import { IdInput, inputValidator } from '../validate.js';
import { modeSwitchRefusal } from './modes.js';
import { clearRefusedDeliveries, refusedDeliveriesOf, type RefusedDeliveries } from './refused-deliveries.js';

/**
 * A workspace's connection to its payment processor (docs/processor.md). Its status is the
 * workspace's `processor` status too: webhooks go out only while it is `connected`.
 *   pending      - connected without a key, waiting for the first correctly signed event
 *   connected    - the key answered, or a signed event arrived
 *   disconnected - the owner disconnected, or the processor refused the key (401)
 */

export const PROCESSOR_PROVIDERS = ['stripe'] as const;
export type ProcessorProvider = (typeof PROCESSOR_PROVIDERS)[number];
export type ConnectionStatus = 'pending' | 'connected' | 'disconnected';

export interface ConnectionRow {
  id: string;
  workspace_id: string;
  provider: ProcessorProvider;
  status: ConnectionStatus;
  webhook_secret_sealed: string;
  webhook_secret_last4: string;
  api_key_sealed: string | null;
  api_key_last4: string | null;
  /**
   * Test or live: the key's, else the first signed event's `livemode`; null until known (modes.ts).
   */
  mode: ProcessorMode | null;
  disconnected_reason: 'owner' | 'key_rejected' | null;
  connected_at: Date | null;
  backfill_status: 'idle' | 'queued' | 'running' | 'succeeded' | 'failed';
  backfill_phase: BackfillPhase | null;
  backfill_cursor: string | null;
  backfill_counts: Record<BackfillPhase, number>;
  backfill_error: string | null;
  backfill_run_id: string | null;
  backfill_started_at: Date | null;
  backfill_finished_at: Date | null;
  /** While the run waits out Stripe's 429s: until when (migration 0029). */
  backfill_waiting_until: Date | null;
  /** Stripe refused the key and the owners are not emailed yet (migration 0031). */
  key_rejection_mail_due: boolean;
  created_at: Date;
}

export type BackfillPhase = 'customers' | 'subscriptions' | 'invoices';

export function webhookUrlOf(baseUrl: string, connection: Pick<ConnectionRow, 'id' | 'provider'>): string {
  return `${baseUrl}/processor/${connection.provider}/${connection.id}`;
}

/**
 * The id a workspace's connection will have, known before it exists: Stripe makes the signing
 * secret only once an endpoint is created for our URL, so the URL must come first. An HMAC of
 * the workspace id under SECRETS_KEY, shaped as a UUID: stable, and unguessable without the
 * key. A connection keeps the id it was created with, whatever happens to the key later; a
 * workspace not connected yet is shown a new URL once SECRETS_KEY is rotated (the current key
 * plans it: the previous one is dropped once the rotation is over).
 */
export function plannedConnectionId(secretsKey: SecretsKeyring, workspaceId: string): string {
  const hex = createHmac('sha256', currentKey(secretsKey)).update(`processor-connection:${workspaceId}`).digest('hex');
  // Version 4 and the RFC 4122 variant, like the random ids Postgres makes.
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface ConnectProcessorInput {
  workspace_id: string;
  provider: ProcessorProvider;
  webhook_secret: string;
  api_key?: string;
  /**
   * A key of the other mode than the connection's is refused unless this is true
   * (docs/processor.md, "Mode").
   */
  confirm_mode_switch?: boolean;
}

/** Stripe's signing secrets are whsec_ and then letters and digits; we allow 16 to 200 of them. */
const STRIPE_SECRET_PREFIX = 'whsec_';
const STRIPE_SECRET_BODY = { min: 16, max: 200 };
const STRIPE_SECRET_EXPECTED = "must be the endpoint's signing secret from Stripe, beginning whsec_";
const STRIPE_SECRET_SHAPE = `Stripe's signing secrets are whsec_ followed by ${STRIPE_SECRET_BODY.min} to ${STRIPE_SECRET_BODY.max} letters and digits`;

/**
 * Stripe's restricted keys: rk_live_ or rk_test_ and then letters and digits. Stripe's are about
 * a hundred; we allow 16 to 250, as before.
 */
const RESTRICTED_KEY_PREFIX = /^rk_(live|test)_/;
const RESTRICTED_KEY_BODY = { min: 16, max: 250 };
const RESTRICTED_KEY_READS = 'customers, subscriptions, invoices, invoice payments, payment intents and events';
const RESTRICTED_KEY_EXPECTED = `must be a Stripe restricted key (rk_live_… or rk_test_…) with read access to ${RESTRICTED_KEY_READS}`;
/** For a key of another kind: what this field takes instead. */
const RESTRICTED_KEY_WANTED = `this field takes a restricted key (rk_live_… or rk_test_…) with read access to ${RESTRICTED_KEY_READS}`;
const RESTRICTED_KEY_SHAPE =
  `Stripe's restricted keys are rk_live_ or rk_test_ followed by ${RESTRICTED_KEY_BODY.min} to ` +
  `${RESTRICTED_KEY_BODY.max} letters and digits`;

const validateConnectShape = inputValidator(
  Type.Object(
    {
      workspace_id: IdInput(),
      provider: Type.Unsafe<ProcessorProvider>({
        type: 'string',
        enum: [...PROCESSOR_PROVIDERS],
        errorMessage: 'must be stripe',
      }),
      // Its shape is checked by signingSecretProblem, which says what is wrong with it.
      webhook_secret: Type.String({ errorMessage: STRIPE_SECRET_EXPECTED }),
      // Its shape is checked by apiKeyProblem, which says what is wrong with it.
      api_key: Type.Optional(Type.String({ errorMessage: RESTRICTED_KEY_EXPECTED })),
      confirm_mode_switch: Type.Optional(Type.Boolean({ errorMessage: 'must be true or false' })),
    },
    { additionalProperties: false },
  ),
);

/**
 * What is wrong with a signing secret, in words an owner pasting it can act on, or null when
 * it has the shape of one. Each shape gets its own reason: "must begin whsec_" for a secret
 * that does begin whsec_ but was cut short sent the owner looking for the wrong mistake.
 */
function signingSecretProblem(secret: string): string | null {
  if (/^(rk|sk|pk)_(live|test)_/.test(secret))
    return (
      `is an API key, not a signing secret: ${STRIPE_SECRET_SHAPE}, shown on the endpoint's page in Stripe ` +
      '(Developers, Webhooks, then the endpoint)'
    );
  if (!secret.startsWith(STRIPE_SECRET_PREFIX)) return STRIPE_SECRET_EXPECTED;
  return bodyProblem(secret.slice(STRIPE_SECRET_PREFIX.length), {
    kind: 'a signing secret',
    noun: 'secret',
    shape: STRIPE_SECRET_SHAPE,
    length: STRIPE_SECRET_BODY,
    from: "the endpoint's page in Stripe",
  });
}

/**
 * What is wrong with an API key, in words an owner pasting it can act on, or null when it has
 * the shape of a restricted key. As for the signing secret, each shape gets its own reason: a
 * key that began rk_test_ but was cut short was told it "must be a Stripe restricted key
 * (rk_live_… or rk_test_…)", which it looked like. Least privilege (processor.md): a secret key
 * (sk_) can move money and change the account, and is refused before anything is asked of Stripe.
 */
function apiKeyProblem(key: string): string | null {
  const prefix = RESTRICTED_KEY_PREFIX.exec(key)?.[0];
  if (prefix === undefined) {
    if (/^sk_(live|test)_/.test(key))
      return `${RESTRICTED_KEY_EXPECTED}; a secret key (sk_…) gives full access to the Stripe account and is not accepted`;
    if (/^pk_(live|test)_/.test(key))
      return `is a publishable key (pk_…), which cannot read your Stripe data: ${RESTRICTED_KEY_WANTED}`;
    if (key.startsWith(STRIPE_SECRET_PREFIX))
      return `is a webhook signing secret (whsec_…), which goes in the signing secret field: ${RESTRICTED_KEY_WANTED}`;
    return RESTRICTED_KEY_EXPECTED;
  }
  return bodyProblem(key.slice(prefix.length), {
    kind: 'a restricted key',
    noun: 'key',
    shape: RESTRICTED_KEY_SHAPE,
    length: RESTRICTED_KEY_BODY,
    from: 'Stripe (Developers, API keys)',
  });
}

/**
 * What is wrong with the part of a credential after its prefix (letters and digits, within a
 * length), or null: the reasons both fields give, each naming its own credential and where in
 * Stripe to copy it from again.
 */
function bodyProblem(
  body: string,
  credential: { kind: string; noun: string; shape: string; length: { min: number; max: number }; from: string },
): string | null {
  const { kind, noun, shape, length, from } = credential;
  if (!/^[A-Za-z0-9]*$/.test(body)) return `has characters ${kind} never has: ${shape}; copy it again from Stripe`;
  if (body.length < length.min) return `is too short: ${shape}; copy the whole ${noun} from ${from}`;
  if (body.length > length.max) return `is too long: ${shape}; copy only the ${noun} from ${from}`;
  return null;
}

/** The connection's input typed, or invalid_param naming the field and what is wrong with it. */
function validateConnect(input: unknown): ConnectProcessorInput {
  const valid = validateConnectShape(input);
  const problem = signingSecretProblem(valid.webhook_secret);
  if (problem) throw invalidField('webhook_secret', problem);
  const keyProblem = valid.api_key === undefined ? null : apiKeyProblem(valid.api_key);
  if (keyProblem) throw invalidField('api_key', keyProblem);
  return valid;
}

/**
 * How the key fared when it was tried, before the connection was written: no key was tried;
 * the key given answered; or, connecting again without a key, the stored key answered again
 * (`kept_key_accepted` is its sealed value, so a key replaced or removed meanwhile is never
 * taken for the one that was tried). See keptKeyToCheck.
 */
export type KeyCheck = 'none' | 'accepted' | { kept_key_accepted: string };

/**
 * The stored signing secret, for a connect that gives only a new key (the dashboard's Connect
 * again with the secret field left empty: docs/processor.md, "Reconnecting"), so the owner need
 * not paste the secret again to change the key. Without a connection there is none to keep.
 */
export async function storedSigningSecret(
  db: Queryable,
  secretsKey: SecretsKeyring,
  workspaceId: string,
): Promise<string> {
  const row: Pick<ConnectionRow, 'webhook_secret_sealed'> | undefined = await db('processor_connections')
    .where({ workspace_id: workspaceId })
    .first('webhook_secret_sealed');
  if (!row)
    throw invalidField(
      'webhook_secret',
      'is required to connect: paste the signing secret of the endpoint you created in Stripe for the webhook URL',
    );
  return openSecret(secretsKey, row.webhook_secret_sealed);
}

/**
 * The stored key a connect without a key must try again before keeping it (docs/processor.md,
 * "Reconnecting"): the key of a connection that is not `connected`, since keeping it is what
 * makes it `connected` again, as a new key would. Null when there is nothing to try: no
 * connection, no stored key, or a `connected` connection, which keeps its key as it is (the
 * key was tried when it was given).
 */
export async function keptKeyToCheck(
  db: Queryable,
  secretsKey: SecretsKeyring,
  workspaceId: string,
): Promise<{ api_key: string; sealed: string } | null> {
  const row = await db<ConnectionRow>('processor_connections')
    .where({ workspace_id: workspaceId })
    .first('status', 'api_key_sealed');
  if (!row || row.api_key_sealed === null || row.status === 'connected') return null;
  return { api_key: openSecret(secretsKey, row.api_key_sealed), sealed: row.api_key_sealed };
}

const BACKFILL_RESET = {
  backfill_phase: null,
  backfill_cursor: null,
  backfill_error: null,
  backfill_locked_until: null,
  backfill_run_id: null,
  backfill_waiting_until: null,
  backfill_counts: JSON.stringify({ customers: 0, subscriptions: 0, invoices: 0 }),
};

/**
 * Connects (or reconnects) a workspace's processor: the one function behind the CLI's
 * `processor connect` and the dashboard's Settings, Processor. The signing secret is always
 * replaced. A key given replaces the stored one and queues a backfill; no key given keeps the
 * stored one as it is (sealed value, last four, backfill: nothing is queued, the key did not
 * change), so an owner rotating the signing secret does not lose the key; removing it is
 * removeProcessorKey. Status: see statusAfterConnect. The connection id (its URL) is kept across
 * reconnections, so the endpoint registered in Stripe keeps working.
 */
/**
 * Checks a connection's input (the ids, the secret's and the key's shapes) and returns it
 * typed, or throws invalid_param: callers check it before a key is sent to Stripe, so a
 * malformed or full-access key never leaves the service.
 */
export function validateProcessorConnection(input: unknown): ConnectProcessorInput {
  return validateConnect(input);
}

export async function connectProcessor(
  db: Db,
  secretsKey: SecretsKeyring,
  input: ConnectProcessorInput,
  keyCheck: KeyCheck,
  actor: Actor,
): Promise<ConnectionRow> {
  const valid = validateConnect(input);
  const given = valid.api_key !== undefined;
  if (given ? keyCheck !== 'accepted' : keyCheck === 'accepted')
    throw new Error('a key must be checked before it is stored');
  return inTransaction(db, async (trx) => {
    // Locked, so a first signed event connecting it meanwhile is seen (or waits for this).
    const previous = await lockConnectionIfAny(trx, valid.workspace_id, actor);
    const kept = !given && previous !== undefined && previous.api_key_sealed !== null;
    // A kept key makes a connection that is not `connected` connected only once it answered again.
    const keptChecked = kept && typeof keyCheck === 'object' && keyCheck.kept_key_accepted === previous.api_key_sealed;
    if (kept && previous.status !== 'connected' && !keptChecked)
      throw conflict('The stored API key changed while it was being tried with Stripe; connect again');
    const status = statusAfterConnect(previous?.status ?? null, given || keptChecked ? 'accepted' : 'none');
    const mode = given ? modeAfterConnect(previous?.mode ?? null, modeOfKey(valid.api_key!), valid) : null;
    const stillConnected = status === 'connected' && previous?.status === 'connected';
    // An import the owner's disconnect interrupted goes on from where it stopped once the same
    // key is connected again (a new key may be another Stripe account: it starts afresh, below).
    const resumeInterrupted =
      kept && status === 'connected' && isResumable(previous) && previous.backfill_error === STOPPED_BY_DISCONNECT;
    const values = {
      provider: valid.provider,
      status,
      webhook_secret_sealed: sealSecret(secretsKey, valid.webhook_secret),
      webhook_secret_last4: lastFour(valid.webhook_secret),
      ...(given
        ? {
            api_key_sealed: sealSecret(secretsKey, valid.api_key!),
            api_key_last4: lastFour(valid.api_key!),
            mode: mode!.to,
            backfill_status: 'queued',
            ...BACKFILL_RESET,
          }
        : kept
          ? resumeInterrupted
            ? RESUME_BACKFILL
            : {}
          : { api_key_sealed: null, api_key_last4: null, backfill_status: 'idle', ...BACKFILL_RESET }),
      disconnected_reason: null,
      connected_at: stillConnected ? previous.connected_at : status === 'connected' ? trx.fn.now() : null,
      updated_at: trx.fn.now(),
    };
    const [row] = (await trx('processor_connections')
      .insert({ id: plannedConnectionId(secretsKey, valid.workspace_id), workspace_id: valid.workspace_id, ...values })
      .onConflict('workspace_id')
      .merge(values)
      .returning('*')) as ConnectionRow[];
    await setWorkspaceProcessor(trx, valid.workspace_id, status);
    // A new signing secret: deliveries refused under the one before are not its count. The same
    // secret (a connect that changed only the key) keeps the count.
    if (previous === undefined || openSecret(secretsKey, previous.webhook_secret_sealed) !== valid.webhook_secret)
      await clearRefusedDeliveries(trx, row!.id);
    await recordSecurityEvent(trx, {
      workspace_id: valid.workspace_id,
      action: 'processor.connected',
      actor,
      target: { type: 'processor_connection', id: row!.id, label: valid.provider },
      details: {
        provider: valid.provider,
        status,
        previous_status: previous?.status ?? null,
        // Both signing secrets' last four, so a rotation reads "old → new" in the log.
        previous_webhook_secret_last4: previous?.webhook_secret_last4 ?? null,
        webhook_secret_last4: row!.webhook_secret_last4,
        api_key_last4: row!.api_key_last4,
        api_key: given ? 'given' : kept ? 'kept' : 'none',
        mode: row!.mode,
      },
    });
    if (mode?.switched) {
      await recordSecurityEvent(trx, {
        workspace_id: valid.workspace_id,
        action: 'processor.mode_switched',
        actor,
        target: { type: 'processor_connection', id: row!.id, label: valid.provider },
        details: { provider: valid.provider, from: previous!.mode, to: mode.to, api_key_last4: row!.api_key_last4 },
      });
    }
    return row!;
  });
}

/**
 * The mode a key given leaves (docs/processor.md, "Mode"): the key's. A key of the other mode
 * than a connection that has one is refused unless the switch is confirmed, since Stripe's test
 * and live data are two accounts' worth of objects, and what the old mode imported stays.
 */
function modeAfterConnect(
  previous: ProcessorMode | null,
  keyMode: ProcessorMode,
  input: ConnectProcessorInput,
): { to: ProcessorMode; switched: boolean } {
  if (previous === null || previous === keyMode) return { to: keyMode, switched: false };
  if (input.confirm_mode_switch !== true) throw modeSwitchRefusal(previous, keyMode);
  return { to: keyMode, switched: true };
}

/**
 * The status a connect leaves (docs/processor.md, "Reconnecting"). A key Stripe has just
 * answered proves the account: `connected`; that is a key given, or the stored key kept by a
 * connect without one on a connection that is not `connected` (tried again first, as a new key
 * is). Otherwise nothing is proved at connect time, and nothing that works is undone: a
 * connection already `connected` stays so, with the secret it had or a new one (an owner
 * rolling the signing secret in Stripe), and with the key it had, because `pending` would turn
 * the workspace's webhooks off until Stripe's next event, and every event of ours meanwhile
 * would be recorded and never sent. Any other connection with no key (new, `pending`, or
 * `disconnected`) is `pending` until its first correctly signed event.
 */
function statusAfterConnect(previous: ConnectionStatus | null, keyCheck: 'none' | 'accepted'): ConnectionStatus {
  if (keyCheck === 'accepted') return 'connected';
  return previous === 'connected' ? 'connected' : 'pending';
}

async function setWorkspaceProcessor(trx: Queryable, workspaceId: string, status: ConnectionStatus): Promise<void> {
  await trx('workspaces')
    .where({ id: workspaceId })
    .update({ processor_status: status === 'connected' ? 'connected' : 'disconnected', updated_at: trx.fn.now() });
}

/**
 * The workspace's connection, if it has one, locked, once the workspace and the actor are checked.
 */
async function lockConnectionIfAny(
  trx: Transaction,
  workspaceId: string,
  actor: Actor,
): Promise<ConnectionRow | undefined> {
  await getWorkspace(trx, workspaceId);
  if (actor.user_id) await requireActor(trx, actor.user_id, workspaceId);
  return trx<ConnectionRow>('processor_connections').where({ workspace_id: workspaceId }).forUpdate().first();
}

/** The workspace's connection, locked, as lockConnectionIfAny; 404 without one. */
async function lockConnection(trx: Transaction, workspaceId: string, actor: Actor): Promise<ConnectionRow> {
  const existing = await lockConnectionIfAny(trx, workspaceId, actor);
  if (!existing) throw notFound(`Workspace ${workspaceId} has no processor connection`);
  return existing;
}

/**
 * The reason a backfill stopped by a disconnect records; connecting again resumes it
 * (connectProcessor).
 */
const STOPPED_BY_DISCONNECT = 'disconnected';

/**
 * The columns that stop a queued or running backfill, failed with `reason`, and free its lease.
 * Its phase, cursor and counts are kept, so the next run can resume from them (requestBackfill).
 */
function stopBackfill(existing: ConnectionRow, reason: string) {
  const running = existing.backfill_status === 'running' || existing.backfill_status === 'queued';
  return {
    backfill_status: running ? 'failed' : existing.backfill_status,
    backfill_error: running ? reason : existing.backfill_error,
    backfill_locked_until: null,
    backfill_run_id: null,
    backfill_waiting_until: null,
  };
}

/** A run that stopped before it finished and kept where it was: the next run resumes from there. */
function isResumable(connection: ConnectionRow): boolean {
  return connection.backfill_status === 'failed' && connection.backfill_phase !== null;
}

/**
 * The columns that queue a backfill again from where its last run stopped (phase, cursor and counts
 * kept).
 */
const RESUME_BACKFILL = {
  backfill_status: 'queued',
  backfill_error: null,
  backfill_run_id: null,
  backfill_locked_until: null,
  backfill_waiting_until: null,
  backfill_finished_at: null,
};

export async function disconnectProcessor(db: Db, workspaceId: string, actor: Actor): Promise<ConnectionRow> {
  return inTransaction(db, async (trx) => {
    const existing = await lockConnection(trx, workspaceId, actor);
    if (existing.status === 'disconnected')
      throw conflict(`The processor of workspace ${workspaceId} is already disconnected`);
    const [row] = (await trx('processor_connections')
      .where({ id: existing.id })
      .update({
        status: 'disconnected',
        disconnected_reason: 'owner',
        ...stopBackfill(existing, STOPPED_BY_DISCONNECT),
        updated_at: trx.fn.now(),
      })
      .returning('*')) as ConnectionRow[];
    await setWorkspaceProcessor(trx, workspaceId, 'disconnected');
    await recordSecurityEvent(trx, {
      workspace_id: workspaceId,
      action: 'processor.disconnected',
      actor,
      target: { type: 'processor_connection', id: existing.id, label: existing.provider },
      details: { provider: existing.provider, reason: 'owner' },
    });
    return row!;
  });
}

/**
 * Removes the stored API key on purpose (the dashboard's "Remove API key"): decline codes are
 * no longer looked up (campaigns open with `unknown`) and backfills need a key again. The
 * status is unchanged: events keep arriving signed with the webhook secret. A backfill queued
 * or running stops, failed with "API key removed". Logged as `processor.key_removed`.
 */
export async function removeProcessorKey(db: Db, workspaceId: string, actor: Actor): Promise<ConnectionRow> {
  return inTransaction(db, async (trx) => {
    const existing = await lockConnection(trx, workspaceId, actor);
    if (existing.api_key_sealed === null)
      throw conflict(`The processor of workspace ${workspaceId} has no API key to remove`);
    const [row] = (await trx('processor_connections')
      .where({ id: existing.id })
      .update({
        api_key_sealed: null,
        api_key_last4: null,
        ...stopBackfill(existing, 'API key removed'),
        updated_at: trx.fn.now(),
      })
      .returning('*')) as ConnectionRow[];
    await recordSecurityEvent(trx, {
      workspace_id: workspaceId,
      action: 'processor.key_removed',
      actor,
      target: { type: 'processor_connection', id: existing.id, label: existing.provider },
      details: { provider: existing.provider, api_key_last4: existing.api_key_last4 },
    });
    return row!;
  });
}

export const PROCESSOR_ACTOR: Actor = { type: 'processor', label: 'stripe' };

/**
 * Stripe answered the stored key with 401: the key was rolled or revoked. The connection is
 * `disconnected` (webhooks stop, as for any disconnected processor) and the security log says
 * why, once. Takes the transaction of the caller (an event's apply, or the backfill).
 *
 * Once per transition: the row is locked and a connection already refused is left alone, so
 * two workers meeting the 401 at once make one transition (the second waits for the first's
 * commit and then reads it refused). The transition also owes the owners an email
 * (`key_rejection_mail_due`), committed or rolled back with it, which a worker takes and sends
 * after the commit (`claimKeyRejectionMails`): never from inside this transaction, which may
 * still roll back. Connecting again clears `disconnected_reason`, so a later refusal of the
 * next key is a new transition and a new email.
 */
export async function rejectProcessorKey(trx: Transaction, connectionId: string): Promise<void> {
  const connection = await trx<ConnectionRow>('processor_connections').where({ id: connectionId }).forUpdate().first();
  if (!connection || connection.disconnected_reason === 'key_rejected') return;
  await trx('processor_connections').where({ id: connectionId }).update({
    status: 'disconnected',
    disconnected_reason: 'key_rejected',
    key_rejection_mail_due: true,
    updated_at: trx.fn.now(),
  });
  await setWorkspaceProcessor(trx, connection.workspace_id, 'disconnected');
  await recordSecurityEvent(trx, {
    workspace_id: connection.workspace_id,
    action: 'processor.key_rejected',
    actor: PROCESSOR_ACTOR,
    target: { type: 'processor_connection', id: connection.id, label: connection.provider },
    details: { provider: connection.provider, api_key_last4: connection.api_key_last4 },
  });
}

/**
 * Takes the key-refusal emails owed (`rejectProcessorKey`), each by exactly one caller: the
 * UPDATE that clears the flag returns the row to one worker only (another running it at once
 * waits for the row and then finds the flag cleared). Returns the workspaces to email: those
 * still refused; a connection connected again before its email was taken owes none any more.
 * At most once: an email that then fails to send is not owed again (logged by the mailer).
 */
export async function claimKeyRejectionMails(db: Queryable): Promise<Array<{ workspace_id: string }>> {
  const { rows } = await db.raw<{ rows: Array<{ workspace_id: string; disconnected_reason: string | null }> }>(
    `UPDATE processor_connections SET key_rejection_mail_due = false
      WHERE key_rejection_mail_due
      RETURNING workspace_id, disconnected_reason`,
  );
  return rows.filter((row) => row.disconnected_reason === 'key_rejected').map(({ workspace_id }) => ({ workspace_id }));
}

/** The connection an incoming request names, with its signing secret opened; null when unknown. */
export async function connectionForReceive(
  db: Queryable,
  secretsKey: SecretsKeyring,
  provider: string,
  connectionId: string,
): Promise<{ connection: ConnectionRow; webhookSecret: string } | null> {
  const connection = (await db('processor_connections').where({ id: connectionId, provider }).first()) as
    ConnectionRow | undefined;
  if (!connection) return null;
  return { connection, webhookSecret: openSecret(secretsKey, connection.webhook_secret_sealed) };
}

export function apiKeyOf(secretsKey: SecretsKeyring, connection: ConnectionRow): string | null {
  return connection.api_key_sealed === null ? null : openSecret(secretsKey, connection.api_key_sealed);
}

export async function connectionOfWorkspace(db: Queryable, workspaceId: string): Promise<ConnectionRow> {
  const row = await db<ConnectionRow>('processor_connections').where({ workspace_id: workspaceId }).first();
  if (!row)
    throw notFound(`Workspace ${workspaceId} has no processor connection; connect one with \`processor connect\``);
  return row;
}

export interface ParkedEvent {
  id: string;
  psp_event_id: string;
  type: string;
  received_at: string;
  attempts: number;
  last_error: string | null;
}

/**
 * The newest error of the events still waiting for a retry or parked, in the owner's words:
 * what went wrong (a permission the key lacks, a value refused) without reading the list.
 */
export interface LatestEventError {
  psp_event_id: string;
  type: string;
  /**
   * `waiting`: another attempt is due at next_attempt_at; `parked`: no more attempts until a retry.
   */
  state: 'waiting' | 'parked';
  attempts: number;
  error: string;
  next_attempt_at: string | null;
}

interface FailingEventRow {
  connection_id: string;
  psp_event_id: string;
  type: string;
  state: string;
  attempts: number;
  last_error: string;
  next_attempt_at: Date;
}

export interface ProcessorStatusView {
  provider: ProcessorProvider;
  status: ConnectionStatus;
  webhook_url: string;
  webhook_secret_last4: string;
  api_key_last4: string | null;
  mode: ProcessorMode | null;
  disconnected_reason: string | null;
  connected_at: string | null;
  last_event_at: string | null;
  events_received: number;
  events_pending: number;
  events_parked: number;
  /** Stored, answered 2xx and not applied, by reason (modes.ts). */
  events_set_aside: Record<SetAsideReason, number>;
  parked_events: ParkedEvent[];
  latest_event_error: LatestEventError | null;
  /**
   * Deliveries refused for a bad or stale signature since the signing secret was set; null when
   * none.
   */
  deliveries_refused: RefusedDeliveries | null;
  backfill: {
    status: ConnectionRow['backfill_status'];
    phase: BackfillPhase | null;
    counts: Record<BackfillPhase, number>;
    error: string | null;
    started_at: string | null;
    finished_at: string | null;
    /** Waiting out Stripe's 429s until then (null when not waiting). */
    waiting_until: string | null;
    /** A failed run that kept its place: Import again (`processor sync`) goes on from there. */
    resumable: boolean;
  };
}

/** Per set-aside reason: its rows plus those the retention deleted (`set_aside_other_mode`, …). */
const SET_ASIDE_COUNTS = SET_ASIDE_REASONS.map(
  (reason) =>
    `(c.pruned_${reason} + count(e.id) FILTER (WHERE e.ignored_reason = '${reason}'))::float8 AS set_aside_${reason}`,
).join(',\n            ');

/**
 * A connection's events as `processor status` counts them, in one statement, so one snapshot:
 * every event ever received (the rows, plus those the retention deleted, counted on the
 * connection in the statement that deleted them: retention.ts), the newest one's time (the
 * retention never deletes it), and those waiting, parked and set aside by reason.
 */
async function eventCounts(
  db: Queryable,
  connectionId: string,
): Promise<{
  received: number;
  last: Date | null;
  pending: number;
  parked: number;
  setAside: Record<SetAsideReason, number>;
}> {
  // bigint sums: node-postgres reads them as strings; float8 holds any count exactly to 2^53.
  const { rows } = await db.raw<{ rows: Array<Record<string, number | Date | null>> }>(
    `SELECT (c.pruned_events + count(e.id))::float8 AS received,
            max(e.received_at) AS last,
            count(e.id) FILTER (WHERE e.state = 'pending')::float8 AS pending,
            count(e.id) FILTER (WHERE e.state = 'parked')::float8 AS parked,
            ${SET_ASIDE_COUNTS}
       FROM processor_connections c
       LEFT JOIN processor_events e ON e.connection_id = c.id
      WHERE c.id = ?
      GROUP BY c.id`,
    [connectionId],
  );
  const row = rows[0]!;
  return {
    received: row.received as number,
    last: row.last as Date | null,
    pending: row.pending as number,
    parked: row.parked as number,
    setAside: Object.fromEntries(
      SET_ASIDE_REASONS.map((reason) => [reason, row[`set_aside_${reason}`] as number]),
    ) as Record<SetAsideReason, number>,
  };
}

/**
 * What `processor status` and the dashboard show: never a secret, only its last four characters.
 */
export async function processorStatus(
  db: Queryable,
  baseUrl: string,
  workspaceId: string,
): Promise<ProcessorStatusView> {
  const connection = await connectionOfWorkspace(db, workspaceId);
  const received = await eventCounts(db, connection.id);
  const parked: Array<Omit<ParkedEvent, 'received_at'> & { received_at: Date }> = await db('processor_events')
    .where({ connection_id: connection.id, state: 'parked' })
    .orderBy('received_at', 'desc')
    .limit(20)
    .select('id', 'psp_event_id', 'type', 'received_at', 'attempts', 'last_error');
  // The partial index processor_events_failing_idx (migration 0029) holds exactly these rows.
  const failing = await db<FailingEventRow>('processor_events')
    .where({ connection_id: connection.id })
    .whereIn('state', ['pending', 'parked'])
    .whereNotNull('last_error')
    .orderBy('received_at', 'desc')
    .first('psp_event_id', 'type', 'state', 'attempts', 'last_error', 'next_attempt_at');
  return {
    provider: connection.provider,
    status: connection.status,
    webhook_url: webhookUrlOf(baseUrl, connection),
    webhook_secret_last4: connection.webhook_secret_last4,
    api_key_last4: connection.api_key_last4,
    mode: connection.mode,
    disconnected_reason: connection.disconnected_reason,
    connected_at: toIsoMillisOrNull(connection.connected_at),
    last_event_at: toIsoMillisOrNull(received.last),
    events_received: received.received,
    events_pending: received.pending,
    events_parked: received.parked,
    events_set_aside: received.setAside,
    parked_events: parked.map((row) => ({ ...row, received_at: toIsoMillis(row.received_at) })),
    latest_event_error: failing
      ? {
          psp_event_id: failing.psp_event_id,
          type: failing.type,
          state: failing.state === 'parked' ? 'parked' : 'waiting',
          attempts: failing.attempts,
          error: failing.last_error,
          next_attempt_at: failing.state === 'parked' ? null : toIsoMillis(failing.next_attempt_at),
        }
      : null,
    deliveries_refused: await refusedDeliveriesOf(db, connection.id, received.last),
    backfill: {
      status: connection.backfill_status,
      phase: connection.backfill_phase,
      counts: connection.backfill_counts,
      error: connection.backfill_error,
      started_at: toIsoMillisOrNull(connection.backfill_started_at),
      finished_at: toIsoMillisOrNull(connection.backfill_finished_at),
      waiting_until:
        connection.backfill_status === 'running' ? toIsoMillisOrNull(connection.backfill_waiting_until) : null,
      resumable: isResumable(connection),
    },
  };
}

/**
 * The Settings, Processor page: the status once connected, else the URL to register in Stripe
 * first.
 */
export type ProcessorSetupView = ProcessorStatusView | { status: 'not_connected'; provider: null; webhook_url: string };

export async function processorSetup(
  db: Queryable,
  secretsKey: SecretsKeyring,
  baseUrl: string,
  workspaceId: string,
): Promise<ProcessorSetupView> {
  await getWorkspace(db, workspaceId);
  const exists = await db<{ id: string; workspace_id: string }>('processor_connections')
    .where({ workspace_id: workspaceId })
    .first('id');
  if (exists) return processorStatus(db, baseUrl, workspaceId);
  const id = plannedConnectionId(secretsKey, workspaceId);
  return { status: 'not_connected', provider: null, webhook_url: webhookUrlOf(baseUrl, { id, provider: 'stripe' }) };
}

/**
 * Whether the workspace's processor connection is set up and syncing, for every role's Settings,
 * Workspace page: a status only, nothing of its secrets (the Processor page, owners only, has the
 * rest).
 */
export async function processorConnectionStatus(
  db: Queryable,
  workspaceId: string,
): Promise<ConnectionStatus | 'not_connected'> {
  const connection = await db<{ status: ConnectionStatus; workspace_id: string }>('processor_connections')
    .where({ workspace_id: workspaceId })
    .first('status');
  return connection?.status ?? 'not_connected';
}

/**
 * `processor sync` and the dashboard's Import again: queues a backfill. One run per workspace:
 * a queued or running one is a conflict, in words. A run that failed part-way (Stripe's
 * answers, a disconnect, a worker that gave up) goes on from its cursor with its counts; after
 * a run that finished, or none, a new run starts from the first customer, since that is the
 * only way to pick up what changed before the connection was listening.
 */
export async function requestBackfill(db: Db, workspaceId: string): Promise<ConnectionRow> {
  return inTransaction(db, async (trx) => {
    const connection = await trx<ConnectionRow>('processor_connections')
      .where({ workspace_id: workspaceId })
      .forUpdate()
      .first();
    if (!connection) throw notFound(`Workspace ${workspaceId} has no processor connection`);
    if (connection.api_key_sealed === null) {
      throw conflict('A backfill needs the API key: connect again with --api-key rk_…');
    }
    if (connection.status === 'disconnected') throw conflict('The processor is disconnected: connect it again first');
    if (connection.backfill_status === 'queued' || connection.backfill_status === 'running') {
      throw conflict(
        connection.backfill_status === 'queued'
          ? 'An import is already queued and starts in a moment; there is no need to start another'
          : 'An import is already running; it goes on by itself, so wait for it to finish rather than start another',
      );
    }
    const [row] = (await trx('processor_connections')
      .where({ id: connection.id })
      .update({
        ...(isResumable(connection)
          ? RESUME_BACKFILL
          : {
              ...BACKFILL_RESET,
              backfill_status: 'queued',
              backfill_started_at: null,
              backfill_finished_at: null,
            }),
        updated_at: trx.fn.now(),
      })
      .returning('*')) as ConnectionRow[];
    return row!;
  });
}

export async function connectionById(db: Queryable, connectionId: string): Promise<ConnectionRow> {
  const row = (await db('processor_connections').where({ id: connectionId }).first()) as ConnectionRow | undefined;
  if (!row) throw notFound(`No processor connection ${connectionId}`);
  return row;
}

/**
 * Takes the next backfill to run: one queued, or one whose worker stopped renewing its lease
 * (it died). The lease is what makes it one run per workspace across worker replicas.
 */
export async function claimBackfill(db: Db, leaseMs: number): Promise<ConnectionRow | null> {
  return inTransaction(db, async (trx) => {
    const candidate = await trx<ConnectionRow>('processor_connections')
      .whereIn('backfill_status', ['queued', 'running'])
      .where((query) => {
        void query.whereNull('backfill_locked_until').orWhere('backfill_locked_until', '<', trx.fn.now());
      })
      .whereNot({ status: 'disconnected' })
      .orderBy('updated_at')
      .forUpdate()
      .skipLocked()
      .first();
    if (!candidate) return null;
    const [row] = (await trx('processor_connections')
      .where({ id: candidate.id })
      .update({
        backfill_status: 'running',
        backfill_run_id: trx.raw('gen_random_uuid()'),
        backfill_locked_until: trx.raw(`now() + (? * interval '1 millisecond')`, [leaseMs]),
        backfill_started_at: trx.raw('coalesce(backfill_started_at, now())'),
        backfill_waiting_until: null,
      })
      .returning('*')) as ConnectionRow[];
    return row!;
  });
}

/** The run that holds a backfill: its connection and the id its claim was given. */
export interface BackfillRun {
  id: string;
  backfill_run_id: string | null;
}

/**
 * Records the backfill's progress in the transaction that imported the item: after a crash the
 * run resumes after the last item that committed, never before or after it. Renews the lease.
 * False when the run was superseded (taken over, reconnected, disconnected): it must stop.
 */
export async function saveBackfillProgress(
  trx: Transaction,
  run: BackfillRun,
  progress: { phase: BackfillPhase; cursor: string | null; imported?: { phase: BackfillPhase; count: number } },
  leaseMs: number,
): Promise<boolean> {
  const updated = await trx('processor_connections')
    .where({ id: run.id, backfill_run_id: run.backfill_run_id, backfill_status: 'running' })
    .update({
      backfill_phase: progress.phase,
      backfill_cursor: progress.cursor,
      backfill_waiting_until: null,
      backfill_locked_until: trx.raw(`now() + (? * interval '1 millisecond')`, [leaseMs]),
      ...(progress.imported !== undefined &&
        progress.imported.count > 0 && {
          backfill_counts: trx.raw(
            `jsonb_set(backfill_counts, ?, to_jsonb(coalesce((backfill_counts ->> ?)::bigint, 0) + ?))`,
            [`{${progress.imported.phase}}`, progress.imported.phase, progress.imported.count],
          ),
        }),
    });
  return updated === 1;
}

export async function finishBackfill(db: Db, run: BackfillRun, error: string | null): Promise<void> {
  await db('processor_connections')
    .where({ id: run.id, backfill_run_id: run.backfill_run_id, backfill_status: 'running' })
    .update({
      backfill_status: error === null ? 'succeeded' : 'failed',
      backfill_error: error === null ? null : error.slice(0, 1000),
      backfill_locked_until: null,
      backfill_cursor: error === null ? null : db.raw('backfill_cursor'),
      backfill_waiting_until: null,
      backfill_finished_at: db.fn.now(),
    });
}

/**
 * Says the run is waiting out Stripe's 429s until `until` (null: it is not), for the page and
 * `processor status`; renews the lease as far as the wait, so the run stays its worker's.
 */
export async function setBackfillWaiting(
  db: Queryable,
  run: BackfillRun,
  until: Date | null,
  leaseMs: number,
): Promise<void> {
  await db('processor_connections')
    .where({ id: run.id, backfill_run_id: run.backfill_run_id, backfill_status: 'running' })
    .update({
      backfill_waiting_until: until,
      backfill_locked_until: db.raw(`now() + (? * interval '1 millisecond')`, [leaseMs]),
    });
}

/** Keeps a running backfill's lease while it waits (on a 429) or works through a slow page. */
export async function renewBackfillLease(db: Queryable, run: BackfillRun, leaseMs: number): Promise<void> {
  await db('processor_connections')
    .where({ id: run.id, backfill_run_id: run.backfill_run_id, backfill_status: 'running' })
    .update({ backfill_locked_until: db.raw(`now() + (? * interval '1 millisecond')`, [leaseMs]) });
}
