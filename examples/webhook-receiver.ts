/**
 * A webhook receiver that verifies every delivery and logs each event as one JSON line on
 * stdout. Refused deliveries (bad signature, stale timestamp) get 401 and a line on stderr
 * saying why.
 *
 *     WEBHOOK_SECRET=whsec_... PORT=4000 npx tsx examples/webhook-receiver.ts
 *
 * The service delivers only to https:// URLs. For a local trial against `npm start`, serve
 * HTTPS with a self-signed certificate and let the worker trust it:
 *
 *     openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \
 *       -addext subjectAltName=DNS:localhost -keyout key.pem -out cert.pem
 *     TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem WEBHOOK_SECRET=whsec_... \
 *       npx tsx examples/webhook-receiver.ts
 *     # the service: NODE_EXTRA_CA_CERTS=cert.pem WEBHOOK_ALLOW_PRIVATE_NETWORKS=true npm start
 *     # register https://localhost:4000/webhooks with `webhook create` (docs/operator-cli.md)
 *
 * `webhook test` and `webhook resend` send from the CLI process itself, not from the worker,
 * so that process needs the same two settings to reach a self-signed local receiver:
 *
 *     NODE_EXTRA_CA_CERTS=cert.pem WEBHOOK_ALLOW_PRIVATE_NETWORKS=true \
 *       npm run --silent cli -- webhook test --id <endpoint id> --actor <user id>
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { webhookEventOf, webhookMiddleware, type WebhookEvent } from '@retention/sdk';

function fail(message: string): never {
  process.stderr.write(`webhook-receiver: ${message}\n`);
  process.exit(1);
}

const secret = process.env.WEBHOOK_SECRET || fail("set WEBHOOK_SECRET to the endpoint's signing secret (whsec_...)");
const port = Number(process.env.PORT || 4000);
if (!Number.isInteger(port) || port < 0 || port > 65_535) fail('PORT must be a port number');
const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = process.env;
if (Boolean(certFile) !== Boolean(keyFile)) fail('set both TLS_CERT_FILE and TLS_KEY_FILE, or neither');

// A refusal's reason goes to stderr: a 401 alone does not say whether the secret is wrong
// (signature_mismatch) or a clock is off (timestamp_out_of_tolerance).
const verify = webhookMiddleware({
  secret,
  onRefused: ({ status, type, message }) =>
    process.stderr.write(`refused a delivery: HTTP ${status} ${type}: ${message}\n`),
});

/** What a real receiver would act on; `switch` narrows `event.data` to the type's fields. */
function summarise(event: WebhookEvent): string {
  switch (event.type) {
    case 'recovery.opened':
      return `campaign ${event.data.campaign_id} opened: ${event.data.amount_cents} ${event.data.currency} declined (${event.data.decline_code})`;
    case 'recovery.recovered':
      return `campaign ${event.data.campaign_id} recovered via ${event.data.recovered_via}`;
    case 'recovery.lost':
      return `campaign ${event.data.campaign_id} lost`;
    case 'cancel.saved':
    case 'cancel.lost':
      return `cancel session ${event.data.session_id}: ${event.data.outcome}`;
    case 'ping':
      return 'test event (Send test in the dashboard, or webhook test in the operator CLI)';
    default:
      // trial.reminder_sent, reactivation.sent, winback.recorded, and types added later.
      return `${event.type} for ${event.data.customer_email}`;
  }
}

function respond(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') return respond(res, 405, { error: 'deliveries are POST requests' });
  verify(req, res, (error) => {
    if (error) {
      process.stderr.write(`receiver error: ${error instanceof Error ? error.message : 'unknown'}\n`);
      return respond(res, 500, { error: 'receiver error' });
    }
    const event = webhookEventOf(req);
    process.stdout.write(
      `${JSON.stringify({ received_at: new Date().toISOString(), summary: summarise(event), event })}\n`,
    );
    respond(res, 200, { received: true });
  });
}

const server =
  certFile && keyFile
    ? createHttpsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, handle)
    : createHttpServer(handle);
server.listen(port, () => {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  process.stderr.write(`webhook receiver listening on ${certFile ? 'https' : 'http'}://localhost:${actualPort}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  });
}
