import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  CampaignDetailSchema,
  CancelSessionSchema,
  compileValidator,
  CustomerDetailSchema,
  CustomerSchema,
  ListSchema,
  RecoveryCampaignSchema,
} from '@retention/core';
import type { Client } from '@retention/sdk';
import { useApi, workspaceWithToken } from './harness.js';

const api = useApi();

const validCustomerList = compileValidator(ListSchema(CustomerSchema, 'CustomerList'));
const validCampaignList = compileValidator(ListSchema(RecoveryCampaignSchema, 'CampaignList'));
const validSessionList = compileValidator(ListSchema(CancelSessionSchema, 'CancelSessionList'));
const validCustomerDetail = compileValidator(CustomerDetailSchema);
const validCampaignDetail = compileValidator(CampaignDetailSchema);

let token: string;
let ids: Awaited<ReturnType<typeof workspaceWithToken>>['ids'];
let client: Client;

beforeAll(async () => {
  ({ token, ids } = await workspaceWithToken(api.current, {
    customers: [
      {
        key: 'ann',
        email: 'Ann.Lee@Example.com',
        name: 'Ann Lee',
        psp_customer_id: 'cus_ann',
        tags: ['VIP', 'annual'],
        created_at: '2026-03-01T10:00:00.123Z',
        subscriptions: [
          {
            key: 'ann-pro',
            psp_subscription_id: 'sub_ann',
            status: 'past_due',
            plan_name: 'Pro',
            amount_cents: 4900,
            currency: 'usd',
            interval: 'month',
            current_period_end: '2026-04-01T00:00:00Z',
            created_at: '2026-03-01T10:00:01Z',
          },
          {
            key: 'ann-old',
            status: 'canceled',
            canceled_at: '2026-02-01T00:00:00Z',
            trial_end: '2025-12-01T00:00:00Z',
            created_at: '2025-11-01T00:00:00Z',
          },
        ],
      },
      {
        key: 'bob',
        email: 'bob@example.com',
        tags: ['trial'],
        created_at: '2026-03-02T00:00:00Z',
        subscriptions: [{ key: 'bob-sub', currency: 'eur', amount_cents: 1900 }],
      },
    ],
    campaigns: [
      ...Array.from({ length: 6 }, (_, i) => ({
        key: `ann-${i}`,
        customer: 'ann',
        subscription: 'ann-pro',
        psp_invoice_id: `in_ann_${i}`,
        amount_cents: 4900,
        decline_code: 'insufficient_funds',
        first_failed_at: `2026-03-0${i + 2}T08:00:00.000Z`,
      })),
      {
        key: 'recovered',
        customer: 'bob',
        psp_invoice_id: 'in_bob',
        status: 'recovered' as const,
        recovered_via: 'customer_update' as const,
        decline_code: 'expired_card',
        first_failed_at: '2026-02-01T00:00:00Z',
        recovered_at: '2026-02-03T12:00:00.500Z',
      },
    ],
    cancel_sessions: [
      {
        key: 'saved',
        customer: 'ann',
        subscription: 'ann-pro',
        outcome: 'saved_discount',
        reason_code: 'too_expensive',
        feedback: 'A bit pricey',
        created_at: '2026-03-05T00:00:00Z',
      },
      {
        key: 'gone',
        customer: 'bob',
        outcome: 'canceled',
        reason_code: 'switched_service',
        monthly_mrr_cents: 1900,
        currency: 'eur',
        created_at: '2026-03-06T00:00:00Z',
      },
    ],
  }));
  client = api.current.client(token);
});

describe('GET /api/v1/customers', () => {
  it('lists customers newest first with exactly the documented fields', async () => {
    const body = await client.customers.list();
    const raw = api.current.lastResponse();
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(body).toEqual(raw.body);
    expect(validCustomerList(body)).toBeNull();
    expect(body).toEqual({
      object: 'list',
      data: [
        {
          id: ids.customers.bob,
          object: 'customer',
          psp_customer_id: expect.stringMatching(/^cus_/),
          email: 'bob@example.com',
          name: null,
          tags: ['trial'],
          created_at: '2026-03-02T00:00:00.000Z',
        },
        {
          id: ids.customers.ann,
          object: 'customer',
          psp_customer_id: 'cus_ann',
          email: 'Ann.Lee@Example.com',
          name: 'Ann Lee',
          tags: ['vip', 'annual'],
          created_at: '2026-03-01T10:00:00.123Z',
        },
      ],
      has_more: false,
      next_cursor: '2026-03-01T10:00:00.123Z',
    });
  });

  it('filters by email, exactly and case-insensitively', async () => {
    const body = await client.customers.list({ email: 'ann.lee@example.COM' });
    expect(body.data.map((c) => c.id)).toEqual([ids.customers.ann]);
    expect((await client.customers.list({ email: 'ann.lee' })).data).toEqual([]);
    // No address holds a space, so one with a space is refused, not searched for (a bare + in a
    // query string reads as a space: the refusal says to send it as %2B).
    await expect(client.customers.list({ email: 'Ann.Lee@Example.com ' })).rejects.toThrow(
      /^Query parameter "email" must be 1 to 320 characters without spaces/,
    );
  });

  it('filters by tag, case-insensitively, whole tags only', async () => {
    expect((await client.customers.list({ tag: 'VIP' })).data.map((c) => c.id)).toEqual([ids.customers.ann]);
    expect((await client.customers.list({ tag: 'trial' })).data.map((c) => c.id)).toEqual([ids.customers.bob]);
    expect((await client.customers.list({ tag: 'vi' })).data).toEqual([]);
  });

  it('combines filters and the cursor', async () => {
    expect((await client.customers.list({ tag: 'annual', email: 'ann.lee@example.com' })).data).toHaveLength(1);
    expect((await client.customers.list({ cursor: '2026-03-01T10:00:00.123Z' })).data).toEqual([]);
    expect((await client.customers.list({ cursor: '2026-03-01T10:00:00.124Z' })).data.map((c) => c.id)).toEqual([
      ids.customers.ann,
    ]);
  });
});

describe('GET /api/v1/customers/:id', () => {
  it('embeds full subscriptions and the five newest campaigns', async () => {
    const body = await client.customers.retrieve(ids.customers.ann!);
    expect(api.current.lastResponse().status).toBe(200);
    expect(validCustomerDetail(body)).toBeNull();
    expect(body.subscriptions).toEqual([
      {
        id: ids.subscriptions['ann-pro'],
        object: 'subscription',
        customer_id: ids.customers.ann,
        psp_subscription_id: 'sub_ann',
        status: 'past_due',
        plan_name: 'Pro',
        amount_cents: 4900,
        currency: 'usd',
        interval: 'month',
        trial_end: null,
        current_period_end: '2026-04-01T00:00:00.000Z',
        canceled_at: null,
        created_at: '2026-03-01T10:00:01.000Z',
      },
      expect.objectContaining({
        id: ids.subscriptions['ann-old'],
        status: 'canceled',
        canceled_at: '2026-02-01T00:00:00.000Z',
        trial_end: '2025-12-01T00:00:00.000Z',
      }),
    ]);
    expect(body.recent_campaigns.map((c) => c.id)).toEqual([5, 4, 3, 2, 1].map((i) => ids.campaigns[`ann-${i}`]));
  });

  it('accepts an upper-case UUID', async () => {
    expect((await client.customers.retrieve(ids.customers.ann!.toUpperCase())).id).toBe(ids.customers.ann);
  });
});

describe('GET /api/v1/campaigns', () => {
  it('lists campaigns newest first by first_failed_at with exact JSON types', async () => {
    const body = await client.campaigns.list();
    expect(validCampaignList(body)).toBeNull();
    expect(body.data).toHaveLength(7);
    expect(body.data[0]).toEqual({
      id: ids.campaigns['ann-5'],
      object: 'recovery_campaign',
      psp_invoice_id: 'in_ann_5',
      amount_cents: 4900,
      currency: 'usd',
      status: 'in_flight',
      decline_code: 'insufficient_funds',
      decline_category: 'soft',
      recovered_via: null,
      first_failed_at: '2026-03-07T08:00:00.000Z',
      recovered_at: null,
      closed_at: null,
      customer_id: ids.customers.ann,
      subscription_id: ids.subscriptions['ann-pro'],
    });
    expect(body.next_cursor).toBe('2026-02-01T00:00:00.000Z');
  });

  it.each([
    ['in_flight', 6],
    ['recovered', 1],
    ['lost', 0],
    ['abandoned', 0],
  ] as const)('filters status=%s', async (status, count) => {
    const body = await client.campaigns.list({ status });
    expect(body.data).toHaveLength(count);
    for (const campaign of body.data) expect(campaign.status).toBe(status);
  });
});

describe('GET /api/v1/campaigns/:id', () => {
  it('embeds the customer and a subscription summary', async () => {
    const body = await client.campaigns.retrieve(ids.campaigns.recovered!);
    expect(validCampaignDetail(body)).toBeNull();
    expect(body).toMatchObject({
      id: ids.campaigns.recovered,
      status: 'recovered',
      recovered_via: 'customer_update',
      decline_category: 'card_update_required',
      recovered_at: '2026-02-03T12:00:00.500Z',
      closed_at: '2026-02-03T12:00:00.500Z',
      amount_cents: 1900,
      currency: 'eur',
      customer: { id: ids.customers.bob, object: 'customer', email: 'bob@example.com' },
      subscription: {
        id: ids.subscriptions['bob-sub'],
        object: 'subscription',
        psp_subscription_id: expect.any(String),
        status: 'active',
        plan_name: 'Standard',
        amount_cents: 1900,
        currency: 'eur',
        interval: 'month',
      },
    });
    expect(Object.keys(body.subscription).sort()).toEqual([
      'amount_cents',
      'currency',
      'id',
      'interval',
      'object',
      'plan_name',
      'psp_subscription_id',
      'status',
    ]);
  });
});

describe('GET /api/v1/cancel_sessions', () => {
  it('lists sessions newest first with every field', async () => {
    const body = await client.cancelSessions.list();
    expect(validSessionList(body)).toBeNull();
    expect(body.data).toEqual([
      {
        id: ids.cancel_sessions.gone,
        object: 'cancel_session',
        customer_id: ids.customers.bob,
        subscription_id: null,
        outcome: 'canceled',
        reason_code: 'switched_service',
        feedback: null,
        monthly_mrr_cents: 1900,
        currency: 'eur',
        created_at: '2026-03-06T00:00:00.000Z',
        ended_at: '2026-03-06T00:00:00.000Z',
      },
      expect.objectContaining({
        id: ids.cancel_sessions.saved,
        outcome: 'saved_discount',
        feedback: 'A bit pricey',
        subscription_id: ids.subscriptions['ann-pro'],
      }),
    ]);
  });

  it('filters by each outcome', async () => {
    for (const outcome of [
      'saved_discount',
      'saved_pause',
      'saved_downgrade',
      'saved_other',
      'canceled',
      'abandoned',
    ] as const) {
      const body = await client.cancelSessions.list({ outcome });
      expect(api.current.lastResponse().status).toBe(200);
      for (const session of body.data) expect(session.outcome).toBe(outcome);
      expect(body.data.length).toBe(['saved_discount', 'canceled'].includes(outcome) ? 1 : 0);
    }
  });
});

describe('HEAD', () => {
  it('answers like GET without a body', async () => {
    const response = await fetch(`${api.current.url}/api/v1/campaigns`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });
});
