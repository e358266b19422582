import { beforeAll, describe, expect, it } from '@jest/globals';
import { loadFixtures } from '@retention/domain';
import { runCli, useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';
import { runCli as runInProcess } from '../src/run.js';
import { cli } from './helpers.js';

const database = useTestDatabase();
const run = (...args: string[]) => cli(database.current.url, ...args);

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let ids: {
  workspace: string;
  owner: string;
  ann: string;
  active: string;
  trial: string;
  bob: string;
  canceled: string;
};

beforeAll(async () => {
  const loaded = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
    workspaces: [
      {
        key: 'A',
        users: [{ key: 'owner', email: 'owner@acme.test', role: 'owner' }],
        customers: [
          {
            key: 'ann',
            email: 'ann@example.com',
            subscriptions: [
              { key: 'active', amount_cents: 4900, currency: 'usd' },
              { key: 'trial', status: 'trialing', trial_end: '2030-02-01T00:00:00Z' },
            ],
          },
          { key: 'bob', email: 'bob@example.com', subscriptions: [{ key: 'canceled', status: 'canceled' }] },
        ],
      },
    ],
  });
  const a = loaded.workspaces.A!;
  ids = {
    workspace: a.id,
    owner: a.users.owner!,
    ann: a.customers.ann!,
    active: a.subscriptions.active!,
    trial: a.subscriptions.trial!,
    bob: a.customers.bob!,
    canceled: a.subscriptions.canceled!,
  };
});

let invoices = 0;
function openArgs(overrides: Record<string, string> = {}): string[] {
  invoices += 1;
  const options: Record<string, string> = {
    workspace: ids.workspace,
    customer: ids.ann,
    subscription: ids.active,
    invoice: `in_cli_${invoices}`,
    amount: '4900',
    currency: 'USD',
    'decline-code': 'insufficient_funds',
    ...overrides,
  };
  return ['campaign', 'open', ...Object.entries(options).flatMap(([name, value]) => [`--${name}`, value])];
}

async function lastEvent() {
  return database.current.db('events').where({ workspace_id: ids.workspace }).orderBy('seq', 'desc').first();
}

describe('campaign commands', () => {
  it('opens a campaign (currency in any case), then reports the existing one for the same invoice', async () => {
    const opened = await run(...openArgs({ invoice: 'in_cli_twice', 'failed-at': '2026-03-01T10:00:00Z' }));
    expect(opened.code).toBe(0);
    expect(opened.stderr).toBe('');
    expect(opened.json).toMatchObject({
      object: 'recovery_campaign',
      status: 'in_flight',
      currency: 'usd',
      decline_category: 'soft',
      first_failed_at: '2026-03-01T10:00:00.000Z',
      created: true,
    });
    expect((await lastEvent()).type).toBe('recovery.opened');
    const again = await run(...openArgs({ invoice: 'in_cli_twice' }));
    expect(again.json).toEqual({ ...opened.json, created: false });
  });

  it('refuses an amount over 10^12 minor units, naming --amount, and takes 10^12', async () => {
    expect(await run(...openArgs({ amount: '1000000000001' }))).toMatchObject({
      code: 1,
      error: {
        type: 'invalid_param',
        message: expect.stringContaining(
          '--amount must be an integer amount in minor units (cents) from 1 to 1000000000000',
        ),
      },
    });
    expect((await run(...openArgs({ amount: '1000000000000' }))).json.amount_cents).toBe(1_000_000_000_000);
  });

  it('recovers, then refuses a second recovery with conflict and exit 1', async () => {
    const { json: campaign } = await run(...openArgs());
    const recovered = await run(
      'campaign',
      'recover',
      '--id',
      campaign.id,
      '--via',
      'customer_update',
      '--actor',
      ids.owner,
    );
    expect(recovered.code).toBe(0);
    expect(recovered.json).toMatchObject({
      id: campaign.id,
      status: 'recovered',
      recovered_via: 'customer_update',
      recovered_at: expect.stringMatching(ISO_MILLIS),
    });
    const again = await run('campaign', 'recover', '--id', campaign.id, '--via', 'retry');
    expect(again).toMatchObject({ code: 1, stdout: '', error: { type: 'conflict' } });
  });

  it('loses by an operator (source dashboard) or by the processor (no source)', async () => {
    const { json: first } = await run(...openArgs());
    expect((await run('campaign', 'lose', '--id', first.id, '--actor', ids.owner)).json.status).toBe('lost');
    expect((await lastEvent()).data).toMatchObject({ campaign_id: first.id, source: 'dashboard' });

    const { json: second } = await run(...openArgs());
    expect((await run('campaign', 'lose', '--id', second.id, '--processor')).json.status).toBe('lost');
    const event = await lastEvent();
    expect(event.data.campaign_id).toBe(second.id);
    expect(event.data).not.toHaveProperty('source');
    expect(event.data).not.toHaveProperty('reason');
  });

  it("logs the closes that are someone's decision, as the dashboard's marks are, and none that report the processor", async () => {
    const records = (id: string) =>
      database.current
        .db('security_events')
        .where({ target_type: 'campaign', target_id: id })
        .select('workspace_id', 'action', 'actor_type', 'actor_user_id', 'actor_label', 'target_label', 'details');
    const open = async () => (await run(...openArgs())).json as { id: string; psp_invoice_id: string };
    const operator = (userId: string | null) => ({
      workspace_id: ids.workspace,
      actor_type: 'operator',
      actor_user_id: userId,
      actor_label: 'operator CLI',
    });

    const lostByOwner = await open();
    await run('campaign', 'lose', '--id', lostByOwner.id, '--actor', ids.owner);
    expect(await records(lostByOwner.id)).toEqual([
      { ...operator(ids.owner), action: 'campaign.marked_lost', target_label: lostByOwner.psp_invoice_id, details: {} },
    ]);

    const manual = await open();
    await run('campaign', 'recover', '--id', manual.id, '--via', 'manual');
    expect(await records(manual.id)).toEqual([
      {
        ...operator(null),
        action: 'campaign.marked_recovered',
        target_label: manual.psp_invoice_id,
        details: { recovered_via: 'manual' },
      },
    ]);

    const retryNamed = await open();
    await run('campaign', 'recover', '--id', retryNamed.id, '--via', 'retry', '--actor', ids.owner);
    expect(await records(retryNamed.id)).toMatchObject([
      { ...operator(ids.owner), action: 'campaign.marked_recovered', details: { recovered_via: 'retry' } },
    ]);

    // Stand-ins for what the processor did: no one decided, nothing logged.
    const retried = await open();
    const givenUp = await open();
    await run('campaign', 'recover', '--id', retried.id, '--via', 'retry');
    await run('campaign', 'lose', '--id', givenUp.id, '--processor');
    expect(await records(retried.id)).toEqual([]);
    expect(await records(givenUp.id)).toEqual([]);

    // A close refused (already closed) logs nothing: the record commits with the close or not at all.
    expect(await run('campaign', 'lose', '--id', manual.id, '--actor', ids.owner)).toMatchObject({
      code: 1,
      error: { type: 'conflict' },
    });
    expect(await records(manual.id)).toHaveLength(1);
  });

  it.each([
    [['campaign', 'lose', '--id', UNKNOWN]],
    [['campaign', 'lose', '--id', UNKNOWN, '--processor', '--actor', UNKNOWN]],
    [['campaign', 'lose', '--id', UNKNOWN, '--processor=yes']],
    [['campaign', 'recover', '--id', UNKNOWN]],
    [['campaign', 'open', '--workspace', UNKNOWN]],
    [['campaign', 'close-stale', '--older-than-days']],
    [['cancel-session', 'record', '--workspace', UNKNOWN]],
    [['winback', 'record', '--customer', UNKNOWN]],
    [['trial', 'remind']],
    [['reactivation', 'send', '--subscription']],
    [['demo', 'seed', '--colour', 'blue']],
  ])('usage error %j exits 2 with the usage line', async (args) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.error).toEqual({ type: 'invalid_param', message: expect.stringContaining('Usage: ') });
  });

  it.each([
    [{ amount: '-5' }, /--amount must be an integer/],
    [{ amount: '0' }, /--amount/],
    [{ amount: '12.50' }, /--amount/],
    [{ currency: 'dollars' }, /--currency must be a three-letter/],
    [{ customer: 'ann' }, /--customer must be a UUID/],
    [{ 'failed-at': 'yesterday' }, /--failed-at must be an ISO 8601 timestamp/],
    [{ 'failed-at': '2999-01-01T00:00:00Z' }, /^--failed-at must not be in the future/],
  ])('campaign open %j exits 1 with invalid_param', async (overrides, message) => {
    const result = await run(...openArgs(overrides));
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.error).toEqual({ type: 'invalid_param', message: expect.stringMatching(message) });
  });

  it('reports unknown ids as not_found and a bad --via as invalid_param', async () => {
    expect(await run(...openArgs({ workspace: UNKNOWN }))).toMatchObject({ code: 1, error: { type: 'not_found' } });
    expect(await run('campaign', 'recover', '--id', UNKNOWN, '--via', 'retry')).toMatchObject({
      code: 1,
      error: { type: 'not_found' },
    });
    const { json: campaign } = await run(...openArgs());
    const bogus = await run('campaign', 'recover', '--id', campaign.id, '--via', 'bogus');
    expect(bogus).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringContaining('--via') },
    });
  });

  it('close-stale takes its default age from STALE_CAMPAIGN_DAYS', async () => {
    // A workspace of its own: the other tests leave open campaigns of every age behind.
    const loaded = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
      workspaces: [{ key: 'S', customers: [{ key: 'c', subscriptions: [{ key: 's' }] }] }],
    });
    const own = loaded.workspaces.S!;
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const { json: campaign } = await run(
      ...openArgs({
        workspace: own.id,
        customer: own.customers.c!,
        subscription: own.subscriptions.s!,
        'failed-at': tenDaysAgo,
      }),
    );
    const stale = (env: Record<string, string>, ...args: string[]) =>
      runWithEnv(env, ['campaign', 'close-stale', '--workspace', own.id, ...args]);

    expect((await stale({})).json).toEqual({ closed: [] });
    expect((await stale({ STALE_CAMPAIGN_DAYS: '20' }, '--older-than-days', '11')).json).toEqual({ closed: [] });
    expect((await stale({ STALE_CAMPAIGN_DAYS: '9' })).json).toEqual({ closed: [campaign.id] });
    expect(await stale({}, '--older-than-days', '0')).toMatchObject({ code: 1, error: { type: 'invalid_param' } });
    const event = await database.current.db('events').where({ workspace_id: own.id }).orderBy('seq', 'desc').first();
    expect(event.data).toMatchObject({ campaign_id: campaign.id, reason: 'auto_close_stale' });
  });
});

/** The in-process CLI with extra environment variables: configuration is read per invocation. */
async function runWithEnv(env: Record<string, string>, args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runInProcess(args, {
    env: { ...process.env, DATABASE_URL: database.current.url, ...env },
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return {
    code,
    json: code === 0 ? JSON.parse(stdout) : undefined,
    error: stderr ? (JSON.parse(stderr) as { error: { type: string; message: string } }).error : undefined,
  };
}

describe('cancel-session, trial, reactivation and winback commands', () => {
  it('records a cancel session with every option', async () => {
    const result = await run(
      'cancel-session',
      'record',
      '--workspace',
      ids.workspace,
      '--customer',
      ids.ann,
      '--subscription',
      ids.active,
      '--outcome',
      'saved_discount',
      '--reason-code',
      'too_expensive',
      '--mrr',
      '4900',
      '--currency',
      'usd',
      '--feedback',
      'Cheaper please',
    );
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({
      object: 'cancel_session',
      outcome: 'saved_discount',
      feedback: 'Cheaper please',
    });
    expect((await lastEvent()).type).toBe('cancel.saved');
  });

  it.each([
    [['--outcome', 'saved_forever'], /--outcome must be one of/],
    [['--reason-code', 'bored'], /--reason-code must be one of/],
    [['--mrr', '-1'], /--mrr/],
    [['--mrr', '1000000000001'], /--mrr must be an integer amount in minor units \(cents\) from 0 to 1000000000000/],
    [['--currency', 'eu'], /--currency/],
    [['--feedback', 'bell\u0007'], /--feedback must not contain control characters other than line breaks and tabs/],
  ])('refuses cancel-session record with %j', async (override, message) => {
    const options: Record<string, string> = {
      workspace: ids.workspace,
      customer: ids.ann,
      outcome: 'canceled',
      'reason-code': 'unused',
      mrr: '100',
      currency: 'usd',
      [override[0]!.slice(2)]: override[1]!,
    };
    const result = await run(
      'cancel-session',
      'record',
      ...Object.entries(options).flatMap(([name, value]) => [`--${name}`, value]),
    );
    expect(result).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringMatching(message) },
    });
  });

  it('sends a trial reminder for a trialing subscription only', async () => {
    const sent = await run('trial', 'remind', '--subscription', ids.trial);
    expect(sent.json).toMatchObject({ object: 'trial_reminder', trial_end: '2030-02-01T00:00:00.000Z' });
    expect((await lastEvent()).type).toBe('trial.reminder_sent');
    expect(await run('trial', 'remind', '--subscription', ids.active)).toMatchObject({
      code: 1,
      error: { type: 'conflict' },
    });
    expect(await run('trial', 'remind', '--subscription', UNKNOWN)).toMatchObject({
      code: 1,
      error: { type: 'not_found' },
    });
  });

  it('sends a reactivation for a canceled subscription only', async () => {
    expect((await run('reactivation', 'send', '--subscription', ids.canceled)).json.object).toBe('reactivation');
    expect((await lastEvent()).type).toBe('reactivation.sent');
    expect(await run('reactivation', 'send', '--subscription', ids.active)).toMatchObject({
      code: 1,
      error: { type: 'conflict' },
    });
  });

  it('records a win-back, and refuses bad values', async () => {
    const args = (days: string, currency = 'gbp') => [
      'winback',
      'record',
      '--customer',
      ids.bob,
      '--psp-subscription',
      'sub_cli_back',
      '--days-away',
      days,
      '--amount',
      '3900',
      '--currency',
      currency,
    ];
    expect((await run(...args('21'))).json).toMatchObject({ object: 'winback', days_away: 21, created: true });
    expect((await lastEvent()).type).toBe('winback.recorded');
    expect((await run(...args('21'))).json).toMatchObject({ days_away: 21, created: false });
    expect(await run(...args('22'))).toMatchObject({
      code: 1,
      error: { type: 'conflict', message: expect.stringContaining('other values (days_away 21') },
    });
    expect(await run(...args('-1'))).toMatchObject({ code: 1, error: { type: 'invalid_param' } });
    expect(await run(...args('3', '12'))).toMatchObject({ code: 1, error: { type: 'invalid_param' } });
    const tooMuch = [...args('3').slice(0, -4), '--amount', String(Number.MAX_SAFE_INTEGER), '--currency', 'gbp'];
    expect(await run(...tooMuch)).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringContaining('--amount must be an integer amount') },
    });
  });
});

describe('demo seed', () => {
  it('as a real process: prints the workspace, a token and a curl line using BASE_URL; same seed, same data', async () => {
    const env = { DATABASE_URL: database.current.url, BASE_URL: 'https://api.acme.example/' };
    const [first, second] = await Promise.all([
      runCli(['demo', 'seed', '--customers', '40', '--seed', '9'], env),
      runCli(['demo', 'seed', '--customers', '40', '--seed', '9'], env),
    ]);
    for (const result of [first, second]) {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.json.curl).toBe(
        `curl -s -H 'Authorization: Bearer ${result.json.token}' 'https://api.acme.example/api/v1/campaigns?status=in_flight'`,
      );
    }
    expect(first.json.counts).toEqual(second.json.counts);
    const customersOf = (workspaceId: string) =>
      database.current
        .db('customers')
        .where({ workspace_id: workspaceId })
        .orderBy('psp_customer_id')
        .select('psp_customer_id', 'email', 'name', 'tags');
    const firstCustomers = await customersOf(first.json.workspace.id);
    expect(firstCustomers).toHaveLength(40);
    expect(await customersOf(second.json.workspace.id)).toEqual(firstCustomers);
    expect(first.json.counts.customers).toBe(40);
    expect(first.json.token).not.toBe(second.json.token);
  });

  it.each([
    [['--customers', '5'], /--customers/],
    [['--customers', 'lots'], /--customers/],
    [['--seed', '-1'], /--seed/],
  ])('refuses %j with invalid_param', async (args, message) => {
    expect(await run('demo', 'seed', ...args)).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringMatching(message) },
    });
  });
});

describe('help', () => {
  it('lists the domain commands with the options of operator-cli.md', async () => {
    const usages = (await run('help')).json.commands.map((command: { usage: string }) => command.usage);
    expect(usages).toEqual(
      expect.arrayContaining([
        'campaign open --workspace W --customer C --subscription S --invoice PSP_INVOICE_ID --amount CENTS --currency CUR --decline-code CODE [--failed-at ISO]',
        'campaign recover --id K --via retry|customer_update|spontaneous|manual [--actor U]',
        'campaign lose --id K [--actor U] [--processor]',
        'campaign close-stale [--workspace W] [--older-than-days N]',
        'cancel-session record --workspace W --customer C [--subscription S] --outcome O --reason-code R --mrr CENTS --currency CUR [--feedback TEXT]',
        'trial remind --subscription S',
        'reactivation send --subscription S',
        'winback record --customer C --psp-subscription ID --days-away N --amount CENTS --currency CUR',
        'demo seed [--customers N] [--seed S]',
      ]),
    );
  });
});
