import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_WEBHOOK_ENDPOINTS, TOO_MANY_WEBHOOK_ENDPOINTS } from '@retention/core/webhook-endpoints';
import { createEndpoint as addEndpoint, loadFixtures } from '@retention/domain';
import { runCli, storedSigningSecrets, useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';
import { createTestCertificate, type TestCertificate } from '../../worker/test/support/certificate.js';
import { Receiver } from '../../worker/test/support/receiver.js';
import { cli, failedDelivery } from './helpers.js';

const database = useTestDatabase();
const run = (...args: string[]) => cli(database.current.url, ...args);
const BASE_URL = 'https://retention.test';

let workspace: string;
let owner: string;
let member: string;
let customer: string;
let subscription: string;
let certificate: TestCertificate;
let receiver: Receiver;

beforeAll(async () => {
  const result = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'A',
        users: [
          { key: 'owner', email: 'owner@cli.test', role: 'owner' },
          { key: 'member', email: 'member@cli.test', role: 'member' },
        ],
        customers: [{ key: 'c', email: 'resend@cli.test', subscriptions: [{ key: 's' }] }],
      },
    ],
  });
  workspace = result.workspaces.A!.id;
  customer = result.workspaces.A!.customers.c!;
  subscription = result.workspaces.A!.subscriptions.s!;
  owner = result.workspaces.A!.users.owner!;
  member = result.workspaces.A!.users.member!;
  certificate = await createTestCertificate();
  receiver = await Receiver.start(certificate, BASE_URL);
});

afterAll(async () => {
  await receiver.close();
  await certificate.remove();
});

async function createEndpoint(...extra: string[]) {
  const created = await run(
    'webhook',
    'create',
    '--workspace',
    workspace,
    '--actor',
    owner,
    '--name',
    'Main',
    '--url',
    'https://hooks.example.com/in',
    ...extra,
  );
  expect(created.code).toBe(0);
  return created.json;
}

describe('webhook commands', () => {
  it('create prints the secret once; show and list never do', async () => {
    const created = await createEndpoint('--events', 'cancel.saved,recovery.opened');
    expect(created).toMatchObject({
      object: 'webhook_endpoint',
      name: 'Main',
      url: 'https://hooks.example.com/in',
      events: ['recovery.opened', 'cancel.saved'],
      enabled: true,
      failure_count: 0,
      last_success_at: null,
      last_failure_at: null,
      secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{43}$/),
    });
    // Stored sealed, opening to the secret printed.
    const stored = await storedSigningSecrets(database.current.db, created.id);
    expect(stored.sealed.current).not.toContain('whsec_');
    expect(stored.current).toBe(created.secret);
    const shown = await run('webhook', 'show', '--id', created.id);
    expect(shown.json).toMatchObject({ id: created.id, events: ['recovery.opened', 'cancel.saved'] });
    expect(shown.stdout).not.toContain('whsec_');
    const listed = await run('webhook', 'list', '--workspace', workspace);
    expect(listed.json).toMatchObject({
      object: 'list',
      data: expect.arrayContaining([expect.objectContaining({ id: created.id })]),
    });
    expect(listed.stdout).not.toContain('whsec_');
  });

  it('create refuses a member with forbidden', async () => {
    const result = await run(
      'webhook',
      'create',
      '--workspace',
      workspace,
      '--actor',
      member,
      '--name',
      'X',
      '--url',
      'https://hooks.example.com/in',
    );
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      error: { type: 'forbidden', message: expect.stringMatching(/owner or admin/) },
    });
  });

  it.each([
    ['http://hooks.example.com/in', undefined, /^url: must begin with https:\/\//],
    [
      'https://me:pw@hooks.example.com/',
      undefined,
      /^url: must not contain a user name or password \(user:password@ before the host\)/,
    ],
    // Under 2048 characters as typed, about 6,000 once percent-encoded: refused, not a database error.
    [
      `https://hooks.example.com/${'ä'.repeat(1000)}`,
      undefined,
      /^url: must be at most 2048 characters once normalised/,
    ],
    ['https://hooks.example.com:0/in', undefined, /^url: port must be a number from 1 to 65535/],
    ['https://hooks.example.com/in', 'recovery.opened,invoice.paid', /^--events: "invoice.paid" is not an event type/],
    ['https://hooks.example.com/in', 'recovery.opened,,cancel.saved', /^--events must be a comma-separated list/],
  ])('create refuses --url %s --events %s with invalid_param', async (url, events, message) => {
    const args = ['webhook', 'create', '--workspace', workspace, '--actor', owner, '--name', 'X', '--url', url];
    const result = await run(...args, ...(events ? ['--events', events] : []));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.error).toEqual({ type: 'invalid_param', message: expect.stringMatching(message) });
  });

  it(`create refuses a workspace's endpoint past ${MAX_WEBHOOK_ENDPOINTS} with conflict`, async () => {
    const { db } = database.current;
    const fixtures = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [{ key: 'full', users: [{ key: 'owner', email: 'owner@full.test', role: 'owner' }] }],
    });
    const full = { workspace_id: fixtures.workspaces.full!.id, actor_id: fixtures.workspaces.full!.users.owner! };
    for (let index = 0; index < MAX_WEBHOOK_ENDPOINTS; index++)
      await addEndpoint(db, testSecretsKeyBytes(), { ...full, name: `E${index}`, url: 'https://hooks.example.com/in' });
    const args = [
      '--workspace',
      full.workspace_id,
      '--actor',
      full.actor_id,
      '--name',
      'X',
      '--url',
      'https://a.example.com/',
    ];
    const result = await run('webhook', 'create', ...args);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.error).toEqual({ type: 'conflict', message: TOO_MANY_WEBHOOK_ENDPOINTS });
  });

  it('create without --actor is a usage error', async () => {
    const result = await run(
      'webhook',
      'create',
      '--workspace',
      workspace,
      '--name',
      'X',
      '--url',
      'https://a.example.com/',
    );
    expect(result.code).toBe(2);
    expect(result.error!.message).toMatch(/--actor is required/);
  });

  it('update changes fields, and --events all subscribes to every type', async () => {
    const created = await createEndpoint('--events', 'winback.recorded');
    const updated = await run(
      'webhook',
      'update',
      '--id',
      created.id,
      '--actor',
      owner,
      '--name',
      'Renamed',
      '--events',
      'all',
    );
    expect(updated.json).toMatchObject({ name: 'Renamed', events: [] });
    // Recorded as the dashboard's edit is (the same function): each changed field from and to.
    const logged = await database.current
      .db('security_events')
      .where({ action: 'webhook.updated', target_id: created.id })
      .select('actor_type', 'actor_user_id', 'target_label', 'details');
    expect(logged).toEqual([
      {
        actor_type: 'operator',
        actor_user_id: owner,
        target_label: 'Main (https://hooks.example.com/in)',
        details: { name: { from: 'Main', to: 'Renamed' }, events: { from: ['winback.recorded'], to: [] } },
      },
    ]);
    const nothing = await run('webhook', 'update', '--id', created.id, '--actor', owner);
    expect(nothing).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringMatching(/nothing to change/) },
    });
  });

  it('disable, enable and delete', async () => {
    const created = await createEndpoint();
    expect((await run('webhook', 'disable', '--id', created.id, '--actor', owner)).json).toMatchObject({
      enabled: false,
      disabled_reason: 'manual',
    });
    expect(await run('webhook', 'enable', '--id', created.id, '--actor', member)).toMatchObject({
      code: 1,
      error: { type: 'forbidden' },
    });
    expect((await run('webhook', 'enable', '--id', created.id, '--actor', owner)).json).toMatchObject({
      enabled: true,
      failure_count: 0,
    });
    expect((await run('webhook', 'delete', '--id', created.id, '--actor', owner)).json).toEqual({
      id: created.id,
      object: 'webhook_endpoint',
      deleted: true,
    });
    expect(await run('webhook', 'show', '--id', created.id)).toMatchObject({ code: 1, error: { type: 'not_found' } });
  });

  it('test POSTs a signed ping through NODE_EXTRA_CA_CERTS, and deliveries shows it', async () => {
    receiver.route('/cli-ping', { secret: '', behaviour: { kind: 'status', status: 202, body: 'ok' } });
    const created = await run(
      'webhook',
      'create',
      '--workspace',
      workspace,
      '--actor',
      owner,
      '--name',
      'Local',
      '--url',
      receiver.url('/cli-ping'),
    );
    receiver.route('/cli-ping', {
      secret: created.json.secret,
      behaviour: { kind: 'status', status: 202, body: 'ok' },
    });
    const env = {
      DATABASE_URL: database.current.url,
      BASE_URL,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      NODE_EXTRA_CA_CERTS: certificate.certPath,
    };
    const tested = await runCli(['webhook', 'test', '--id', created.json.id, '--actor', owner], env);
    expect(tested.code).toBe(0);
    expect(tested.json).toMatchObject({
      event_type: 'ping',
      outcome: 'succeeded',
      http_status: 202,
      error: null,
      response_body: 'ok',
    });
    expect(receiver.requestsTo('/cli-ping')).toHaveLength(1);
    expect(receiver.problems()).toEqual([]);

    // With private networks refused (the default), the same endpoint is never connected to.
    const refused = await runCli(['webhook', 'test', '--id', created.json.id, '--actor', owner], {
      ...env,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
    });
    expect(refused.json).toMatchObject({
      outcome: 'failed',
      http_status: null,
      error: expect.stringMatching(/^refused: localhost does not resolve to a public address/),
    });
    expect(refused.stdout).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(receiver.requestsTo('/cli-ping')).toHaveLength(1);

    const log = await run('webhook', 'deliveries', '--id', created.json.id, '--limit', '1');
    expect(log.json).toEqual({ object: 'list', data: [expect.objectContaining({ id: refused.json.id })] });
    expect((await run('webhook', 'deliveries', '--id', created.json.id)).json.data).toHaveLength(2);
    expect(await run('webhook', 'deliveries', '--id', created.json.id, '--limit', '0')).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringMatching(/--limit must be an integer between 1 and 1000/) },
    });
  }, 60_000);
});

/**
 * `webhook test --fail`: a receiver that fails is a result (exit 0, the contract's output), and a
 * script that asks with --fail gets exit 1 and one line on stderr as well, the attempt still on
 * stdout. Against real receivers: an HTTPS server that answers 500 or 204, and a port nobody
 * listens on.
 */
describe('webhook test --fail', () => {
  let env: Record<string, string>;

  beforeAll(() => {
    env = {
      DATABASE_URL: database.current.url,
      BASE_URL,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      NODE_EXTRA_CA_CERTS: certificate.certPath,
    };
  });

  async function endpointAt(url: string): Promise<{ id: string; secret: string }> {
    const created = await run(
      ...['webhook', 'create', '--workspace', workspace, '--actor', owner],
      '--name',
      'T',
      '--url',
      url,
    );
    expect(created.code).toBe(0);
    return created.json;
  }

  const sendTest = (id: string, ...extra: string[]) =>
    runCli(['webhook', 'test', '--id', id, '--actor', owner, ...extra], env);

  it('exits 1 with one line on stderr when the receiver answers 500, the attempt still on stdout', async () => {
    const endpoint = await endpointAt(receiver.url('/fail-500'));
    receiver.route('/fail-500', { secret: endpoint.secret, behaviour: { kind: 'status', status: 500, body: 'down' } });

    // Without --fail, as the contract has it: the failed attempt is the command's result.
    const plain = await sendTest(endpoint.id);
    expect(plain).toMatchObject({ code: 0, stderr: '', json: { outcome: 'failed', http_status: 500 } });

    const failed = await sendTest(endpoint.id, '--fail');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      object: 'webhook_attempt',
      event_type: 'ping',
      outcome: 'failed',
      http_status: 500,
      error: 'HTTP 500',
      response_body: 'down',
    });
    expect(failed.stderr.split('\n')).toEqual([expect.any(String), '']);
    expect(failed.error).toEqual({
      type: 'delivery_failed',
      message: 'The test delivery failed: HTTP 500. The attempt is on stdout and in the delivery log.',
    });
    expect(receiver.requestsTo('/fail-500')).toHaveLength(2);
    expect(receiver.problems()).toEqual([]);
    // Both attempts are in the log, as every Send test is.
    expect((await run('webhook', 'deliveries', '--id', endpoint.id)).json.data).toHaveLength(2);
  }, 60_000);

  it('exits 1 when nothing answers at the URL', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const endpoint = await endpointAt(`https://localhost:${port}/nobody`);
    const failed = await sendTest(endpoint.id, '--fail');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ outcome: 'failed', http_status: null });
    expect(failed.error).toEqual({
      type: 'delivery_failed',
      message: expect.stringMatching(
        /^The test delivery failed: .+\. The attempt is on stdout and in the delivery log\.$/,
      ),
    });
    expect(failed.stderr.trim()).not.toContain('\n');
  }, 60_000);

  it('webhook resend takes --fail the same way: exit 1 on a failed attempt, 0 once the receiver takes it', async () => {
    const endpoint = await endpointAt(receiver.url('/resend-flaky'));
    receiver.route('/resend-flaky', { secret: endpoint.secret, behaviour: { kind: 'status', status: 503 } });
    // A real event, so the receiver checks a real payload; its delivery as the worker would have
    // left it after a first failed attempt (no worker runs here).
    const opened = await run(
      ...['campaign', 'open', '--workspace', workspace, '--customer', customer, '--subscription', subscription],
      ...['--invoice', 'in_resend_fail', '--amount', '1200', '--currency', 'usd', '--decline-code', 'expired_card'],
    );
    expect(opened.code).toBe(0);
    const db = database.current.db;
    const event = await db('events')
      .where({ workspace_id: workspace, type: 'recovery.opened' })
      .whereRaw("data->>'campaign_id' = ?", [opened.json.id])
      .first('id');
    const delivery = await failedDelivery(db, { workspace, endpoint: endpoint.id, event: event.id });
    const resend = (...extra: string[]) =>
      runCli(['webhook', 'resend', '--delivery', delivery, '--actor', owner, ...extra], env);

    const plain = await resend();
    expect(plain).toMatchObject({ code: 0, stderr: '', json: { attempt: 2, outcome: 'failed', http_status: 503 } });

    const failed = await resend('--fail');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ attempt: 3, outcome: 'failed', http_status: 503 });
    expect(failed.error).toEqual({
      type: 'delivery_failed',
      message: 'The resent delivery failed: HTTP 503. The attempt is on stdout and in the delivery log.',
    });
    expect(failed.stderr.trim()).not.toContain('\n');

    receiver.route('/resend-flaky', { secret: endpoint.secret, behaviour: { kind: 'status', status: 204 } });
    expect(await resend('--fail')).toMatchObject({
      code: 0,
      stderr: '',
      json: { attempt: 4, outcome: 'succeeded', http_status: 204 },
    });
    expect(receiver.requestsTo('/resend-flaky')).toHaveLength(3);
    expect(receiver.problems()).toEqual([]);
  }, 60_000);

  it('exits 0 with nothing on stderr when the receiver answers 2xx', async () => {
    const endpoint = await endpointAt(receiver.url('/ok-204'));
    receiver.route('/ok-204', { secret: endpoint.secret, behaviour: { kind: 'status', status: 204 } });
    const passed = await sendTest(endpoint.id, '--fail');
    expect(passed).toMatchObject({
      code: 0,
      stderr: '',
      json: { outcome: 'succeeded', http_status: 204, error: null },
    });
    expect(receiver.requestsTo('/ok-204')).toHaveLength(1);
    expect(receiver.problems()).toEqual([]);
  }, 60_000);
});
