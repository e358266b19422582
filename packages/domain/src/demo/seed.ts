import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { DEFAULT_WEBHOOK_LOG_RETENTION_DAYS, invalidField, toIsoMillis, type SecretsKeyring } from '@retention/core';
import { inTransaction, type Db, type Transaction } from '@retention/db';
import { hashPassword } from '../accounts/passwords.js';
import { loadFixtures } from '../fixtures/load.js';
import type { FixtureWorkspaceResult } from '../fixtures/schema.js';
import { OPERATOR, recordSecurityEvent, type Actor } from '../security-log.js';
import { endpointTarget } from '../webhooks/endpoints.js';
import { assertPastDate, inputValidator } from '../validate.js';
import {
  DEMO_BUSINESS,
  DEMO_ENDPOINTS,
  DEMO_ENDPOINTS_ADDED_DAYS_AGO,
  DEMO_OPERATOR,
  DEMO_OWNER_EMAIL,
} from './catalog.js';
import { buildDemoFixture, MIN_DEMO_CUSTOMERS, type DemoSummary } from './generate.js';
import { SeededRandom } from './random.js';
import { demoReceiverUrl } from './receiver.js';
import { replayHistory, replayWebhookLog } from './replay.js';

export const DEMO_DEFAULT_CUSTOMERS = 500;
export const DEMO_DEFAULT_SEED = 1;
export const DEMO_MAX_CUSTOMERS = 100_000;
export { MIN_DEMO_CUSTOMERS };

export interface SeedDemoOptions {
  /** 500 by default; at least 10, so that every status and outcome appears. */
  customers?: number;
  /** Any 32-bit unsigned integer; the same seed gives the same data. 1 by default. */
  seed?: number;
  /** The API's public URL (BASE_URL), for the ready-to-paste curl line. */
  baseUrl: string;
  /** The end of the 365 days the data spans; now by default, and never later. */
  now?: Date;
  /**
   * The origin of a demo receiver (`npm start`'s, `https://127.0.0.1:PORT`) for the webhook
   * endpoints to point at (`demoReceiverUrl`); the catalog's `.example` URLs when absent.
   */
  receiver?: string;
  /** SECRETS_KEY (config.secretsKey): the demo endpoints' signing secrets are sealed with it. */
  secretsKey: SecretsKeyring;
  /**
   * Who makes the demo, as the security log names them for its token and its endpoints (the
   * Tokens page names the token's maker the same way): the operator CLI (`demo seed`) by
   * default; `npm start` passes itself.
   */
  actor?: Actor;
}

export interface DemoSeedResult {
  object: 'demo_seed';
  seed: number;
  as_of: string;
  workspace: { id: string; name: string };
  owner: { id: string; email: string };
  /** A fresh API token of the demo workspace, shown this once. */
  token: string;
  token_id: string;
  curl: string;
  counts: DemoSummary;
}

const validateOptions = inputValidator(
  Type.Object(
    {
      customers: Type.Integer({
        minimum: MIN_DEMO_CUSTOMERS,
        maximum: DEMO_MAX_CUSTOMERS,
        errorMessage: `must be an integer between ${MIN_DEMO_CUSTOMERS} and ${DEMO_MAX_CUSTOMERS}`,
      }),
      seed: Type.Integer({
        minimum: 0,
        maximum: 0xffff_ffff,
        errorMessage: 'must be an integer between 0 and 4294967295',
      }),
      baseUrl: Type.String({ pattern: '^https?://', errorMessage: 'must be an http or https URL' }),
    },
    { additionalProperties: false },
  ),
);

/**
 * The security log's records of what the seed made that a person could have made too: the
 * endpoints (`webhook.created`, as createEndpoint records it, at the time they were added) and
 * the token (`token.created`, as createToken records it, now; the token's `created_at` says
 * now too). The replayed history has its own records (replay.ts).
 */
async function recordMaking(
  trx: Transaction,
  workspace: FixtureWorkspaceResult,
  when: { actor: Actor; endpointsAddedAt: number; now: number },
): Promise<void> {
  const endpoints = await trx('webhook_endpoints')
    .whereIn(
      'id',
      Object.values(workspace.webhooks).map((webhook) => webhook.id),
    )
    .orderBy('name')
    .select<Array<{ id: string; name: string; url: string; event_types: string[] }>>(
      'id',
      'name',
      'url',
      'event_types',
    );
  for (const endpoint of endpoints) {
    await recordSecurityEvent(trx, {
      workspace_id: workspace.id,
      action: 'webhook.created',
      actor: when.actor,
      target: endpointTarget(endpoint),
      details: { name: endpoint.name, events: endpoint.event_types },
      at: new Date(when.endpointsAddedAt),
    });
  }
  const [token] = await trx('api_tokens')
    .where({ id: workspace.tokens.demo!.id })
    .update({ created_at: new Date(when.now) })
    .returning<Array<{ id: string; name: string; token_hint: string; rate_limit_per_minute: number }>>([
      'id',
      'name',
      'token_hint',
      'rate_limit_per_minute',
    ]);
  await recordSecurityEvent(trx, {
    workspace_id: workspace.id,
    action: 'token.created',
    actor: when.actor,
    target: { type: 'api_token', id: token!.id, label: token!.name },
    details: { hint: token!.token_hint, rate_limit_per_minute: token!.rate_limit_per_minute },
    at: new Date(when.now),
  });
}

/**
 * The demo admin's address in this demo: the catalog's (`ops@northwind.example`) while no account
 * of this database signs in with it, else the first of `ops+2@…`, `ops+3@…` that none does. An
 * address signs in to one workspace only (users_email_with_password_key), and the admin signs in
 * in every demo: a later demo in the same database (`demo seed` again, or `npm start` on a
 * database whose first demo was removed) gave its admin, under the same address, neither a
 * password nor a last sign-in ("Never" on Team, beside their recoveries). Seeds wait for each
 * other here, so two at once do not pick the same one.
 */
async function freeAdminAddress(trx: Transaction, catalog: string): Promise<string> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['retention.demo-admin-address']);
  const at = catalog.lastIndexOf('@');
  const [local, domain] = [catalog.slice(0, at), catalog.slice(at + 1)];
  const taken = new Set(
    (
      await trx('users')
        .whereNotNull('password_hash')
        .whereRaw('lower(email) LIKE lower(?)', [`${local}%@${domain}`])
        .pluck<string[]>('email')
    ).map((email) => email.toLowerCase()),
  );
  let address = catalog;
  for (let tag = 2; taken.has(address.toLowerCase()); tag += 1) address = `${local}+${tag}@${domain}`;
  return address;
}

/** Quotes a word for a POSIX shell. */
const shellQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** The default WEBHOOK_LOG_RETENTION_DAYS: deliveries older than this were pruned. */
const WEBHOOK_LOG_DAYS = DEFAULT_WEBHOOK_LOG_RETENTION_DAYS;
const DAY = 86_400_000;

/**
 * Creates a demo workspace with a realistic business's data (see `buildDemoFixture`), an
 * owner, an admin and a member, two webhook endpoints and a fresh API token, in one
 * transaction. The token and the endpoints are in the security log as made by
 * `options.actor`, as a token or an endpoint made any other way is: `token.created` now,
 * `webhook.created` when the endpoints were added (their `created_at`). People, customers and subscriptions are imported through the fixture loader;
 * the campaigns and cancel sessions are played through the domain actions at the times they
 * happened (replay.ts), so each has the timeline a real one would: its events, their
 * deliveries to the endpoints, who closed it by hand. Those events are history: they leave
 * the outbox as they are written, and no webhook goes out for them.
 */
export async function seedDemo(db: Db, options: SeedDemoOptions): Promise<DemoSeedResult> {
  const valid = validateOptions({
    customers: options.customers ?? DEMO_DEFAULT_CUSTOMERS,
    seed: options.seed ?? DEMO_DEFAULT_SEED,
    baseUrl: options.baseUrl,
  });
  const now = (options.now ?? new Date()).getTime();
  if (!Number.isFinite(now)) throw invalidField('now', 'must be a valid date');
  assertPastDate(new Date(now), 'now');
  const { file, summary } = buildDemoFixture({ customers: valid.customers, seed: valid.seed, now });
  const { campaigns = [], cancel_sessions: cancelSessions = [], ...imported } = file.workspaces[0]!;
  // Its catalog URL, or `npm start`'s local receiver.
  const endpointUrl = ({ key, url }: (typeof DEMO_ENDPOINTS)[number]) =>
    options.receiver === undefined ? url : demoReceiverUrl(options.receiver, key);
  const endpointsAddedAt = now - DEMO_ENDPOINTS_ADDED_DAYS_AGO * DAY;
  // The admin's password: random, never shown, as a teammate's own is to the owner (hashed before
  // the transaction opens: it is memory-hard).
  const adminPasswordHash = await hashPassword(randomBytes(32).toString('base64url'));
  const loaded = await inTransaction(db, async (trx) => {
    const adminEmail = await freeAdminAddress(trx, imported.users?.find((user) => user.key === 'admin')?.email ?? '');
    const workspace = (
      await loadFixtures(trx, options.secretsKey, {
        workspaces: [
          {
            ...imported,
            users: imported.users?.map((user) => (user.key === 'admin' ? { ...user, email: adminEmail } : user)),
            webhooks: DEMO_ENDPOINTS.map((endpoint) => ({
              key: endpoint.key,
              name: endpoint.name,
              url: endpointUrl(endpoint),
              events: [...endpoint.events],
            })),
          },
        ],
      })
    ).workspaces.demo!;
    await replayHistory(trx, {
      workspaceId: workspace.id,
      loaded: workspace,
      campaigns,
      cancelSessions,
      operator: { user_id: workspace.users.admin!, ...DEMO_OPERATOR },
      now,
    });
    // The admin marked campaigns recovered by hand (the security log says when, from where):
    // they were signed in then, and the Team page says so rather than "Never", with a password of
    // their own: without one they read as an account the operator made that never signed up, which
    // an invitation for another role takes over (ops, an admin who signed in, silently made a
    // member); with one, inviting them is refused as already a member. In every demo, the first
    // of a database or a later one (freeAdminAddress).
    await trx('users')
      .where({ id: workspace.users.admin! })
      .update({
        password_hash: adminPasswordHash,
        last_sign_in_at: trx('security_events')
          .where({ workspace_id: workspace.id, actor_user_id: workspace.users.admin! })
          .max('created_at'),
      });
    await replayWebhookLog(trx, {
      workspaceId: workspace.id,
      endpoints: DEMO_ENDPOINTS.map((endpoint) => ({
        id: workspace.webhooks[endpoint.key]!.id,
        url: endpointUrl(endpoint),
        events: endpoint.events,
        accepts: endpoint.accepts,
      })),
      connectedAt: endpointsAddedAt,
      keptSince: now - WEBHOOK_LOG_DAYS * DAY,
      now,
      rng: new SeededRandom(valid.seed ^ 0x5eed),
    });
    await recordMaking(trx, workspace, {
      actor: options.actor ?? OPERATOR,
      endpointsAddedAt,
      now,
    });
    return workspace;
  });
  const token = loaded.tokens.demo!;
  const url = `${valid.baseUrl.replace(/\/+$/, '')}/api/v1/campaigns?status=in_flight`;
  return {
    object: 'demo_seed',
    seed: valid.seed,
    as_of: toIsoMillis(now),
    workspace: { id: loaded.id, name: DEMO_BUSINESS.name },
    owner: { id: loaded.users.owner!, email: DEMO_OWNER_EMAIL },
    token: token.token,
    token_id: token.id,
    curl: `curl -s -H ${shellQuote(`Authorization: Bearer ${token.token}`)} ${shellQuote(url)}`,
    counts: summary,
  };
}
