import { beforeAll, describe, expect, it } from '@jest/globals';
import { CAMPAIGN_STATUSES, CANCEL_OUTCOMES, hashApiToken, sealSecret, ServiceError } from '@retention/core';
import { lastDemoReceiver, pointDemoEndpointsAt, seedDemo, type DemoSeedResult } from '@retention/domain';
import { useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';
import { demoDigest } from './demo-digest.js';
import { eventsOf } from './helpers.js';

const database = useTestDatabase();

const DAY = 86_400_000;
const NOW = new Date('2026-09-15T08:30:00.000Z');
const BASE_URL = 'https://retention.example.com';

describe('seedDemo determinism', () => {
  it('gives the same data for the same seed and different data for another seed', async () => {
    const { db } = database.current;
    const first = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 60,
      seed: 2024,
      baseUrl: BASE_URL,
      now: NOW,
    });
    const second = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 60,
      seed: 2024,
      baseUrl: BASE_URL,
      now: NOW,
    });
    const other = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 60,
      seed: 2025,
      baseUrl: BASE_URL,
      now: NOW,
    });

    expect(second.workspace.id).not.toBe(first.workspace.id);
    expect(second.token).not.toBe(first.token);
    expect(second.counts).toEqual(first.counts);
    const digest = await demoDigest(db, first.workspace.id, first.as_of);
    expect(digest.customers).toMatch(/^60:/);
    expect(await demoDigest(db, second.workspace.id, second.as_of)).toEqual(digest);

    const otherDigest = await demoDigest(db, other.workspace.id, other.as_of);
    expect(otherDigest.customers).not.toBe(digest.customers);
    expect(otherDigest.campaigns).not.toBe(digest.campaigns);
    // The campaigns' history is part of the data: events, deliveries and their attempts.
    expect(digest.events).not.toMatch(/^0:/);
    expect(digest.webhook_attempts).not.toMatch(/^0:/);
    expect(otherDigest.events).not.toBe(digest.events);

    // Whoever has a last sign-in can sign in (has a password): one without a password reads as an
    // account never signed up, which an invitation for another role takes over. Every demo's
    // admin signed in, to mark campaigns recovered, last at their last such action, the later
    // demos' too (they used to have neither, "Never" on Team): an address signs in to one
    // workspace only, so a later demo's admin is ops+2@…, ops+3@…. Every demo's owner (who signs
    // in through npm start's invitation) and member have neither.
    const people = await db('users')
      .whereIn('workspace_id', [first.workspace.id, second.workspace.id, other.workspace.id])
      .select('workspace_id', 'role', 'email', 'name', 'last_sign_in_at', 'password_hash');
    const facts = (workspaceId: string) =>
      Object.fromEntries(
        people
          .filter((person) => person.workspace_id === workspaceId)
          .map((person) => [person.role, [person.last_sign_in_at !== null, person.password_hash !== null]]),
      );
    const demos = [first, second, other].map((demo) => demo.workspace.id);
    expect(demos.map(facts)).toEqual(
      demos.map(() => ({ owner: [false, false], admin: [true, true], member: [false, false] })),
    );
    // Each person has a name, in every demo: nameless, each read "—" on Team.
    const names = (workspaceId: string) =>
      Object.fromEntries(people.filter((person) => person.workspace_id === workspaceId).map((p) => [p.role, p.name]));
    expect(demos.map(names)).toEqual(
      demos.map(() => ({ owner: 'Dana Moreno', admin: 'Priya Shah', member: 'Leo Martin' })),
    );
    const admins = demos.map((id) => people.find((person) => person.workspace_id === id && person.role === 'admin'));
    expect(admins.map((admin) => admin.email)).toEqual([
      'ops@northwind.example',
      'ops+2@northwind.example',
      'ops+3@northwind.example',
    ]);
    for (const [index, id] of demos.entries()) {
      const [lastAction] = await db('security_events')
        .where({ workspace_id: id, action: 'campaign.marked_recovered' })
        .max('created_at as at');
      expect(admins[index].last_sign_in_at.getTime()).toBe((lastAction as { at: Date }).at.getTime());
    }
    await expect(
      db('users').whereNotNull('last_sign_in_at').whereNull('password_hash').count('* as count').first(),
    ).resolves.toEqual({ count: 0 });
  });

  it('is the same data, shifted, when seeded at another time', async () => {
    const { db } = database.current;
    const early = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 30,
      seed: 77,
      baseUrl: BASE_URL,
      now: NOW,
    });
    const later = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 30,
      seed: 77,
      baseUrl: BASE_URL,
      now: new Date(NOW.getTime() + 3 * DAY + 1234),
    });
    expect(await demoDigest(db, later.workspace.id, later.as_of)).toEqual(
      await demoDigest(db, early.workspace.id, early.as_of),
    );
  });
});

describe('seedDemo realism (500 customers, the default)', () => {
  let seeded: DemoSeedResult;
  const rows = async <T>(sql: string, bindings: Record<string, unknown> = {}): Promise<T[]> =>
    (await database.current.db.raw<{ rows: T[] }>(sql, { workspaceId: seeded.workspace.id, ...bindings })).rows;

  beforeAll(async () => {
    seeded = await seedDemo(database.current.db, {
      secretsKey: testSecretsKeyBytes(),
      baseUrl: BASE_URL,
      seed: 3,
      now: NOW,
    });
    // Some 5 s on a quiet machine, and six times that on a loaded one (a CI run beside other work).
  }, 120_000);

  it('reports what it created, with a working token and a ready-to-paste curl line', async () => {
    const { db } = database.current;
    expect(seeded).toMatchObject({
      object: 'demo_seed',
      seed: 3,
      as_of: NOW.toISOString(),
      workspace: { id: expect.any(String), name: expect.any(String) },
      owner: { id: expect.any(String), email: expect.stringMatching(/@/) },
      token: expect.stringMatching(/^sk_live_[0-9A-Za-z]{32}$/),
    });
    expect(seeded.counts.customers).toBe(500);
    expect(seeded.curl).toBe(
      `curl -s -H 'Authorization: Bearer ${seeded.token}' '${BASE_URL}/api/v1/campaigns?status=in_flight'`,
    );
    const token = await db('api_tokens')
      .where({ token_hash: hashApiToken(seeded.token) })
      .first();
    expect(token).toMatchObject({ id: seeded.token_id, workspace_id: seeded.workspace.id, revoked_at: null });
    const owner = await db('users').where({ id: seeded.owner.id }).first();
    expect(owner).toMatchObject({ workspace_id: seeded.workspace.id, role: 'owner', email: seeded.owner.email });
    const workspace = await db('workspaces').where({ id: seeded.workspace.id }).first();
    expect(workspace.processor_status).toBe('connected');
  });

  it('records its token and its endpoints in the security log as made by its maker, as the CLI records its own', async () => {
    const made = await database.current
      .db('security_events')
      .where({ workspace_id: seeded.workspace.id })
      .whereIn('action', ['token.created', 'webhook.created'])
      .orderBy([{ column: 'action' }, { column: 'target_label' }])
      .select(
        'action',
        'actor_type',
        'actor_user_id',
        'actor_label',
        'target_type',
        'target_label',
        'details',
        'created_at',
      );
    // `demo seed` by default: the operator CLI, as its `token create` and `webhook create` say.
    const maker = { actor_type: 'operator', actor_user_id: null, actor_label: 'operator CLI' };
    const added = new Date(NOW.getTime() - 120 * DAY);
    expect(made).toEqual([
      {
        action: 'token.created',
        ...maker,
        target_type: 'api_token',
        target_label: 'demo seed',
        details: { hint: seeded.token.slice(-4), rate_limit_per_minute: 60 },
        created_at: NOW,
      },
      {
        action: 'webhook.created',
        ...maker,
        target_type: 'webhook_endpoint',
        target_label: 'CRM (https://crm.northwind.example/webhooks/retention)',
        details: { name: 'CRM', events: ['recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost'] },
        created_at: added,
      },
      {
        action: 'webhook.created',
        ...maker,
        target_type: 'webhook_endpoint',
        target_label: 'Dunning emails (https://mail.northwind.example/hooks/retention)',
        details: { name: 'Dunning emails', events: ['recovery.opened', 'recovery.recovered', 'recovery.lost'] },
        created_at: added,
      },
    ]);
    // When the token says it was made, and when the endpoints say they were added.
    expect(await database.current.db('api_tokens').where({ id: seeded.token_id }).first('created_at')).toEqual({
      created_at: NOW,
    });
    expect(
      await database.current
        .db('webhook_endpoints')
        .where({ workspace_id: seeded.workspace.id })
        .distinct()
        .pluck('created_at'),
    ).toEqual([added]);
  });

  it('matches its counts', async () => {
    const counted = async (table: string, column: string) =>
      Object.fromEntries(
        (
          await rows<{ key: string; count: number }>(
            `SELECT ${column} AS key, count(*) AS count FROM ${table} WHERE workspace_id = :workspaceId GROUP BY 1`,
          )
        ).map((row) => [row.key, row.count]),
      );
    expect(await counted('recovery_campaigns', 'status')).toEqual(
      Object.fromEntries(Object.entries(seeded.counts.campaigns).filter(([, count]) => count > 0)),
    );
    expect(await counted('cancel_sessions', 'outcome')).toEqual(
      Object.fromEntries(Object.entries(seeded.counts.cancel_sessions).filter(([, count]) => count > 0)),
    );
    expect(await counted('subscriptions', 'status')).toEqual(
      Object.fromEntries(Object.entries(seeded.counts.subscriptions).filter(([, count]) => count > 0)),
    );
  });

  it("plays each campaign's story through the domain actions: its events at the times they happened, as history", async () => {
    const { db } = database.current;
    const campaigns = await db('recovery_campaigns').where({ workspace_id: seeded.workspace.id });
    const events = await eventsOf(db, seeded.workspace.id);
    const byCampaign = new Map<string, typeof events>();
    for (const event of events.filter((row) => row.type.startsWith('recovery.'))) {
      const id = (event.data as { campaign_id: string }).campaign_id;
      byCampaign.set(id, [...(byCampaign.get(id) ?? []), event]);
    }
    const story = (campaign: (typeof campaigns)[number]) =>
      (byCampaign.get(campaign.id) ?? []).map((event) => ({
        type: event.type,
        at: event.created_at.getTime(),
        ...('recovered_via' in event.data && { via: event.data.recovered_via }),
        ...('reason' in event.data && { reason: event.data.reason }),
        ...('source' in event.data && { source: event.data.source }),
      }));
    const opened = (campaign: (typeof campaigns)[number]) => ({
      type: 'recovery.opened',
      at: campaign.first_failed_at.getTime(),
    });
    for (const campaign of campaigns) {
      const closedAt = campaign.closed_at?.getTime();
      const expected = {
        in_flight: [opened(campaign)],
        recovered: [opened(campaign), { type: 'recovery.recovered', at: closedAt, via: campaign.recovered_via }],
        lost: [opened(campaign), { type: 'recovery.lost', at: closedAt }],
        abandoned: [opened(campaign), { type: 'recovery.lost', at: closedAt, reason: 'auto_close_stale' }],
      }[campaign.status as string];
      expect([campaign.psp_invoice_id, story(campaign)]).toEqual([campaign.psp_invoice_id, expected]);
    }
    expect(events.filter((event) => event.type.startsWith('recovery.'))).toHaveLength(
      byCampaign.size + campaigns.filter((campaign) => campaign.closed_at).length,
    );
    // Recorded in the order they happened, and dispatched: no webhook goes out for the past.
    const times = events.map((event) => event.created_at.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const [undispatched] = await rows<{ count: number }>(
      `SELECT count(*) AS count FROM event_outbox o JOIN events e ON e.id = o.event_id WHERE e.workspace_id = :workspaceId`,
    );
    expect(undispatched!.count).toBe(0);
    const [pending] = await rows<{ count: number }>(
      `SELECT count(*) AS count FROM webhook_deliveries WHERE workspace_id = :workspaceId AND status = 'pending'`,
    );
    expect(pending!.count).toBe(0);

    // Recovered by hand: by the admin, in the security log, at the close (the timeline's "Marked recovered by").
    const manual = campaigns.filter((campaign) => campaign.recovered_via === 'manual');
    expect(manual.length).toBeGreaterThan(0);
    const admin = await db('users').where({ workspace_id: seeded.workspace.id, role: 'admin' }).first();
    const marked = await db('security_events')
      .where({ workspace_id: seeded.workspace.id, action: 'campaign.marked_recovered' })
      .orderBy('created_at');
    expect(
      marked.map((row) => ({ target: row.target_id, at: row.created_at.getTime(), actor: row.actor_user_id })),
    ).toEqual(
      [...manual]
        .sort((a, b) => a.closed_at.getTime() - b.closed_at.getTime())
        .map((campaign) => ({ target: campaign.id, at: campaign.closed_at.getTime(), actor: admin.id })),
    );
    expect(manual.every((campaign) => campaign.closed_by_user_id === admin.id)).toBe(true);
    // Signed in to do it, in this demo as in any (see the determinism test): their last sign-in
    // is their last such action, never "Never" beside them, and they have a password.
    expect(admin.password_hash).not.toBeNull();
    expect(admin.last_sign_in_at?.getTime()).toBe(marked.at(-1)!.created_at.getTime());
  });

  it("records each campaign's failed payment attempts and Stripe's next retry, as its events would have: the retries before a recovery by retry failed, an open campaign waits on the next or on none", async () => {
    const { db } = database.current;
    const campaigns = await db('recovery_campaigns').where({ workspace_id: seeded.workspace.id });
    const attempts = await db('campaign_payment_attempts')
      .where({ workspace_id: seeded.workspace.id })
      .orderBy(['campaign_id', 'attempt_number']);
    const byCampaign = new Map<string, typeof attempts>();
    for (const row of attempts) byCampaign.set(row.campaign_id, [...(byCampaign.get(row.campaign_id) ?? []), row]);
    const retryDays = [1, 3, 5, 7];
    for (const campaign of campaigns) {
      const own = byCampaign.get(campaign.id) ?? [];
      const first = campaign.first_failed_at.getTime();
      const end = campaign.closed_at?.getTime() ?? NOW.getTime();
      // The first failure, then each retry of the schedule before the end, numbered by Stripe's count.
      expect(own.map((row) => row.attempt_number)).toEqual(own.map((_, index) => index + 1));
      expect(own[0]).toMatchObject({ failed_at: campaign.first_failed_at, decline_code: campaign.decline_code });
      own.slice(1).forEach((row, index) => {
        expect(row.failed_at.getTime()).toBe(first + retryDays[index]! * DAY);
        expect(row.failed_at.getTime()).toBeLessThan(end);
      });
      const last = own.at(-1)!;
      expect(campaign.next_payment_attempt_as_of).toEqual(last.failed_at);
      const next = retryDays[own.length - 1];
      expect(campaign.next_payment_attempt_at?.getTime() ?? null).toBe(next === undefined ? null : first + next * DAY);
      if (campaign.status === 'in_flight') {
        // Open: Stripe's next retry is still to come, or there is none.
        expect(campaign.next_payment_attempt_at === null || campaign.next_payment_attempt_at > NOW).toBe(true);
      }
      if (campaign.recovered_via === 'retry') {
        // Recovered by the retry of its day: the one after the last failed attempt.
        expect(next).toBeDefined();
        expect(end - (first + next! * DAY)).toBeGreaterThanOrEqual(0);
        expect(end - (first + next! * DAY)).toBeLessThanOrEqual(4 * 3_600_000);
      }
    }
    // A 30-day-old open campaign (the stale sweep has not run on it yet) or a lost one ran the whole schedule.
    const ranAll = campaigns.filter(
      (campaign) =>
        campaign.status === 'lost' ||
        (campaign.status === 'in_flight' && campaign.first_failed_at.getTime() < NOW.getTime() - 7 * DAY),
    );
    expect(ranAll.filter((campaign) => campaign.status === 'in_flight').length).toBeGreaterThan(0);
    for (const campaign of ranAll) {
      expect(byCampaign.get(campaign.id)).toHaveLength(5);
      expect(campaign.next_payment_attempt_at).toBeNull();
    }
    expect(campaigns.some((c) => c.status === 'in_flight' && c.next_payment_attempt_at !== null)).toBe(true);
    expect(campaigns.some((c) => c.recovered_via === 'retry' && byCampaign.get(c.id)!.length > 1)).toBe(true);
  });

  it('records each cancel session as the CLI and the processor sync do (recordCancelSession), when it ended: cancel.saved or cancel.lost with its deliveries, nothing for an abandoned one', async () => {
    const { db } = database.current;
    const workspaceId = seeded.workspace.id;
    const sessions = await db('cancel_sessions').where({ workspace_id: workspaceId }).orderBy('ended_at');
    const emails = new Map(
      (await db('customers').where({ workspace_id: workspaceId })).map((customer) => [customer.id, customer.email]),
    );
    const events = (await eventsOf(db, workspaceId)).filter((event) => event.type.startsWith('cancel.'));
    const bySession = new Map(events.map((event) => [(event.data as { session_id: string }).session_id, event]));
    expect(bySession.size).toBe(events.length);
    for (const session of sessions) {
      const event = bySession.get(session.id);
      expect([
        session.outcome,
        event && { type: event.type, at: event.created_at.getTime(), data: event.data },
      ]).toEqual([
        session.outcome,
        session.outcome === 'abandoned'
          ? undefined
          : {
              type: session.outcome === 'canceled' ? 'cancel.lost' : 'cancel.saved',
              at: session.ended_at.getTime(),
              data: {
                session_id: session.id,
                outcome: session.outcome,
                reason_code: session.reason_code,
                customer_email: emails.get(session.customer_id),
                monthly_mrr_cents: session.monthly_mrr_cents,
                currency: session.currency,
              },
            },
      ]);
      // The flow took minutes: it began before it ended, as the generator says.
      expect(session.created_at.getTime()).toBeLessThan(session.ended_at.getTime());
    }
    expect(events).toHaveLength(sessions.filter((session) => session.outcome !== 'abandoned').length);

    // A recent saved session's event went to the CRM, which takes cancel events; an abandoned one has none to send.
    const keptSince = NOW.getTime() - 90 * DAY;
    const recent = sessions.filter((session) => session.ended_at.getTime() >= keptSince);
    const saved = recent.find((session) => session.outcome.startsWith('saved_'))!;
    const canceled = recent.find((session) => session.outcome === 'canceled')!;
    expect(recent.some((session) => session.outcome === 'abandoned')).toBe(true);
    const crm = await db('webhook_endpoints').where({ workspace_id: workspaceId, name: 'CRM' }).first();
    for (const session of [saved, canceled]) {
      const deliveries = await db('webhook_deliveries').where({ event_id: bySession.get(session.id)!.id });
      expect(deliveries.map((delivery) => [delivery.endpoint_id, delivery.status])).toEqual([[crm.id, 'succeeded']]);
    }
  });

  it("delivers the last 90 days' events (the webhook log's retention) to the endpoints subscribed, mostly at the first attempt", async () => {
    const { db } = database.current;
    const endpoints = await db('webhook_endpoints').where({ workspace_id: seeded.workspace.id }).orderBy('name');
    expect(endpoints.map((endpoint) => [endpoint.name, endpoint.event_types, endpoint.enabled])).toEqual([
      ['CRM', ['recovery.recovered', 'recovery.lost', 'cancel.saved', 'cancel.lost'], true],
      ['Dunning emails', ['recovery.opened', 'recovery.recovered', 'recovery.lost'], true],
    ]);
    const keptSince = NOW.getTime() - 90 * DAY;
    const events = (await eventsOf(db, seeded.workspace.id)).filter((event) => event.created_at.getTime() >= keptSince);
    const deliveries = await db('webhook_deliveries').where({ workspace_id: seeded.workspace.id });
    const expected = events.flatMap((event) =>
      endpoints
        .filter((endpoint) => endpoint.event_types.includes(event.type))
        .map((endpoint) => `${event.id} ${endpoint.id}`),
    );
    expect(deliveries.map((delivery) => `${delivery.event_id} ${delivery.endpoint_id}`).sort()).toEqual(
      expected.sort(),
    );
    expect(deliveries.length).toBeGreaterThan(20);

    const attempts = await db('webhook_attempts')
      .whereIn(
        'delivery_id',
        deliveries.map((delivery) => delivery.id),
      )
      .orderBy(['delivery_id', 'attempt']);
    const byDelivery = new Map<string, typeof attempts>();
    for (const attempt of attempts)
      byDelivery.set(attempt.delivery_id, [...(byDelivery.get(attempt.delivery_id) ?? []), attempt]);
    for (const delivery of deliveries) {
      const log = byDelivery.get(delivery.id)!;
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: log.length, next_attempt_at: null });
      expect(log.map((attempt) => attempt.outcome)).toEqual([...Array(log.length - 1).fill('failed'), 'succeeded']);
      log.forEach((attempt, index) => {
        // A failed attempt names the next one's time; the log is within its delivery's life.
        if (index < log.length - 1) expect(attempt.next_attempt_at).toEqual(log[index + 1]!.attempted_at);
        expect(attempt.attempted_at.getTime()).toBeGreaterThanOrEqual(delivery.created_at.getTime());
      });
      expect(delivery.completed_at.getTime()).toBeLessThanOrEqual(NOW.getTime());
    }
    const retried = deliveries.filter((delivery) => delivery.attempt_count > 1).length;
    expect(retried).toBeGreaterThan(0);
    expect(retried / deliveries.length).toBeLessThan(0.2);
    const lastSuccess = Math.max(
      ...attempts.filter((attempt) => attempt.outcome === 'succeeded').map((attempt) => attempt.attempted_at.getTime()),
    );
    expect(Math.max(...endpoints.map((endpoint) => endpoint.last_success_at.getTime()))).toBeGreaterThanOrEqual(
      lastSuccess,
    );
  });

  it('has campaigns in every status and cancel sessions in every outcome', () => {
    for (const status of CAMPAIGN_STATUSES) expect(seeded.counts.campaigns[status]).toBeGreaterThan(0);
    for (const outcome of CANCEL_OUTCOMES) expect(seeded.counts.cancel_sessions[outcome]).toBeGreaterThan(0);
    // A business of 500 customers over six months: a steady trickle of failed renewals.
    const campaigns = Object.values(seeded.counts.campaigns).reduce((sum, count) => sum + count, 0);
    expect(campaigns).toBeGreaterThan(50);
    expect(seeded.counts.campaigns.recovered).toBeGreaterThan(seeded.counts.campaigns.lost);
  });

  it('has campaigns in every status in each of usd, eur, gbp and jpy', async () => {
    const pairs = await rows<{ currency: string; status: string }>(
      `SELECT DISTINCT currency, status FROM recovery_campaigns WHERE workspace_id = :workspaceId ORDER BY 1, 2`,
    );
    expect(pairs).toEqual(
      ['eur', 'gbp', 'jpy', 'usd'].flatMap((currency) =>
        [...CAMPAIGN_STATUSES].sort().map((status) => ({ currency, status })),
      ),
    );
  });

  it('bills in usd, eur, gbp and jpy, with plan prices that make sense in each (yen have no minor unit)', async () => {
    const prices = await rows<{ currency: string; amounts: number[] }>(
      `SELECT currency, array_agg(DISTINCT CAST(amount_cents AS integer) ORDER BY CAST(amount_cents AS integer)) AS amounts
         FROM subscriptions WHERE workspace_id = :workspaceId GROUP BY currency ORDER BY currency`,
    );
    expect(prices.map((price) => price.currency)).toEqual(['eur', 'gbp', 'jpy', 'usd']);
    const byCurrency = Object.fromEntries(prices.map((price) => [price.currency, price.amounts]));
    // Monthly plans, and yearly ones at ten months.
    const plans = {
      usd: [1900, 4900, 14900],
      eur: [1900, 4500, 13900],
      gbp: [1500, 3900, 11900],
      jpy: [2500, 6800, 19800],
    };
    for (const [currency, monthly] of Object.entries(plans)) {
      const allowed = [...monthly, ...monthly.map((amount) => amount * 10)];
      expect(byCurrency[currency]!.every((amount) => allowed.includes(amount))).toBe(true);
    }
    const campaignCurrencies = await rows<{ currency: string }>(
      `SELECT DISTINCT currency FROM recovery_campaigns WHERE workspace_id = :workspaceId ORDER BY 1`,
    );
    expect(campaignCurrencies.map((row) => row.currency)).toEqual(['eur', 'gbp', 'jpy', 'usd']);
    const mismatched = await rows(
      `SELECT 1 FROM recovery_campaigns k JOIN subscriptions s ON s.id = k.subscription_id
        WHERE k.workspace_id = :workspaceId AND k.currency <> s.currency`,
    );
    expect(mismatched).toEqual([]);
  });

  it('puts every past timestamp within the last 365 days', async () => {
    const [range] = await rows<{ earliest: Date; latest: Date }>(
      `SELECT min(t) AS earliest, max(t) AS latest FROM (
         SELECT created_at AS t FROM customers WHERE workspace_id = :workspaceId
         UNION ALL SELECT created_at FROM subscriptions WHERE workspace_id = :workspaceId
         UNION ALL SELECT canceled_at FROM subscriptions WHERE workspace_id = :workspaceId
         UNION ALL SELECT first_failed_at FROM recovery_campaigns WHERE workspace_id = :workspaceId
         UNION ALL SELECT recovered_at FROM recovery_campaigns WHERE workspace_id = :workspaceId
         UNION ALL SELECT closed_at FROM recovery_campaigns WHERE workspace_id = :workspaceId
         UNION ALL SELECT created_at FROM cancel_sessions WHERE workspace_id = :workspaceId
         UNION ALL SELECT ended_at FROM cancel_sessions WHERE workspace_id = :workspaceId
       ) times`,
    );
    expect(range!.earliest.getTime()).toBeGreaterThanOrEqual(NOW.getTime() - 365 * DAY);
    expect(range!.latest.getTime()).toBeLessThanOrEqual(NOW.getTime());
    // Spread over the window, not bunched at one end.
    expect(range!.earliest.getTime()).toBeLessThan(NOW.getTime() - 150 * DAY);
    expect(range!.latest.getTime()).toBeGreaterThan(NOW.getTime() - DAY);
  });

  // Abandoned by the stale-campaign job's first run (every 10 minutes) after they turned 30 days old.
  it('tells a consistent story: open campaigns are young, stale ones abandoned, lost ones cancel the subscription', async () => {
    const [ages] = await rows<{
      oldest_open: number;
      youngest_abandoned: number;
      abandoned_off_schedule: number;
      recovered_badly: number;
      lost_not_canceled: number;
      open_not_past_due: number;
    }>(
      `SELECT
         max(CAST(extract(epoch FROM CAST(:now AS timestamptz) - first_failed_at) AS float8) / 86400) FILTER (WHERE k.status = 'in_flight') AS oldest_open,
         min(CAST(extract(epoch FROM CAST(:now AS timestamptz) - first_failed_at) AS float8) / 86400) FILTER (WHERE k.status = 'abandoned') AS youngest_abandoned,
         count(*) FILTER (WHERE k.status = 'abandoned' AND (k.closed_at <= k.first_failed_at + interval '30 days'
                          OR k.closed_at > k.first_failed_at + interval '30 days 10 minutes')) AS abandoned_off_schedule,
         count(*) FILTER (WHERE k.status = 'recovered' AND (k.recovered_at <> k.closed_at OR k.recovered_at < k.first_failed_at)) AS recovered_badly,
         count(*) FILTER (WHERE k.status = 'lost' AND s.status <> 'canceled') AS lost_not_canceled,
         count(*) FILTER (WHERE k.status = 'in_flight' AND s.status <> 'past_due') AS open_not_past_due
         FROM recovery_campaigns k JOIN subscriptions s ON s.id = k.subscription_id
        WHERE k.workspace_id = :workspaceId`,
      { now: NOW },
    );
    expect(ages).toEqual({
      oldest_open: expect.any(Number),
      youngest_abandoned: expect.any(Number),
      abandoned_off_schedule: 0,
      recovered_badly: 0,
      lost_not_canceled: 0,
      open_not_past_due: 0,
    });
    expect(ages!.oldest_open).toBeLessThan(30);
    expect(ages!.youngest_abandoned).toBeGreaterThanOrEqual(30);
  });

  it('draws decline codes at real-world frequencies: insufficient_funds and generic_decline dominate', async () => {
    const codes = await rows<{ decline_code: string; count: number }>(
      `SELECT decline_code, count(*) AS count FROM recovery_campaigns WHERE workspace_id = :workspaceId
        GROUP BY 1 ORDER BY 2 DESC, 1`,
    );
    const total = codes.reduce((sum, row) => sum + row.count, 0);
    expect(codes.slice(0, 2).map((row) => row.decline_code)).toEqual(['insufficient_funds', 'generic_decline']);
    expect((codes[0]!.count + codes[1]!.count) / total).toBeGreaterThan(0.5);
    expect(codes.length).toBeGreaterThanOrEqual(6);
  });

  it('gives cancel sessions reason codes, some with feedback, their MRR in the subscription currency', async () => {
    const [sessions] = await rows<{ reasons: number; with_feedback: number; total: number; off_currency: number }>(
      `SELECT count(DISTINCT x.reason_code) AS reasons, count(x.feedback) AS with_feedback, count(*) AS total,
              count(*) FILTER (WHERE x.currency <> s.currency) AS off_currency
         FROM cancel_sessions x JOIN subscriptions s ON s.id = x.subscription_id
        WHERE x.workspace_id = :workspaceId`,
    );
    expect(sessions!.reasons).toBeGreaterThanOrEqual(6);
    expect(sessions!.with_feedback).toBeGreaterThan(0);
    expect(sessions!.with_feedback).toBeLessThan(sessions!.total);
    expect(sessions!.off_currency).toBe(0);
  });

  it('uses only reserved example domains for email addresses', async () => {
    const domains = await rows<{ domain: string }>(
      `SELECT DISTINCT split_part(email, '@', 2) AS domain FROM customers WHERE workspace_id = :workspaceId
       UNION SELECT DISTINCT split_part(email, '@', 2) FROM users WHERE workspace_id = :workspaceId`,
    );
    for (const { domain } of domains) expect(domain).toMatch(/(^|\.)example(\.(com|net|org))?$/);
  });
});

describe('seedDemo refusals', () => {
  it.each([
    [{ customers: 9 }, /customers/],
    [{ customers: 100_001 }, /customers/],
    [{ customers: 12.5 }, /customers/],
    [{ seed: -1 }, /seed/],
    [{ seed: 2 ** 32 }, /seed/],
    [{ baseUrl: 'ftp://example.com' }, /baseUrl/],
    [{ now: new Date(Date.now() + DAY) }, /now: must not be in the future/],
  ])('refuses %j with invalid_param and writes nothing', async (options, message) => {
    const { db } = database.current;
    const before = await db('workspaces').count<Array<{ count: number }>>('* as count');
    const failure = await seedDemo(db, { secretsKey: testSecretsKeyBytes(), baseUrl: BASE_URL, ...options }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ServiceError);
    expect(failure).toMatchObject({ type: 'invalid_param', message: expect.stringMatching(message) });
    expect(await db('workspaces').count<Array<{ count: number }>>('* as count')).toEqual(before);
  });
});

describe("the demo's webhook endpoints under npm start (a local receiver)", () => {
  const RECEIVER = 'https://127.0.0.1:40123';
  const urls = async (workspaceId: string) =>
    Object.fromEntries(
      (await database.current.db('webhook_endpoints').where({ workspace_id: workspaceId }).select('name', 'url')).map(
        (row: { name: string; url: string }) => [row.name, row.url],
      ),
    );
  /** Everything but the endpoints' URLs and the security log, which pointing them changes. */
  const history = async (demo: DemoSeedResult) => {
    const digest = await demoDigest(database.current.db, demo.workspace.id, demo.as_of);
    delete digest.webhook_endpoints;
    delete digest.security_events;
    return digest;
  };

  it("seeds the endpoints at the receiver's URLs, with the same history as at the catalog's", async () => {
    const { db } = database.current;
    const atCatalog = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 30,
      seed: 5,
      baseUrl: BASE_URL,
      now: NOW,
    });
    const atReceiver = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 30,
      seed: 5,
      baseUrl: BASE_URL,
      now: NOW,
      receiver: RECEIVER,
    });
    expect(await urls(atCatalog.workspace.id)).toEqual({
      'Dunning emails': 'https://mail.northwind.example/hooks/retention',
      CRM: 'https://crm.northwind.example/webhooks/retention',
    });
    expect(await urls(atReceiver.workspace.id)).toEqual({
      'Dunning emails': `${RECEIVER}/demo/dunning`,
      CRM: `${RECEIVER}/demo/crm`,
    });
    expect(await history(atReceiver)).toEqual(await history(atCatalog));
  });

  it('names the maker it is given (npm start) for its token and its endpoints', async () => {
    const { db } = database.current;
    const demo = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 10,
      seed: 9,
      baseUrl: BASE_URL,
      now: NOW,
      receiver: RECEIVER,
      actor: { type: 'system', label: 'Demo setup' },
    });
    expect(
      await db('security_events')
        .where({ workspace_id: demo.workspace.id })
        .whereIn('action', ['token.created', 'webhook.created'])
        .orderBy([{ column: 'action' }, { column: 'target_label' }])
        .select('action', 'actor_type', 'actor_label', 'target_label'),
    ).toEqual([
      { action: 'token.created', actor_type: 'system', actor_label: 'Demo setup', target_label: 'demo seed' },
      {
        action: 'webhook.created',
        actor_type: 'system',
        actor_label: 'Demo setup',
        target_label: `CRM (${RECEIVER}/demo/crm)`,
      },
      {
        action: 'webhook.created',
        actor_type: 'system',
        actor_label: 'Demo setup',
        target_label: `Dunning emails (${RECEIVER}/demo/dunning)`,
      },
    ]);
  });

  it("points the demo's endpoints, and only those, at a start's receiver, with the earlier receiver's attempts", async () => {
    const { db } = database.current;
    await db('webhook_endpoints').del(); // the earlier tests' workspaces
    const old = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 10,
      seed: 6,
      baseUrl: BASE_URL,
      now: NOW,
    });
    const earlier = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 10,
      seed: 7,
      baseUrl: BASE_URL,
      now: NOW,
      receiver: RECEIVER,
    });
    // Endpoints the user pointed elsewhere, or made: not the demo's any more.
    await db('webhook_endpoints')
      .where({ workspace_id: earlier.workspace.id, name: 'CRM' })
      .update({ url: 'https://crm.example.com/hooks' });
    const others = [
      'https://127.0.0.1:4000/webhooks',
      'https://127.0.0.1:4000/demo/unknown',
      'https://10.0.0.1:443/demo/dunning',
      'https://mail.northwind.example/hooks/retention?copy=1',
    ];
    for (const url of others) {
      await db('webhook_endpoints').insert({
        workspace_id: old.workspace.id,
        name: url,
        url,
        signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_test'),
      });
    }
    const histories = [await history(old), await history(earlier)];
    const attemptsBefore = await db('webhook_attempts').count<Array<{ count: string }>>('* as count');

    const actor = { type: 'system', label: 'Demo setup' } as const;
    expect(await pointDemoEndpointsAt(db, 'https://127.0.0.1:40999', actor)).toBe(3);

    expect(await urls(old.workspace.id)).toEqual({
      'Dunning emails': 'https://127.0.0.1:40999/demo/dunning',
      CRM: 'https://127.0.0.1:40999/demo/crm',
      ...Object.fromEntries(others.map((url) => [url, url])),
    });
    expect(await urls(earlier.workspace.id)).toEqual({
      'Dunning emails': 'https://127.0.0.1:40999/demo/dunning',
      CRM: 'https://crm.example.com/hooks',
    });
    expect([await history(old), await history(earlier)]).toEqual(histories);
    expect(await db('webhook_attempts').count('* as count')).toEqual(attemptsBefore);
    // The earlier receiver's attempts moved with it (the same receiver on a new port); those to
    // the catalog's addresses, and to an endpoint the user pointed elsewhere, stayed.
    const attemptUrls = (workspaceId: string, name: string) =>
      db('webhook_attempts as a')
        .join('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
        .where({ 'e.workspace_id': workspaceId, 'e.name': name })
        .distinct()
        .pluck('a.url');
    expect(await attemptUrls(earlier.workspace.id, 'Dunning emails')).toEqual(['https://127.0.0.1:40999/demo/dunning']);
    expect(await attemptUrls(earlier.workspace.id, 'CRM')).toEqual([`${RECEIVER}/demo/crm`]);
    expect(await attemptUrls(old.workspace.id, 'CRM')).toEqual(['https://crm.northwind.example/webhooks/retention']);
    // Each change is in the security log, as any other change of an endpoint's URL.
    const logged = await db('security_events')
      .where({ action: 'webhook.updated' })
      .orderBy('target_label')
      .select('workspace_id', 'actor_type', 'actor_label', 'target_label', 'details');
    // (The endpoint by its name and URL before the move.)
    expect(logged).toEqual([
      {
        workspace_id: old.workspace.id,
        actor_type: 'system',
        actor_label: 'Demo setup',
        target_label: 'CRM (https://crm.northwind.example/webhooks/retention)',
        details: {
          url: { from: 'https://crm.northwind.example/webhooks/retention', to: 'https://127.0.0.1:40999/demo/crm' },
        },
      },
      {
        workspace_id: earlier.workspace.id,
        actor_type: 'system',
        actor_label: 'Demo setup',
        target_label: `Dunning emails (${RECEIVER}/demo/dunning)`,
        details: { url: { from: `${RECEIVER}/demo/dunning`, to: 'https://127.0.0.1:40999/demo/dunning' } },
      },
      {
        workspace_id: old.workspace.id,
        actor_type: 'system',
        actor_label: 'Demo setup',
        target_label: 'Dunning emails (https://mail.northwind.example/hooks/retention)',
        details: {
          url: { from: 'https://mail.northwind.example/hooks/retention', to: 'https://127.0.0.1:40999/demo/dunning' },
        },
      },
    ]);
    // Already there: nothing to change, nothing logged.
    expect(await pointDemoEndpointsAt(db, 'https://127.0.0.1:40999', actor)).toBe(0);
    expect(await db('security_events').where({ action: 'webhook.updated' })).toHaveLength(3);
  });

  it("remembers the receiver's origin, and moves every endpoint on it, any path, when a start gets another", async () => {
    const { db } = database.current;
    // The earlier tests' endpoints, receiver and log.
    await db('webhook_endpoints').del();
    await db('demo_receiver').del();
    await db('security_events').where({ action: 'webhook.updated' }).del();
    const demo = await seedDemo(db, {
      secretsKey: testSecretsKeyBytes(),
      customers: 10,
      seed: 8,
      baseUrl: BASE_URL,
      now: NOW,
      receiver: RECEIVER,
    });
    // A database started before the origin was remembered: the demo's endpoints say where it was.
    expect(await lastDemoReceiver(db)).toBe(RECEIVER);
    const endpoint = async (name: string, url: string) =>
      (
        await db('webhook_endpoints')
          .insert({
            workspace_id: demo.workspace.id,
            name,
            url,
            signing_secret_sealed: sealSecret(testSecretsKeyBytes(), 'whsec_test'),
          })
          .returning<Array<{ id: string }>>('id')
      )[0]!.id;
    // The developer's own endpoint on the receiver, as the start banner suggests; another on a
    // receiver of their own on this machine, which is not the demo's.
    const mine = await endpoint('Mine', `${RECEIVER}/mine?copy=1`);
    await endpoint('Own receiver', 'https://127.0.0.1:4000/webhooks');

    // The same port again (the normal restart): nothing moves, nothing is logged, the origin is kept.
    const actor = { type: 'system', label: 'Demo setup' } as const;
    expect(await pointDemoEndpointsAt(db, RECEIVER, actor)).toBe(0);
    expect(await db('demo_receiver').pluck('origin')).toEqual([RECEIVER]);
    expect(await db('security_events').where({ action: 'webhook.updated' })).toHaveLength(0);

    // Remembered without the demo's endpoints: a developer who deleted them keeps their own.
    await db('webhook_endpoints').where({ workspace_id: demo.workspace.id }).whereIn('name', ['CRM']).del();
    await db('webhook_endpoints')
      .where({ workspace_id: demo.workspace.id, name: 'Dunning emails' })
      .update({ url: 'https://hooks.example.com/dunning' });
    expect(await lastDemoReceiver(db)).toBe(RECEIVER);

    // The port was taken: the receiver is elsewhere, and every endpoint on its origin follows it.
    expect(await pointDemoEndpointsAt(db, 'https://127.0.0.1:40777', actor)).toBe(1);
    expect(await urls(demo.workspace.id)).toEqual({
      'Dunning emails': 'https://hooks.example.com/dunning',
      Mine: 'https://127.0.0.1:40777/mine?copy=1',
      'Own receiver': 'https://127.0.0.1:4000/webhooks',
    });
    expect(await lastDemoReceiver(db)).toBe('https://127.0.0.1:40777');
    expect(
      await db('security_events')
        .where({ action: 'webhook.updated' })
        .select('target_id', 'actor_type', 'actor_label', 'details'),
    ).toEqual([
      {
        target_id: mine,
        actor_type: 'system',
        actor_label: 'Demo setup',
        details: { url: { from: `${RECEIVER}/mine?copy=1`, to: 'https://127.0.0.1:40777/mine?copy=1' } },
      },
    ]);
    // Logged once: the next start on that port moves nothing.
    expect(await pointDemoEndpointsAt(db, 'https://127.0.0.1:40777', actor)).toBe(0);
    expect(await db('security_events').where({ action: 'webhook.updated' })).toHaveLength(1);
  });
});
