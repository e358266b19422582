import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import {
  buildEventData,
  computeSignature,
  EVENT_TYPES,
  PING_DATA,
  serializeWebhookPayload,
  signatureHeader,
  type EventData,
  type EventType,
} from '@retention/core';
import {
  verifyWebhook,
  WebhookHeaderError,
  WebhookPayloadError,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
  type WebhookEvent,
} from '@retention/sdk';

// Signatures here come from core's signer: the code the webhook worker signs deliveries with.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4Yk2Pq7Zx1Q';
const T = 1_772_875_000;
const NOW = new Date(T * 1000);
const uuid = '6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a';
const email = 'zoe@example.com';

const DATA: { [T in EventType]: EventData<T> } = {
  'recovery.opened': {
    campaign_id: uuid,
    customer_email: email,
    amount_cents: 4900,
    currency: 'usd',
    decline_code: 'insufficient_funds',
    decline_category: 'soft',
    psp_invoice_id: 'in_Zoë_①',
  },
  'recovery.recovered': {
    campaign_id: uuid,
    customer_email: email,
    amount_cents: 4900,
    currency: 'usd',
    recovered_via: 'retry',
  },
  'recovery.lost': {
    campaign_id: uuid,
    customer_email: email,
    amount_cents: 4900,
    currency: 'usd',
    source: 'dashboard',
  },
  'cancel.saved': {
    session_id: uuid,
    outcome: 'saved_pause',
    reason_code: 'unused',
    customer_email: email,
    monthly_mrr_cents: 1900,
    currency: 'eur',
  },
  'cancel.lost': {
    session_id: uuid,
    outcome: 'canceled',
    reason_code: 'too_expensive',
    customer_email: email,
    monthly_mrr_cents: 1900,
    currency: 'eur',
  },
  'trial.reminder_sent': {
    reminder_id: uuid,
    customer_email: email,
    subscription_id: uuid,
    trial_end: '2026-03-10T00:00:00.000Z',
  },
  'reactivation.sent': { reactivation_id: uuid, customer_email: email, subscription_id: uuid },
  'winback.recorded': {
    winback_id: uuid,
    customer_email: email,
    psp_subscription_id: 'sub_9',
    days_away: 40,
    amount_cents: 4900,
    currency: 'usd',
  },
};

/** A delivery exactly as the worker builds it: serialised once, signed over those bytes. */
function delivery(type: EventType | 'ping', timestamp = T, secret = SECRET) {
  const data = type === 'ping' ? PING_DATA : buildEventData(type, DATA[type] as never);
  const body = Buffer.from(serializeWebhookPayload(type, '2026-03-07T09:15:02.123Z', data), 'utf8');
  return { body, header: signatureHeader(secret, timestamp, body) };
}

function failureOf(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError');
}

describe('verifyWebhook, against deliveries signed by core', () => {
  it.each([...EVENT_TYPES, 'ping' as const])('returns the %s event, equal to the body sent', (type) => {
    const { body, header } = delivery(type);
    const event = verifyWebhook(body, header, SECRET, { now: NOW });
    expect(event).toEqual(JSON.parse(body.toString('utf8')));
    expect(event.type).toBe(type);
  });

  it('narrows data by type', () => {
    const { body, header } = delivery('recovery.recovered');
    const event: WebhookEvent = verifyWebhook(body, header, SECRET, { now: NOW });
    const describe = (received: WebhookEvent): string => {
      switch (received.type) {
        case 'recovery.recovered':
          return `${received.data.campaign_id} via ${received.data.recovered_via}`;
        case 'recovery.lost':
          return 'reason' in received.data ? received.data.reason : 'lost';
        case 'ping':
          return String(received.data.test);
        default:
          return received.data.customer_email;
      }
    };
    expect(describe(event)).toBe(`${uuid} via retry`);
  });

  it('accepts the body as a Buffer, a string, or any Uint8Array view', () => {
    const { body, header } = delivery('recovery.opened');
    const text = body.toString('utf8');
    const padded = new Uint8Array(body.length + 8);
    padded.set(body, 4);
    expect(text).toContain('Zoë');
    for (const raw of [body, text, new Uint8Array(body), padded.subarray(4, 4 + body.length)]) {
      expect(verifyWebhook(raw, header, SECRET, { now: NOW }).type).toBe('recovery.opened');
    }
  });

  it('verifies the bytes as sent, never JSON serialised again', () => {
    const body = '{ "data" : {"test":true},\n  "created_at":"2026-03-07T09:15:02.123Z", "type":"ping" }';
    expect(JSON.stringify(JSON.parse(body))).not.toBe(body);
    const event = verifyWebhook(body, signatureHeader(SECRET, T, body), SECRET, { now: NOW });
    expect(event).toEqual({ type: 'ping', created_at: '2026-03-07T09:15:02.123Z', data: { test: true } });
  });

  it('refuses a parsed object with advice, since its bytes are gone', () => {
    const { body, header } = delivery('ping');
    expect(() => verifyWebhook(JSON.parse(body.toString()) as never, header, SECRET)).toThrow(/express\.raw/);
  });
});

describe('bad signatures', () => {
  const { body, header } = delivery('recovery.opened');

  it.each([
    ['one byte changed', Buffer.from(body.toString().replace('4900', '4901'))],
    ['a space added', Buffer.concat([body, Buffer.from(' ')])],
    ['the JSON re-serialised', Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1))],
    ['an empty body', Buffer.alloc(0)],
  ])('a tampered body (%s) is a WebhookSignatureError', (_label, tampered) => {
    const error = failureOf(() => verifyWebhook(tampered, header, SECRET, { now: NOW }));
    expect(error).toBeInstanceOf(WebhookSignatureError);
    expect(error.type).toBe('signature_mismatch');
  });

  it.each([
    ['another secret', 'whsec_someoneElse0000000000000000000000000000'],
    ['the secret without its prefix', SECRET.slice('whsec_'.length)],
    ['the secret with a trailing newline', `${SECRET}\n`],
  ])('%s is a WebhookSignatureError', (_label, secret) => {
    expect(failureOf(() => verifyWebhook(body, header, secret, { now: NOW }))).toBeInstanceOf(WebhookSignatureError);
  });

  it('a signature made for another timestamp is a WebhookSignatureError', () => {
    const signature = computeSignature(SECRET, T - 1, body);
    const error = failureOf(() => verifyWebhook(body, `t=${T},v1=${signature}`, SECRET, { now: NOW }));
    expect(error).toBeInstanceOf(WebhookSignatureError);
  });

  it('accepts several v1 values when any one matches, in any position (secret rotation)', () => {
    const good = computeSignature(SECRET, T, body);
    const other = computeSignature('whsec_old', T, body);
    for (const value of [`t=${T},v1=${other},v1=${good}`, `t=${T},v1=${good},v1=${other}`, `v1=${good},t=${T}`]) {
      expect(verifyWebhook(body, value, SECRET, { now: NOW }).type).toBe('recovery.opened');
    }
    const none = failureOf(() => verifyWebhook(body, `t=${T},v1=${other},v1=${'0'.repeat(64)}`, SECRET, { now: NOW }));
    expect(none).toBeInstanceOf(WebhookSignatureError);
  });

  it('ignores schemes it does not know', () => {
    const value = `t=${T},v0=whatever,v2=${'f'.repeat(128)},v1=${computeSignature(SECRET, T, body)}`;
    expect(verifyWebhook(body, value, SECRET, { now: NOW }).type).toBe('recovery.opened');
  });
});

describe('timestamps', () => {
  const { body, header } = delivery('ping');

  it('accepts up to 300 seconds either way by default', () => {
    for (const offset of [-300, -1, 0, 1, 300]) {
      expect(verifyWebhook(body, header, SECRET, { now: new Date((T + offset) * 1000) }).type).toBe('ping');
    }
  });

  it('refuses a stale delivery (a replay) as a WebhookTimestampError naming its age', () => {
    const error = failureOf(() => verifyWebhook(body, header, SECRET, { now: new Date((T + 301) * 1000) }));
    expect(error).toBeInstanceOf(WebhookTimestampError);
    expect(error).toMatchObject({ type: 'timestamp_out_of_tolerance', timestamp: T });
    expect(error.message).toContain('301 seconds ago');
  });

  it('refuses a delivery signed too far in the future', () => {
    const error = failureOf(() => verifyWebhook(body, header, SECRET, { now: new Date((T - 301) * 1000) }));
    expect(error).toBeInstanceOf(WebhookTimestampError);
    expect(error.message).toContain('in the future');
  });

  it('takes another tolerance, and uses the clock when no time is given', () => {
    expect(() => verifyWebhook(body, header, SECRET, { now: new Date((T + 11) * 1000), toleranceSeconds: 10 })).toThrow(
      WebhookTimestampError,
    );
    const fresh = delivery('ping', Math.floor(Date.now() / 1000));
    expect(verifyWebhook(fresh.body, fresh.header, SECRET).type).toBe('ping');
    expect(() => verifyWebhook(body, header, SECRET)).toThrow(WebhookTimestampError);
  });

  it('refuses nonsense options', () => {
    expect(() => verifyWebhook(body, header, SECRET, { toleranceSeconds: -1 })).toThrow(TypeError);
    expect(() => verifyWebhook(body, header, SECRET, { now: new Date('nope') })).toThrow(TypeError);
    expect(() => verifyWebhook(body, header, '')).toThrow(TypeError);
  });
});

describe('malformed headers', () => {
  const { body } = delivery('ping');
  const good = computeSignature(SECRET, T, body);

  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
    ['blank', '   '],
    ['without t', `v1=${good}`],
    ['without v1', `t=${T}`],
    ['with t twice', `t=${T},t=${T},v1=${good}`],
    ['with t not a number', `t=soon,v1=${good}`],
    ['with t negative', `t=-${T},v1=${good}`],
    ['with t in milliseconds beyond 12 digits', `t=${T}000000,v1=${good}`],
    ['with v1 not hex', `t=${T},v1=${'z'.repeat(64)}`],
    ['with v1 too short', `t=${T},v1=${good.slice(1)}`],
    ['with v1 too long', `t=${T},v1=${good}0`],
    ['with v1 in upper case', `t=${T},v1=${good.toUpperCase()}`],
    ['with v1 prefixed by its algorithm', `t=${T},v1=sha256=${good}`],
    ['with an element that is not key=value', `t=${T},v1=${good},junk`],
    ['far too long', `t=${T},v1=${good},${'x=1,'.repeat(2000)}`],
  ])('%s is a WebhookHeaderError', (_label, header) => {
    const error = failureOf(() => verifyWebhook(body, header, SECRET, { now: NOW }));
    expect(error).toBeInstanceOf(WebhookHeaderError);
    expect(error.type).toBe('malformed_header');
  });

  it('tolerates spaces around elements, as when a proxy joins repeated headers, never inside one', () => {
    expect(verifyWebhook(body, ` t=${T} , v1=${good} `, SECRET, { now: NOW }).type).toBe('ping');
    for (const header of [`t= ${T},v1=${good}`, `t=${T},v1= ${good}`]) {
      expect(failureOf(() => verifyWebhook(body, header, SECRET, { now: NOW }))).toBeInstanceOf(WebhookHeaderError);
    }
  });

  // The HMAC covers the literal t text: any other spelling of the same number is refused.
  it.each([`0${T}`, `+${T}`, ` ${T}`, `${T}.0`, `${T}e0`, '1.7e9', '00'])(
    'refuses the non-canonical t=%p as malformed, even when signed over that very text',
    (t) => {
      const overText = createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex');
      const error = failureOf(() => verifyWebhook(body, `t=${t},v1=${overText}`, SECRET, { now: NOW }));
      expect(error).toBeInstanceOf(WebhookHeaderError);
    },
  );

  it("takes Node's header value as it comes, a string or an array of repeats", () => {
    const headers: IncomingHttpHeaders = { 'x-service-signature': [`t=${T}`, `v1=${good}`] };
    expect(verifyWebhook(body, headers['x-service-signature'], SECRET, { now: NOW }).type).toBe('ping');
    const twice = failureOf(() => verifyWebhook(body, [`t=${T},v1=${good}`, `t=${T}`], SECRET, { now: NOW }));
    expect(twice).toBeInstanceOf(WebhookHeaderError);
  });
});

describe('signed bodies that are not events', () => {
  it.each([
    ['not JSON', 'hello'],
    ['not UTF-8', Buffer.from([0x7b, 0xff, 0x7d])],
    ['an array', '[]'],
    ['without type', '{"created_at":"2026-03-07T09:15:02.123Z","data":{}}'],
    ['without data', '{"type":"ping","created_at":"2026-03-07T09:15:02.123Z"}'],
    ['with data an array', '{"type":"ping","created_at":"2026-03-07T09:15:02.123Z","data":[]}'],
  ])('%s is a WebhookPayloadError', (_label, body) => {
    const error = failureOf(() => verifyWebhook(body, signatureHeader(SECRET, T, body), SECRET, { now: NOW }));
    expect(error).toBeInstanceOf(WebhookPayloadError);
    expect(error.type).toBe('invalid_payload');
  });
});
