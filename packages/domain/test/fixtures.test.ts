import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { hashApiToken, ServiceError } from '@retention/core';
import { loadFixtures, type FixtureFile } from '@retention/domain';
import { runCli, storedSigningSecrets, useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';

const database = useTestDatabase();

const SAMPLE: FixtureFile = {
  workspaces: [
    {
      key: 'A',
      name: 'Acme',
      processor: 'connected',
      display_currency: 'usd',
      users: [{ key: 'owner', email: 'o@acme.test', role: 'owner' }],
      tokens: [
        { key: 'main', name: 'ci', revoked: false, rate_limit: 60 },
        { key: 'old', name: 'old', revoked: true },
      ],
      customers: [
        {
          key: 'c1',
          email: 'Ann@Example.com',
          name: 'Ann',
          psp_customer_id: 'cus_1',
          tags: [' VIP ', 'vip', 'Churn-Risk'],
          created_at: '2026-03-01T10:00:00.123Z',
          subscriptions: [
            {
              key: 's1',
              psp_subscription_id: 'sub_1',
              status: 'active',
              plan_name: 'Pro',
              amount_cents: 4900,
              currency: 'usd',
              interval: 'month',
              trial_end: null,
              current_period_end: '2026-04-01T00:00:00Z',
              canceled_at: null,
              created_at: '2026-03-01T10:00:00Z',
            },
          ],
        },
        {
          key: 'c2',
          email: 'bob@example.com',
          subscriptions: [{ key: 's2', amount_cents: 12000, currency: 'jpy', interval: 'year' }],
        },
      ],
      campaigns: [
        {
          key: 'k1',
          customer: 'c1',
          subscription: 's1',
          psp_invoice_id: 'in_1',
          amount_cents: 4900,
          currency: 'usd',
          status: 'in_flight',
          decline_code: 'insufficient_funds',
          first_failed_at: '2026-03-05T00:00:00Z',
          recovered_via: null,
          recovered_at: null,
          closed_at: null,
        },
        {
          key: 'k2',
          customer: 'c2',
          status: 'recovered',
          recovered_via: 'customer_update',
          recovered_at: '2026-03-06T12:00:00Z',
        },
        { key: 'k3', customer: 'c1', status: 'abandoned', decline_code: 'expired_card' },
      ],
      cancel_sessions: [
        {
          key: 'x1',
          customer: 'c1',
          subscription: 's1',
          outcome: 'saved_discount',
          reason_code: 'too_expensive',
          monthly_mrr_cents: 4900,
          currency: 'usd',
          created_at: '2026-03-07T00:00:00Z',
        },
        { key: 'x2', customer: 'c2', subscription: 's2' },
      ],
      webhooks: [{ key: 'w1', name: 'main', url: 'https://hooks.example.com/retention', events: [] }],
    },
    { key: 'B', name: 'Globex', processor: 'disconnected', customers: [{ key: 'c1', psp_customer_id: 'cus_1' }] },
  ],
};

async function countRows(): Promise<Record<string, number>> {
  const tables = [
    'workspaces',
    'users',
    'api_tokens',
    'customers',
    'subscriptions',
    'recovery_campaigns',
    'cancel_sessions',
    'webhook_endpoints',
    'events',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await database.current.db(table).count<Array<{ count: number }>>('* as count');
    counts[table] = row!.count;
  }
  return counts;
}

async function failure(file: unknown): Promise<ServiceError> {
  try {
    await loadFixtures(database.current.db, testSecretsKeyBytes(), file);
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected the fixture to be refused');
}

describe('fixtures load', () => {
  it('loads every kind of row, keyed as in the file, with defaults filled and no events', async () => {
    const { db } = database.current;
    const result = await loadFixtures(db, testSecretsKeyBytes(), SAMPLE);
    const a = result.workspaces.A!;
    expect(Object.keys(result.workspaces)).toEqual(['A', 'B']);
    expect(Object.keys(a.customers)).toEqual(['c1', 'c2']);
    expect(Object.keys(a.subscriptions)).toEqual(['s1', 's2']);
    expect(Object.keys(a.campaigns)).toEqual(['k1', 'k2', 'k3']);
    expect(a.tokens.main!.token).toMatch(/^sk_live_/);
    expect(a.webhooks.w1!.secret).toMatch(/^whsec_/);

    const workspace = await db('workspaces').where({ id: a.id }).first();
    expect(workspace).toMatchObject({ name: 'Acme', processor_status: 'connected', display_currency: 'usd' });
    expect(await db('workspaces').where({ id: result.workspaces.B!.id }).first()).toMatchObject({
      processor_status: 'disconnected',
    });

    const ann = await db('customers').where({ id: a.customers.c1 }).first();
    expect(ann).toMatchObject({ email: 'Ann@Example.com', tags: ['vip', 'churn-risk'] });
    expect((ann.created_at as Date).toISOString()).toBe('2026-03-01T10:00:00.123Z');

    const tokens = await db('api_tokens').where({ workspace_id: a.id }).orderBy('name');
    expect(tokens.find((t) => t.id === a.tokens.main!.id)).toMatchObject({
      token_hash: hashApiToken(a.tokens.main!.token),
      revoked_at: null,
      rate_limit_per_minute: 60,
    });
    expect(tokens.find((t) => t.id === a.tokens.old!.id)!.revoked_at).toBeInstanceOf(Date);

    const k2 = await db('recovery_campaigns').where({ id: a.campaigns.k2 }).first();
    // Defaults: the customer's only subscription, its amount and currency; closed when recovered.
    expect(k2).toMatchObject({
      subscription_id: a.subscriptions.s2,
      amount_cents: 12000,
      currency: 'jpy',
      status: 'recovered',
      recovered_via: 'customer_update',
    });
    expect(k2.closed_at).toEqual(k2.recovered_at);
    const k3 = await db('recovery_campaigns').where({ id: a.campaigns.k3 }).first();
    expect(k3).toMatchObject({ decline_category: 'card_update_required', status: 'abandoned', recovered_via: null });
    expect(k3.closed_at).toBeInstanceOf(Date);

    const x2 = await db('cancel_sessions').where({ id: a.cancel_sessions.x2 }).first();
    // A yearly 12,000 yen plan is 1,000 yen a month.
    expect(x2).toMatchObject({ outcome: 'canceled', reason_code: 'other', monthly_mrr_cents: 1000, currency: 'jpy' });

    const hook = await db('webhook_endpoints').where({ id: a.webhooks.w1!.id }).first();
    expect(hook).toMatchObject({
      url: 'https://hooks.example.com/retention',
      event_types: [],
      enabled: true,
    });
    expect(JSON.stringify(hook)).not.toContain('whsec_');
    expect(await storedSigningSecrets(db, a.webhooks.w1!.id)).toMatchObject({
      current: a.webhooks.w1!.secret,
      previous: null,
    });

    expect((await countRows()).events).toBe(0);
  });

  it('spaces omitted timestamps a millisecond apart, later rows newer', async () => {
    const result = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
      workspaces: [{ customers: [{ key: 'first' }, { key: 'second' }, { key: 'third' }] }],
    });
    const ids = result.workspaces['0']!.customers;
    const rows = await database.current.db('customers').whereIn('id', Object.values(ids)).orderBy('created_at');
    expect(rows.map((row) => row.id)).toEqual([ids.first, ids.second, ids.third]);
    expect(new Set(rows.map((row) => (row.created_at as Date).getTime())).size).toBe(3);
  });

  it.each([
    [
      { workspaces: [{ campaigns: [{ customer: 'c', status: 'pending' }] }] },
      'workspaces[0].campaigns[0].status: must be one of',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [{ customer: 'c' }, { customer: 'c' }, { customer: 'c' }, { customer: 'c', status: 'bogus' }],
          },
        ],
      },
      'workspaces[0].campaigns[3].status: must be one of',
    ],
    [{ workspaces: [{ customers: [{ email: 'not-an-email' }] }] }, 'workspaces[0].customers[0].email'],
    [{ workspaces: [{ customers: [{ created_at: '2026-02-30' }] }] }, 'workspaces[0].customers[0].created_at'],
    [
      { workspaces: [{ campaigns: [{ customer: 'ghost' }] }] },
      'workspaces[0].campaigns[0].customer: no customer with key "ghost"',
    ],
    [
      { workspaces: [{ customers: [{ key: 'c' }, { key: 'c' }] }] },
      'workspaces[0].customers[1].key: duplicate customer key "c"',
    ],
    [{ workspaces: [{ custmers: [] }] }, 'workspaces[0].custmers: is not a recognised field'],
    [
      { workspaces: [{ webhooks: [{ url: 'http://insecure.example.com' }] }] },
      'workspaces[0].webhooks[0].url: must begin with https://',
    ],
    [
      { workspaces: [{ webhooks: [{ url: 'https://x.example.com', events: ['recovery.exploded'] }] }] },
      'workspaces[0].webhooks[0].events[0]',
    ],
    [
      { workspaces: [{ customers: [{ subscriptions: [{ amount_cents: -1 }] }] }] },
      'workspaces[0].customers[0].subscriptions[0].amount_cents',
    ],
    [
      { workspaces: [{ customers: [{ subscriptions: [{ currency: 'US' }] }] }] },
      'workspaces[0].customers[0].subscriptions[0].currency',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [{ customer: 'c', status: 'in_flight', closed_at: '2026-01-01' }],
          },
        ],
      },
      'workspaces[0].campaigns[0].closed_at: must be null while the campaign is in_flight',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [{ customer: 'c', decline_code: 'expired_card', decline_category: 'soft' }],
          },
        ],
      },
      'workspaces[0].campaigns[0].decline_category',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'a', subscriptions: [{ key: 'sa' }] }, { key: 'b' }],
            campaigns: [{ customer: 'b', subscription: 'sa' }],
          },
        ],
      },
      'workspaces[0].campaigns[0].subscription: subscription "sa" belongs to another customer',
    ],
    [
      { workspaces: [{ customers: [{ key: 'c', subscriptions: [{}, {}] }], campaigns: [{ customer: 'c' }] }] },
      'workspaces[0].campaigns[0].subscription: is required when the customer has 2 subscriptions',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [
              { customer: 'c', psp_invoice_id: 'in_1' },
              { customer: 'c', psp_invoice_id: 'in_1' },
            ],
          },
        ],
      },
      'workspaces[0].campaigns[1].psp_invoice_id: "in_1" appears twice',
    ],
    [{ workspaces: [{ users: [{ email: 'a@b.co' }, { email: 'A@B.CO' }] }] }, 'workspaces[0].users[1].email'],
    [
      { workspaces: [{ key: 'ok' }, { customers: [{ name: 'A\u0000nn' }] }] },
      'workspaces[1].customers[0].name: must be 1 to 500 characters without control characters',
    ],
    [
      { workspaces: [{ customers: [{ subscriptions: [{ plan_name: 'Pro\u0000' }] }] }] },
      'workspaces[0].customers[0].subscriptions[0].plan_name: must be 1 to 255 characters without control characters',
    ],
    [
      { workspaces: [{ customers: [{ tags: ['vip', 'v\u0000ip'] }] }] },
      'workspaces[0].customers[0].tags[1]: must be 1 to 100 characters, not all spaces, without control characters',
    ],
    [{ workspaces: [{ customers: [{ tags: ['   '] }] }] }, 'workspaces[0].customers[0].tags[0]: must be 1 to 100'],
    [
      { workspaces: [{ customers: [{ key: 'c' }], cancel_sessions: [{ customer: 'c', feedback: 'too\u0000dear' }] }] },
      'workspaces[0].cancel_sessions[0].feedback: must be 1 to 5000 characters without control characters other than line breaks and tabs',
    ],
    [{ workspaces: [{ name: 'Ac\u0007me' }] }, 'workspaces[0].name: must be 1 to 200 characters'],
    [{ workspaces: [{ key: 'k\u0000' }] }, 'workspaces[0].key: must be 1 to 200 characters without control characters'],
    [
      {
        workspaces: [
          { customers: [{ key: 'c', subscriptions: [{}] }], campaigns: [{ customer: 'c', decline_code: 'x\u001b' }] },
        ],
      },
      'workspaces[0].campaigns[0].decline_code: must be 1 to 100 characters without control characters',
    ],
    [
      { workspaces: [{ customers: [{ subscriptions: [{ amount_cents: 1_000_000_000_001 }] }] }] },
      'workspaces[0].customers[0].subscriptions[0].amount_cents: must be an integer amount in minor units from 0 to 1000000000000',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [{ customer: 'c', amount_cents: Number.MAX_SAFE_INTEGER }],
          },
        ],
      },
      'workspaces[0].campaigns[0].amount_cents: must be an integer amount in minor units from 0 to 1000000000000',
    ],
    [
      { workspaces: [{ customers: [{ key: 'c' }], cancel_sessions: [{ customer: 'c', monthly_mrr_cents: 1e13 }] }] },
      'workspaces[0].cancel_sessions[0].monthly_mrr_cents: must be an integer amount',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [
              {
                customer: 'c',
                status: 'recovered',
                first_failed_at: '2026-03-01T00:00:00Z',
                recovered_at: '2025-01-01T00:00:00Z',
              },
            ],
          },
        ],
      },
      'workspaces[0].campaigns[0].recovered_at: must not be before first_failed_at (2026-03-01T00:00:00.000Z)',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [
              { customer: 'c', status: 'lost', first_failed_at: '2026-03-01', closed_at: '2026-02-28T23:59:59.999Z' },
            ],
          },
        ],
      },
      'workspaces[0].campaigns[0].closed_at: must not be before first_failed_at (2026-03-01T00:00:00.000Z)',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [
              {
                customer: 'c',
                status: 'recovered',
                first_failed_at: '2026-03-01',
                recovered_at: '2026-03-02',
                closed_at: '2026-03-03',
              },
            ],
          },
        ],
      },
      'workspaces[0].campaigns[0].closed_at: must equal recovered_at',
    ],
    [
      {
        workspaces: [
          {
            customers: [{ key: 'c', subscriptions: [{}] }],
            campaigns: [{ customer: 'c', status: 'abandoned', first_failed_at: '2999-01-01' }],
          },
        ],
      },
      'workspaces[0].campaigns[0].first_failed_at: must not be after the close time',
    ],
    [
      { workspaces: [{ key: 'fine' }, { display_currency: 'xyz' }] },
      'workspaces[1].display_currency: no FX rate is known for "xyz"',
    ],
    [
      {
        workspaces: [
          { webhooks: Array.from({ length: 17 }, (_, index) => ({ url: `https://hooks.example.com/${index}` })) },
        ],
      },
      'workspaces[0].webhooks: must NOT have more than 16 items',
    ],
    [{ workspaces: 'all of them' }, 'workspaces: must be array'],
    [[], '(root): must be object'],
  ])('refuses a bad file, naming the path, and writes nothing (%#)', async (file, message) => {
    const before = await countRows();
    const error = await failure(file);
    expect(error.type).toBe('invalid_param');
    expect(error.message).toContain(message);
    expect(await countRows()).toEqual(before);
  });

  it('closes a campaign no earlier than its first failure, which defaults to a stated close time when that is earlier', async () => {
    const { db } = database.current;
    const result = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [
        {
          customers: [{ key: 'c', subscriptions: [{}] }],
          campaigns: [
            { key: 'lost', customer: 'c', status: 'lost', closed_at: '2025-01-01T00:00:00Z' },
            { key: 'recovered', customer: 'c', status: 'recovered', recovered_at: '2025-02-01T00:00:00Z' },
            { key: 'same', customer: 'c', status: 'recovered', first_failed_at: '2025-03-01', closed_at: '2025-03-01' },
          ],
        },
      ],
    });
    const ids = result.workspaces['0']!.campaigns;
    const rows = await db('recovery_campaigns').whereIn('id', Object.values(ids)).orderBy('first_failed_at');
    expect(rows.map((row) => [row.first_failed_at, row.recovered_at, row.closed_at])).toEqual([
      [new Date('2025-01-01T00:00:00Z'), null, new Date('2025-01-01T00:00:00Z')],
      [new Date('2025-02-01T00:00:00Z'), new Date('2025-02-01T00:00:00Z'), new Date('2025-02-01T00:00:00Z')],
      [new Date('2025-03-01T00:00:00Z'), new Date('2025-03-01T00:00:00Z'), new Date('2025-03-01T00:00:00Z')],
    ]);
  });

  it('takes a display currency that has an FX rate, shipped or set', async () => {
    const { db } = database.current;
    await db('fx_rates').insert({ currency: 'thb', per_usd: '36.5' });
    const result = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [
        { key: 'eur', display_currency: 'eur' },
        { key: 'thb', display_currency: 'thb' },
      ],
    });
    const rows = await db('workspaces')
      .whereIn('id', [result.workspaces.eur!.id, result.workspaces.thb!.id])
      .pluck('display_currency');
    expect(rows.sort()).toEqual(['eur', 'thb']);
  });

  it('rolls back everything when the database refuses a row half-way', async () => {
    const { db } = database.current;
    const before = await countRows();
    // Webhook endpoints are inserted last: make Postgres refuse them, after thousands of
    // customers of the same file have already been inserted in that transaction.
    await db.raw('ALTER TABLE webhook_endpoints ADD CONSTRAINT test_refuse_all CHECK (false) NOT VALID');
    try {
      await expect(
        loadFixtures(db, testSecretsKeyBytes(), {
          workspaces: [
            { customers: Array.from({ length: 3000 }, () => ({})), webhooks: [{ url: 'https://ok.example.com' }] },
          ],
        }),
      ).rejects.toThrow(/test_refuse_all/);
    } finally {
      await db.raw('ALTER TABLE webhook_endpoints DROP CONSTRAINT test_refuse_all');
    }
    expect(await countRows()).toEqual(before);
  });

  it('loads ten thousand customers with subscriptions and campaigns in batches', async () => {
    const customers = Array.from({ length: 10_000 }, (_, i) => ({
      key: `c${i}`,
      email: `c${i}@bulk.test`,
      subscriptions: [{ key: `s${i}`, amount_cents: 1000 + i, currency: ['usd', 'eur', 'jpy'][i % 3]! }],
    }));
    const campaigns = customers.map((customer, i) => ({
      customer: customer.key,
      status: (['in_flight', 'lost'] as const)[i % 2],
    }));
    const result = await loadFixtures(database.current.db, testSecretsKeyBytes(), {
      workspaces: [{ key: 'bulk', customers, campaigns }],
    });
    const id = result.workspaces.bulk!.id;
    const [counted] = await database.current.db
      .raw<{ rows: Array<{ customers: number; subscriptions: number; campaigns: number; rollup: number }> }>(
        `SELECT (SELECT count(*) FROM customers WHERE workspace_id = :id) AS customers,
              (SELECT count(*) FROM subscriptions WHERE workspace_id = :id) AS subscriptions,
              (SELECT count(*) FROM recovery_campaigns WHERE workspace_id = :id) AS campaigns,
              (SELECT sum(campaigns)::bigint FROM campaign_rollups WHERE workspace_id = :id) AS rollup`,
        { id },
      )
      .then((r) => r.rows);
    expect(counted).toEqual({ customers: 10_000, subscriptions: 10_000, campaigns: 10_000, rollup: 10_000 });
  });

  it('is reachable as `fixtures load FILE` and refuses a file that is not JSON, missing or a directory', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fixtures-'));
    const good = path.join(dir, 'good.json');
    const bad = path.join(dir, 'bad.json');
    await writeFile(
      good,
      JSON.stringify({
        workspaces: [{ key: 'cli', tokens: [{ key: 't' }], webhooks: [{ key: 'w', url: 'https://a.example.com/h' }] }],
      }),
    );
    await writeFile(bad, '{"workspaces": [');
    const env = { DATABASE_URL: database.current.url };
    const [ok, broken, missing, directory] = await Promise.all([
      runCli(['fixtures', 'load', good], env),
      runCli(['fixtures', 'load', bad], env),
      runCli(['fixtures', 'load', path.join(dir, 'missing.json')], env),
      runCli(['fixtures', 'load', dir], env),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.json).toEqual({
      workspaces: {
        cli: {
          id: expect.any(String),
          users: {},
          tokens: { t: { id: expect.any(String), token: expect.stringMatching(/^sk_live_/) } },
          customers: {},
          subscriptions: {},
          campaigns: {},
          cancel_sessions: {},
          webhooks: { w: { id: expect.any(String), secret: expect.stringMatching(/^whsec_/) } },
        },
      },
    });
    expect(broken).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: expect.stringContaining('not valid JSON') },
    });
    expect(missing).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: `cannot read ${path.join(dir, 'missing.json')}: no such file` },
    });
    expect(directory).toMatchObject({
      code: 1,
      error: { type: 'invalid_param', message: `cannot read ${dir}: it is a directory, not a file` },
    });
  });
});
