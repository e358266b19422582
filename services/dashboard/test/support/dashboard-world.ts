import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from '@jest/globals';
import express from 'express';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig, type Config } from '@retention/core';
import type { Db } from '@retention/db';
import { createWebhookSender, hashPassword, inviteMember, loadFixtures, type WebhookSender } from '@retention/domain';
import { createLogger, createMailer, createRedis, waitForRedis, type Mailer, type Redis } from '@retention/runtime';
import {
  redisKeyPrefix,
  runId,
  TEST_REDIS_URL,
  testSecretsKey,
  useTestDatabase,
  testSecretsKeyBytes,
} from '@retention/testkit';
import { ensureDashboardBuilt } from '../../../../scripts/dashboard-build.js';
import { createApp } from '../../../api/src/app.js';
import { DASHBOARD_API_PREFIX, dashboardApi } from '../../../api/src/dashboard/router.js';
import { errorHandler } from '../../../api/src/middleware/errors.js';
import { createWorker, type WorkerHandle } from '../../../worker/src/worker.js';
import { createTestCertificate, type TestCertificate } from '../../../worker/test/support/certificate.js';
import { Receiver } from '../../../worker/test/support/receiver.js';
import { launchChromium } from './chromium.js';

export const PASSWORD = 'correct horse battery staple';

/** A page in a browser context of its own (one device): a desktop window, 10 s waits. */
export async function desktopPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page };
}

/**
 * Runs `use` on a desktop page (as desktopPage) in a browser context of its own whose clock reads
 * in `timezoneId`, signed in as `signedIn` (another context's storage state); closed afterwards.
 */
export async function inZonedPage(
  signedIn: BrowserContext,
  timezoneId: string,
  use: (page: Page) => Promise<void>,
): Promise<void> {
  const browser = signedIn.browser();
  if (!browser) throw new Error('the signed-in context has no browser');
  const zoned = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId,
    storageState: await signedIn.storageState(),
  });
  try {
    const page = await zoned.newPage();
    page.setDefaultTimeout(10_000);
    await use(page);
  } finally {
    await zoned.close();
  }
}

/**
 * Signs in through the sign-in form, as a person does, and waits for the page it leads to
 * (the Overview unless the sign-in page was reached on the way to another). A page already on
 * the sign-in form stays there, so its `next` is kept.
 */
export async function signInThroughForm(
  page: Page,
  baseUrl: string,
  email: string,
  { password = PASSWORD, landing = 'Overview' }: { password?: string; landing?: string } = {},
): Promise<void> {
  if (!new URL(page.url(), baseUrl).pathname.startsWith('/dashboard/sign-in')) {
    await page.goto(`${baseUrl}/dashboard/sign-in`);
  }
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: landing }).waitFor();
}

export interface DashboardWorld {
  /** The server's origin, also its BASE_URL (the dashboard API checks Origin against it). */
  url: string;
  config: Config;
  db: Db;
  browser: Browser;
  receiver: Receiver;
  workspace: { id: string; ownerEmail: string; campaignIds: string[] };
  /** A fresh invitation link for the workspace's owner, as `npm start` prints. */
  ownerInvitation: string;
  /** A member with a password, to sign in directly. */
  member: { email: string };
  startWorker(): Promise<WorkerHandle>;
}

export interface WorldOptions {
  /**
   * SMTP_URL for the API and the worker (read when the world starts, so a test can start its
   * SMTP server first): invitations, resets and alerts are then emailed. None by default.
   */
  smtpUrl?: () => string;
  /** STRIPE_API_BASE for the API (read when the world starts): a local Stripe stand-in. */
  stripeApiBase?: () => string;
  /**
   * WEBHOOK_RETRY_DELAYS for the worker: nine of 200 ms by default, so a delivery runs through
   * its attempts in seconds; a long one keeps a failed delivery pending, its next attempt due.
   */
  webhookRetryDelays?: string;
}

/**
 * The real API app (createApp) over HTTP on an ephemeral port, with its dashboard built,
 * a test database and real Redis, a verifying HTTPS receiver, and one headless Chromium.
 * The dashboard API is mounted once more in front of createApp with a webhook sender that
 * trusts the receiver's self-signed certificate (what NODE_EXTRA_CA_CERTS does for a process).
 */
export function useDashboardWorld(options: WorldOptions = {}): { readonly current: DashboardWorld } {
  const database = useTestDatabase();
  let world: DashboardWorld | undefined;
  let mailer: Mailer | null = null;
  let server: Server | undefined;
  let redis: Redis | undefined;
  let sender: WebhookSender | undefined;
  let certificate: TestCertificate | undefined;
  const workers: WorkerHandle[] = [];

  beforeAll(async () => {
    const built = ensureDashboardBuilt();
    server = createServer();
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = {
      SECRETS_KEY: testSecretsKey(),
      DATABASE_URL: database.current.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`,
      BASE_URL: url,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_RETRY_DELAYS: options.webhookRetryDelays ?? Array(9).fill('200ms').join(','),
      ...(options.smtpUrl && { SMTP_URL: options.smtpUrl() }),
      ...(options.stripeApiBase && { STRIPE_API_BASE: options.stripeApiBase() }),
    };
    const config = loadConfig(env);
    const db = database.current.db;
    certificate = await createTestCertificate();
    const receiver = await Receiver.start(certificate, url);
    redis = createRedis(config.redisUrl, 'command', 'dashboard-browser-test');
    await waitForRedis(redis);
    const logger = createLogger('api', 'silent');
    sender = createWebhookSender({
      timeoutMs: config.webhookTimeoutMs,
      baseUrl: url,
      allowPrivateNetworks: true,
      ca: certificate.cert,
    });
    const app = express();
    app.disable('x-powered-by');
    mailer = createMailer(config, logger);
    app.use(DASHBOARD_API_PREFIX, dashboardApi({ config, db, redis, logger, sender, mailer }));
    app.use(createApp({ config, db, redis, logger }));
    app.use(errorHandler(logger));
    server.on('request', app);

    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [
        {
          key: 'w',
          name: 'Acme <b>Subscriptions</b>',
          processor: 'connected',
          users: [
            { key: 'owner', email: 'owner@acme.test', role: 'owner' },
            { key: 'member', email: 'member@acme.test', role: 'member' },
          ],
          customers: [{ key: 'c1', email: 'ann@example.com', subscriptions: [{ key: 's1' }] }],
          campaigns: [
            { key: 'k1', customer: 'c1' },
            { key: 'k2', customer: 'c1' },
          ],
          cancel_sessions: [{ key: 'x1', customer: 'c1', outcome: 'saved_discount' }],
        },
      ],
    });
    const ids = loaded.workspaces.w!;
    await db('users')
      .where({ id: ids.users.member! })
      .update({ password_hash: await hashPassword(PASSWORD), name: 'Mo Member' });
    const invitation = await inviteMember(
      db,
      { workspace_id: ids.id, email: 'owner@acme.test', role: 'owner', inviter_role: null, base_url: url },
      { type: 'system', label: 'test' },
    );
    await built;
    const browser = await launchChromium();
    world = {
      url,
      config,
      db,
      browser,
      receiver,
      workspace: { id: ids.id, ownerEmail: 'owner@acme.test', campaignIds: [ids.campaigns.k1!, ids.campaigns.k2!] },
      ownerInvitation: invitation.invite_url,
      member: { email: 'member@acme.test' },
      async startWorker() {
        const handle = await createWorker({
          config,
          db,
          logger: createLogger('worker', 'silent'),
          // The backfill runner looks for a queued import every 200 ms rather than every second:
          // each Connect or Import again starts at once (the product's default is unchanged).
          options: { receiverCa: certificate!.cert, dispatchPollMs: 200, backfillCheckEveryMs: 200 },
        });
        workers.push(handle);
        return handle;
      },
    };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    await world?.browser.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    sender?.close();
    mailer?.close();
    redis?.disconnect();
    await world?.receiver.close();
    await certificate?.remove();
  }, 30_000);

  return {
    get current() {
      if (!world) throw new Error('the dashboard world is built in beforeAll');
      return world;
    },
  };
}
