import { gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { listDeliveryLog, type DeliveryLogEntry } from '@retention/domain';
import { eventually, freePort } from '@retention/testkit';
import { numberedEvent, useWorld, type TestEndpoint } from './support/world.js';

const world = useWorld();

/** Waits until the endpoint's log holds `count` entries; returns them oldest first. */
async function logOf(endpoint: { id: string }, count: number, timeoutMs = 10_000): Promise<DeliveryLogEntry[]> {
  const entries = await eventually(async () => {
    const log = await listDeliveryLog(world.current.db, endpoint.id);
    return log.length >= count ? log : null;
  }, timeoutMs);
  return [...entries].reverse();
}

async function endpointRow(endpoint: TestEndpoint) {
  return world.current.db('webhook_endpoints').where({ id: endpoint.id }).first();
}

describe('failed attempts', () => {
  it('records a 500 with its body, retries on schedule with jitter, and a later 2xx resets the count', async () => {
    const endpoint = await world.current.createEndpoint('/flaky', {
      behaviour: (_request, index) =>
        index === 0 ? { kind: 'status', status: 500, body: 'database on fire' } : { kind: 'status', status: 200 },
    });
    await world.current.startWorker();
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [first, second] = await logOf(endpoint, 2);
    expect(first).toMatchObject({
      attempt: 1,
      outcome: 'failed',
      http_status: 500,
      error: 'HTTP 500',
      response_body: 'database on fire',
    });
    // 100ms from WEBHOOK_RETRY_DELAYS counted from when the attempt ended (give or take the
    // millisecond duration_ms is rounded to), never shorter; the jitter's exact bounds are
    // retry-schedule.test.ts's. Above: 10% jitter plus the time it took to record the attempt.
    const wait = Date.parse(first!.next_attempt_at!) - Date.parse(first!.attempted_at) - first!.duration_ms;
    expect(wait).toBeGreaterThanOrEqual(99);
    expect(wait).toBeLessThanOrEqual(160);
    expect(Date.parse(second!.attempted_at)).toBeGreaterThanOrEqual(Date.parse(first!.next_attempt_at!));
    expect(second).toMatchObject({ attempt: 2, outcome: 'succeeded', http_status: 200, error: null });
    const row = await endpointRow(endpoint);
    expect(row).toMatchObject({ failure_count: 0, enabled: true });
    expect(row.last_failure_at).toBeInstanceOf(Date);
    expect(row.last_success_at.getTime()).toBeGreaterThanOrEqual(row.last_failure_at.getTime());
    expect(world.current.receiver.problems()).toEqual([]);
  });

  it('logs each attempt with the URL it was sent to, when the URL is edited while an attempt is in flight', async () => {
    const { db, receiver } = world.current;
    const endpoint = await world.current.createEndpoint('/moving-from', {
      behaviour: { kind: 'status', status: 500, body: 'moving', delayMs: 500 },
    });
    const newUrl = receiver.url('/moving-to');
    receiver.route('/moving-to', { secret: endpoint.secret, behaviour: { kind: 'status', status: 200 } });
    await world.current.startWorker();
    await world.current.record([numberedEvent(world.current.workspace)]);
    await receiver.waitForRequests(endpoint.path, 1);
    // Edited while the first attempt waits for its answer: that attempt still went to the old URL.
    await db('webhook_endpoints').where({ id: endpoint.id }).update({ url: newUrl });
    const [first, second] = await logOf(endpoint, 2);
    expect(first).toMatchObject({ attempt: 1, outcome: 'failed', http_status: 500, url: endpoint.url });
    expect(second).toMatchObject({ attempt: 2, outcome: 'succeeded', http_status: 200, url: newUrl });
    expect(receiver.requestsTo('/moving-to')).toHaveLength(1);
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const target = '/redirect-target';
    world.current.receiver.route(target, { secret: 'whsec_unused', behaviour: { kind: 'status', status: 200 } });
    const endpoint = await world.current.createEndpoint(
      '/redirect',
      {
        behaviour: {
          kind: 'status',
          status: 302,
          headers: { location: world.current.receiver.url(target) },
          body: 'moved',
        },
      },
      { events: ['winback.recorded'] },
    );
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([
      {
        type: 'winback.recorded',
        data: {
          winback_id: '0f2a6c1e-7d43-4b8e-9a51-3c2d1e0f4a5b',
          customer_email: world.current.workspace.customerEmail,
          psp_subscription_id: 'sub_9',
          days_away: 3,
          amount_cents: 100,
          currency: 'usd',
        },
      },
    ]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({
      outcome: 'failed',
      http_status: 302,
      error: 'HTTP 302: redirects are not followed',
      response_body: 'moved',
    });
    expect(entry!.next_attempt_at).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(world.current.receiver.requestsTo(target)).toEqual([]);
  });

  it('ends an attempt that hangs at the timeout, with no status', async () => {
    const endpoint = await world.current.createEndpoint('/hang', { behaviour: { kind: 'hang' } });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({
      outcome: 'failed',
      http_status: null,
      error: 'timed out after 1000 ms',
      response_body: null,
    });
    expect(entry!.duration_ms).toBeGreaterThanOrEqual(990);
    expect(entry!.duration_ms).toBeLessThan(2_000);
  });

  it('records a 2xx whose body never finishes as a success, with what arrived of the body', async () => {
    const endpoint = await world.current.createEndpoint('/slow-body', {
      behaviour: { kind: 'unfinished', status: 200, body: 'accepted; streaming', then: 'hang' },
    });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({
      outcome: 'succeeded',
      http_status: 200,
      error: null,
      response_body: 'accepted; streaming',
      next_attempt_at: null,
    });
    // The body's own deadline ended the read, not the whole attempt's timeout.
    expect(entry!.duration_ms).toBeLessThan(1_000);
    expect(world.current.receiver.requestsTo(endpoint.path)).toHaveLength(1);
    expect((await endpointRow(endpoint)).failure_count).toBe(0);
  });

  it('records a 2xx reset mid-body as a success, and a 500 reset mid-body as HTTP 500', async () => {
    const ok = await world.current.createEndpoint('/reset-ok', {
      behaviour: { kind: 'unfinished', status: 202, body: 'queued', then: 'reset' },
    });
    const failing = await world.current.createEndpoint('/reset-500', {
      behaviour: { kind: 'unfinished', status: 500, body: 'broken', then: 'reset' },
    });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [okEntry] = await logOf(ok, 1);
    expect(okEntry).toMatchObject({ outcome: 'succeeded', http_status: 202, error: null, response_body: 'queued' });
    const [failedEntry] = await logOf(failing, 1);
    expect(failedEntry).toMatchObject({
      outcome: 'failed',
      http_status: 500,
      error: 'HTTP 500',
      response_body: 'broken',
    });
    expect((await endpointRow(ok)).failure_count).toBe(0);
  });

  it('records a refused connection', async () => {
    const port = await freePort();
    const endpoint = await world.current.createEndpoint('/nobody-home', { behaviour: { kind: 'hang' } });
    await world.current
      .db('webhook_endpoints')
      .where({ id: endpoint.id })
      .update({ url: `https://localhost:${port}/` });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({
      outcome: 'failed',
      http_status: null,
      error: 'connection refused',
      response_body: null,
    });
    expect((await endpointRow(endpoint)).failure_count).toBe(1);
  });

  it('reads only the first 4096 bytes of a 50 MB answer, without buffering the rest', async () => {
    const endpoint = await world.current.createEndpoint('/huge', {
      behaviour: { kind: 'huge', bytes: 50 * 1024 * 1024 },
    });
    await world.current.startWorker();
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({ outcome: 'succeeded', http_status: 200, error: null });
    expect(Buffer.byteLength(entry!.response_body!)).toBe(4096);
    expect(entry!.response_body).toBe('x'.repeat(4096));
    // The attempt ended as soon as 4 KB had arrived, long before 50 MB could be sent ...
    expect(entry!.duration_ms).toBeLessThan(500);
    // ... and the connection was dropped: only socket buffers' worth ever left the receiver.
    const [request] = world.current.receiver.requestsTo(endpoint.path);
    await eventually(() => request!.bytesSent !== undefined);
    expect(request!.bytesSent).toBeLessThan(16 * 1024 * 1024);
  });

  it('logs a compressed answer as the bytes that came, without decompressing it', async () => {
    const endpoint = await world.current.createEndpoint('/gzip', {
      behaviour: {
        kind: 'status',
        status: 200,
        headers: { 'content-encoding': 'gzip' },
        body: gzipSync('plain text inside').toString('latin1'),
      },
    });
    await world.current.startWorker();
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({ outcome: 'succeeded', http_status: 200 });
    expect(entry!.response_body).not.toContain('plain text inside');
  });

  it('signs every attempt afresh with the time of that attempt, over the same body', async () => {
    const endpoint = await world.current.createEndpoint('/resign', {
      behaviour: (_request, index) => ({ kind: 'status', status: index === 0 ? 503 : 200 }),
    });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '1100ms' } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [first, second] = await world.current.receiver.waitForRequests(endpoint.path, 2);
    expect(world.current.receiver.problems()).toEqual([]);
    expect(second!.rawBody.equals(first!.rawBody)).toBe(true);
    expect(second!.signatureTimestamp!).toBeGreaterThan(first!.signatureTimestamp!);
    expect(second!.headers['x-service-signature']).not.toBe(first!.headers['x-service-signature']);
  });

  it('gives up after the last attempt of the schedule', async () => {
    const endpoint = await world.current.createEndpoint('/always-down', {
      behaviour: { kind: 'status', status: 503 },
    });
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '50ms,50ms' } });
    const [event] = await world.current.record([numberedEvent(world.current.workspace)]);
    const log = await logOf(endpoint, 3);
    expect(log.map((entry) => [entry.attempt, entry.outcome, entry.next_attempt_at === null])).toEqual([
      [1, 'failed', false],
      [2, 'failed', false],
      [3, 'failed', true],
    ]);
    // This endpoint's: another test's endpoint left off gets a skipped delivery of the same event.
    const delivery = await world.current
      .db('webhook_deliveries')
      .where({ event_id: event!.id, endpoint_id: endpoint.id })
      .first();
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 3, next_attempt_at: null });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(world.current.receiver.requestsTo(endpoint.path)).toHaveLength(3);
  });

  it('records a certificate the worker does not trust as a TLS failure', async () => {
    const endpoint = await world.current.createEndpoint('/untrusted', { behaviour: { kind: 'status', status: 200 } });
    // No receiverCa: only the system's CAs, which never signed the test certificate.
    await world.current.startWorker({ env: { WEBHOOK_RETRY_DELAYS: '10m' }, options: { receiverCa: undefined } });
    await world.current.record([numberedEvent(world.current.workspace)]);
    const [entry] = await logOf(endpoint, 1);
    expect(entry).toMatchObject({ outcome: 'failed', http_status: null });
    expect(entry!.error).toMatch(/^TLS error \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/);
    // In words the endpoint's owner can act on, not Node's advice to whoever runs it.
    expect(entry!.error).toMatch(
      /self-signed( certificate)?; receivers need a certificate from a public certificate authority$/,
    );
    expect(entry!.error).not.toMatch(/Node\.js|--use-system-ca/);
    expect(world.current.receiver.requestsTo(endpoint.path)).toEqual([]);
  });
});
