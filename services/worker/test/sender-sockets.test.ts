import { afterEach, describe, expect, it } from '@jest/globals';
import { createWebhookSender, type WebhookSender, type WebhookSenderOptions } from '@retention/domain';
import { eventually } from '@retention/testkit';
import { BASE_URL, useWorld } from './support/world.js';

const world = useWorld();
const senders: WebhookSender[] = [];

function sender(options: Partial<WebhookSenderOptions>): WebhookSender {
  const created = createWebhookSender({
    timeoutMs: 3000,
    baseUrl: BASE_URL,
    allowPrivateNetworks: true,
    ca: world.current.certificate.cert,
    ...options,
  });
  senders.push(created);
  return created;
}

afterEach(() => senders.splice(0).forEach((created) => created.close()));

const body = Buffer.from('{"type":"ping","created_at":"2030-01-01T00:00:00.000Z","data":{"test":true}}');

describe('the delivery agent’s sockets', () => {
  it('closes a kept-alive socket once it has been idle for the idle timeout', async () => {
    const { receiver } = world.current;
    receiver.route('/idle', { secret: 'whsec_idle', behaviour: { kind: 'status', status: 200 } });
    const send = sender({ idleSocketMs: 300 });
    const result = await send.send({ url: receiver.url('/idle'), secret: 'whsec_idle', body });
    expect(result.succeeded).toBe(true);
    expect(receiver.openConnections()).toBeGreaterThanOrEqual(1);
    const started = Date.now();
    await eventually(() => receiver.openConnections() === 0, 3_000);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('keeps an answer that takes longer than the idle timeout', async () => {
    const { receiver } = world.current;
    receiver.route('/slow-answer', { secret: 'whsec_slow', behaviour: { kind: 'status', status: 200, delayMs: 700 } });
    const result = await sender({ idleSocketMs: 200 }).send({
      url: receiver.url('/slow-answer'),
      secret: 'whsec_slow',
      body,
    });
    expect(result).toMatchObject({ succeeded: true, httpStatus: 200 });
  });

  it('opens at most maxTotalSockets connections, and an idle one gives way to another receiver', async () => {
    const { receiver } = world.current;
    receiver.route('/capped', { secret: 'whsec_cap', behaviour: { kind: 'status', status: 200, delayMs: 200 } });
    const send = sender({ maxTotalSockets: 2, idleSocketMs: 5_000 });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => send.send({ url: receiver.url('/capped'), secret: 'whsec_cap', body })),
    );
    expect(results.every((result) => result.succeeded)).toBe(true);
    expect(receiver.peakInFlight('/capped')).toBe(2);
    // Two idle sockets to localhost fill the cap; a request to another origin (the same
    // receiver by address) does not wait 5 s for them to time out.
    const other = await send.send({ url: receiver.url('/capped', '127.0.0.1'), secret: 'whsec_cap', body });
    expect(other.succeeded).toBe(true);
    expect(other.durationMs).toBeLessThan(1_500);
  });
});
