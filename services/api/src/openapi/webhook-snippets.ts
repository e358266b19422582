/**
 * The verification snippets receivers copy, the one text of each: /docs shows them (through the
 * Webhooks tag's description in the OpenAPI document) and docs/webhooks.md repeats them
 * verbatim, which test/webhooks-doc.test.ts checks before it runs the Node one against real
 * signatures.
 */

/** TypeScript, with our SDK (docs/webhooks.md, "Verifying the signature"). */
export const SDK_VERIFY_SNIPPET = `import { verifyWebhook } from '@retention/sdk';

// rawBody: the request's bytes (express.raw({ type: 'application/json' })).
const event = verifyWebhook(rawBody, request.headers['x-service-signature'], process.env.WEBHOOK_SECRET!);
// event.type and event.data are typed; it throws a WebhookVerificationError otherwise.
`;

/** Node.js with no dependency (docs/webhooks.md's `js webhook-verify` block). */
export const NODE_VERIFY_SNIPPET = `import { createHmac, timingSafeEqual } from 'node:crypto';

export function verify(rawBody, header, secret, now = Date.now() / 1000) {
  const parts = String(header ?? '').split(',').map((part) => part.split('='));
  const t = parts.find(([key]) => key === 't')?.[1];
  const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value);
  if (!t || !/^\\d+$/.test(t) || signatures.length === 0) return false;
  if (Math.abs(now - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret).update(\`\${t}.\`).update(rawBody).digest();
  return signatures.some((hex) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
`;
