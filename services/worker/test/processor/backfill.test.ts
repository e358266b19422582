import { describe, expect, it } from '@jest/globals';
import { processorStatus } from '@retention/domain';
import { eventually, runCli } from '@retention/testkit';
import { rateLimitWaitMs } from '@retention/processors';
import { useProcessorWorld } from './harness.js';
import { stripeCustomer, stripeSubscription } from './stripe-kit.js';

/**
 * The import (backfill) against Stripe's limits and refusals (docs/processor.md, "Backfill"):
 * it waits out 429s for as long as Stripe asks and says until when; a run that failed part-way
 * goes on from its cursor on `processor sync` (the page's Import again), and one that finished
 * starts afresh. A real worker, PostgreSQL and the CLI; Stripe is the local stand-in.
 */
const processor = useProcessorWorld();

const rateLimited = (retryAfter: string) => ({
  status: 429,
  body: { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests' } },
  headers: { 'retry-after': retryAfter },
});

async function cli(args: string[]) {
  return runCli(args, {
    DATABASE_URL: processor.world.current.databaseUrl,
    STRIPE_API_BASE: processor.stripe.url,
  });
}

const customers = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => stripeCustomer({ id: `cus_${prefix}${String(index).padStart(4, '0')}` }));

describe('the import and Stripe’s limits', () => {
  it('waits without Retry-After by doubling back-off with jitter, each wait capped', () => {
    expect(rateLimitWaitMs(0, null, () => 0)).toBe(500);
    expect(rateLimitWaitMs(0, null, () => 1)).toBe(1_000);
    expect(rateLimitWaitMs(3, null, () => 1)).toBe(8_000);
    expect(rateLimitWaitMs(40, null, () => 1)).toBe(30_000);
    expect(rateLimitWaitMs(40, null, () => 0)).toBe(15_000);
    expect(rateLimitWaitMs(7, 2_000)).toBe(2_000);
    expect(rateLimitWaitMs(0, 3_600_000)).toBe(60_000);
  });

  it('keeps waiting out 429s for as long as Stripe asks, says until when, and finishes the run', async () => {
    const stripe = processor.stripe;
    stripe.customers = customers('rl', 150);
    stripe.subscriptions = [];
    stripe.invoices = [];
    let limited = 0;
    let lastLimitedAt = 0;
    // The second page is refused 20 times (more than the 12 waits the import used to allow),
    // the last asking for 4 s, so the wait can be seen.
    stripe.override = (_request, url) => {
      if (url.pathname !== '/v1/customers' || url.searchParams.get('starting_after') === null) return null;
      limited += 1;
      if (limited < 20) return rateLimited('0');
      if (limited === 20) {
        lastLimitedAt = Date.now();
        return rateLimited('4');
      }
      return null;
    };
    try {
      const shop = await processor.setUp();
      // Read as `processor status` reads it (the same function), fast enough to see a 4 s wait:
      // until 4 s after the last 429 (the 19 before it said until about now).
      const waiting = await eventually(async () => {
        const status = await processorStatus(processor.world.current.db, 'https://x.test', shop.workspaceId);
        const until = status.backfill.waiting_until;
        return until && limited === 20 && Date.parse(until) >= lastLimitedAt + 3_900 ? status : null;
      }, 20_000);
      expect(waiting.backfill).toMatchObject({ status: 'running', phase: 'customers', counts: { customers: 100 } });
      // Give or take the worker's own time on a loaded machine.
      expect(Date.parse(waiting.backfill.waiting_until!)).toBeLessThanOrEqual(lastLimitedAt + 8_000);
      const shown = await cli(['processor', 'status', '--workspace', shop.workspaceId]);
      expect(shown.json.backfill).toHaveProperty('waiting_until');
      const done = await eventually(async () => {
        const status = await cli(['processor', 'status', '--workspace', shop.workspaceId]);
        return status.json?.backfill?.status === 'succeeded' ? status.json : null;
      }, 20_000);
      expect(done.backfill).toMatchObject({ counts: { customers: 150 }, error: null, waiting_until: null });
      expect(limited).toBe(21);
      expect(await processor.world.current.db('customers').where({ workspace_id: shop.workspaceId })).toHaveLength(150);
    } finally {
      stripe.override = null;
    }
  }, 60_000);

  it('commits a page at a time: the counts move by whole pages while a paced import runs', async () => {
    const stripe = processor.stripe;
    stripe.customers = customers('pg', 250);
    stripe.subscriptions = [];
    stripe.invoices = [];
    // Each page answered after a pause, so the import is read many times while it runs.
    stripe.pageDelayMs = 500;
    try {
      const shop = await processor.setUp();
      const db = processor.world.current.db;
      const seen = new Set<number>();
      for (;;) {
        const row = await db('processor_connections').where({ workspace_id: shop.workspaceId }).first();
        seen.add(row.backfill_counts.customers);
        if (row.backfill_status === 'succeeded' || row.backfill_status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // One commit an item showed every count in between (1, 2, … 101, …).
      expect(seen.has(250)).toBe(true);
      expect([...seen].filter((count) => ![0, 100, 200, 250].includes(count))).toEqual([]);
      expect(await db('customers').where({ workspace_id: shop.workspaceId }).count({ n: '*' })).toEqual([{ n: 250 }]);
    } finally {
      stripe.pageDelayMs = 0;
    }
  }, 60_000);

  it('goes on from its cursor when a failed import is started again; after one that finished, starts afresh', async () => {
    const stripe = processor.stripe;
    stripe.customers = customers('rs', 150);
    stripe.subscriptions = stripe.customers.slice(0, 10).map((customer) => stripeSubscription(customer.id));
    stripe.invoices = [];
    // A permission taken from the key half-way through the customers: the run fails there.
    let refuse = true;
    stripe.override = (_request, url) =>
      refuse && url.pathname === '/v1/customers' && url.searchParams.get('starting_after') !== null
        ? {
            status: 403,
            body: {
              error: {
                type: 'invalid_request_error',
                message:
                  "The provided key 'rk_test_*********abcd' does not have the required permissions for this endpoint. Having the 'rak_customer_read' permission would allow this request to continue.",
              },
            },
          }
        : null;
    try {
      const shop = await processor.setUp();
      const failed = await eventually(async () => {
        const status = await cli(['processor', 'status', '--workspace', shop.workspaceId]);
        return status.json?.backfill?.status === 'failed' ? status.json : null;
      }, 20_000);
      expect(failed.backfill).toMatchObject({ phase: 'customers', counts: { customers: 100 }, resumable: true });
      expect(failed.backfill.error).toMatch(/^Stripe refused the API key read access to Customers \(403\)/);
      expect(failed.backfill.error).toContain('then Import again');

      refuse = false;
      const asked = stripe.requests.length;
      const again = await cli(['processor', 'sync', '--workspace', shop.workspaceId]);
      expect(again.json.backfill).toMatchObject({ status: 'queued', counts: { customers: 100 }, error: null });
      const resumed = await eventually(async () => {
        const status = await cli(['processor', 'status', '--workspace', shop.workspaceId]);
        return status.json?.backfill?.status === 'succeeded' ? status.json : null;
      }, 20_000);
      expect(resumed.backfill).toMatchObject({ counts: { customers: 150, subscriptions: 10 }, resumable: false });
      const firstCustomers = stripe.requests.slice(asked).find((request) => request.path === '/v1/customers');
      expect(firstCustomers?.query.get('starting_after')).toBe('cus_rs0099');

      // A finished run: Import again lists everything again, from the first customer.
      const fresh = stripe.requests.length;
      expect((await cli(['processor', 'sync', '--workspace', shop.workspaceId])).json.backfill).toMatchObject({
        status: 'queued',
        counts: { customers: 0, subscriptions: 0, invoices: 0 },
      });
      await eventually(async () => {
        const status = await cli(['processor', 'status', '--workspace', shop.workspaceId]);
        return status.json?.backfill?.status === 'succeeded' ? status.json : null;
      }, 20_000);
      const restarted = stripe.requests.slice(fresh).find((request) => request.path === '/v1/customers');
      expect(restarted?.query.get('starting_after')).toBeNull();
    } finally {
      stripe.override = null;
    }
  }, 90_000);
});
