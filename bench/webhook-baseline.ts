/**
 * The baseline of `npm run bench:webhooks`: a plain loop of signed got POSTs to the same
 * receiver at the same concurrency as the worker, with no queue and no database. The ratio
 * worker / baseline is what dispatch, Postgres, Redis and the bookkeeping cost.
 * Prints one JSON line: {"deliveries": N, "seconds": S, "perSecond": [...]}, `perSecond` being
 * the deliveries completed in each whole second from the start (as the bench counts the
 * worker's from "worker started"): how much of a slow first second is any process warming up.
 */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import got from 'got';
import { serializeWebhookPayload, signatureHeader } from '@retention/core';

const urls = process.env.BASELINE_URLS!.split(',');
const total = Number(process.env.BASELINE_COUNT);
const concurrency = Number(process.env.BASELINE_CONCURRENCY);
const secret = 'whsec_baseline';
const client = got.extend({
  agent: { https: new https.Agent({ keepAlive: true }) },
  followRedirect: false,
  decompress: false,
  retry: { limit: 0 },
  timeout: { request: 8000 },
});

let next = 0;
let completed = 0;
async function loop(): Promise<void> {
  while (next < total) {
    const index = next++;
    const body = Buffer.from(
      serializeWebhookPayload('reactivation.sent', new Date().toISOString(), {
        reactivation_id: randomUUID(),
        customer_email: 'ann@example.com',
        subscription_id: randomUUID(),
      }),
    );
    await client.post(urls[index % urls.length]!, {
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Service-Webhooks/1 (+bench)',
        'x-service-signature': signatureHeader(secret, Math.floor(Date.now() / 1000), body),
      },
    });
    completed += 1;
  }
}

const started = process.hrtime.bigint();
const perSecond: number[] = [];
let counted = 0;
const sampler = setInterval(() => {
  perSecond.push(completed - counted);
  counted = completed;
}, 1_000);
await Promise.all(Array.from({ length: concurrency }, loop));
clearInterval(sampler);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ deliveries: total, seconds, perSecond })}\n`);
process.exit(0);
