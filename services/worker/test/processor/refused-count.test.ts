import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectProcessor, createWorkspace, OPERATOR } from '@retention/domain';
import { eventually, testSecretsKey, useTestDatabase } from '@retention/testkit';
import { startApiInstance, type ApiInstance } from '../../../api/test/api-instance.js';
import { newWebhookSecret, postToConnection, stripeCustomer, stripeEvent } from './stripe-kit.js';

/**
 * A delivery refused for its signature is answered 400 whatever becomes of its count
 * (docs/processor.md, "Refused deliveries"): the count is best-effort, written after the
 * answer, and refusals arriving together share one statement. Real PostgreSQL makes the
 * count's statement wait (the counter row locked by another transaction) or fail (the same,
 * under a short lock_timeout).
 */

const database = useTestDatabase();
/** The API as it runs. */
let api: ApiInstance;
/** The same, its sessions giving up on a lock after 300 ms: the count's statement fails. */
let impatient: ApiInstance;

const withLockTimeout = (url: string, ms: number) => {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c lock_timeout=${ms}`);
  return parsed.toString();
};

beforeAll(async () => {
  api = await startApiInstance({ databaseUrl: database.current.url });
  impatient = await startApiInstance({ databaseUrl: withLockTimeout(database.current.url, 300) });
});
afterAll(async () => {
  await api.close();
  await impatient.close();
});

async function connected(instance: ApiInstance) {
  const db = database.current.db;
  const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
  const secret = newWebhookSecret();
  const connection = await connectProcessor(
    db,
    Buffer.from(testSecretsKey(), 'base64'),
    { workspace_id: workspace.id, provider: 'stripe', webhook_secret: secret },
    'none',
    OPERATOR,
  );
  return { connectionId: connection.id, secret, url: `${instance.url}/processor/stripe/${connection.id}` };
}

/** A delivery signed with another secret than the connection's: refused for its signature. */
const badlySigned = (url: string) =>
  postToConnection(url, stripeEvent('customer.created', stripeCustomer()), newWebhookSecret());

const refusedCount = async (connectionId: string) =>
  (
    (await database.current.db('processor_refused_deliveries').where({ connection_id: connectionId }).first()) as
      { refused: number } | undefined
  )?.refused ?? 0;

/**
 * Holds the connection's counter row locked in a transaction of its own for `ms` (so an answer
 * that waited on its count would take that long); `released` settles once it is let go.
 */
async function lockCounterRow(connectionId: string, ms: number) {
  const trx = await database.current.db.transaction();
  await trx.raw('SELECT 1 FROM processor_refused_deliveries WHERE connection_id = ? FOR UPDATE', [connectionId]);
  const released = new Promise((resolve) => setTimeout(resolve, ms)).then(() => trx.rollback());
  return { released };
}

const REFUSAL = { error: { type: 'invalid_param', message: expect.any(String) } };

describe('a refused delivery whose count cannot be written at once', () => {
  it('is answered 400 at once while the count waits on a locked row, and is counted once the lock goes', async () => {
    const { connectionId, url } = await connected(api);
    expect((await badlySigned(url)).status).toBe(400);
    await eventually(async () => (await refusedCount(connectionId)) === 1);

    const lock = await lockCounterRow(connectionId, 1_500);
    const replies = await Promise.all(Array.from({ length: 5 }, () => badlySigned(url)));
    await lock.released;
    for (const reply of replies) {
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(REFUSAL);
      expect(reply.ms).toBeLessThan(1_000);
    }
    // None lost: the five, held back behind the lock, are written together once it goes.
    await eventually(async () => (await refusedCount(connectionId)) === 6);
  });

  it('is answered 400 at once when the count fails, and the failure is logged without the URL nor the secret', async () => {
    const { connectionId, url, secret } = await connected(impatient);
    expect((await badlySigned(url)).status).toBe(400);
    await eventually(async () => (await refusedCount(connectionId)) === 1);

    const lock = await lockCounterRow(connectionId, 1_000);
    const reply = await badlySigned(url);
    await lock.released;
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(REFUSAL);
    expect(reply.ms).toBeLessThan(250);
    const warning = await eventually(() =>
      impatient.logs().find((line) => line.msg === 'refused deliveries not counted'),
    );
    expect(warning).toMatchObject({ level: 'warn', refused: 1, err: { code: '55P03' } });
    // The request's own log line has its path, as every request's has; the warning names nothing.
    expect(JSON.stringify(warning)).not.toContain(connectionId);
    expect(JSON.stringify(impatient.logs())).not.toContain(secret);
    // Best effort: that one is lost; the next is counted as ever.
    expect((await badlySigned(url)).status).toBe(400);
    await eventually(async () => (await refusedCount(connectionId)) === 2);
  });

  it('is counted before a normal shutdown ends, even when the count waited on a lock', async () => {
    const closing = await startApiInstance({ databaseUrl: database.current.url });
    const { connectionId, url } = await connected(closing);
    expect((await badlySigned(url)).status).toBe(400);
    await eventually(async () => (await refusedCount(connectionId)) === 1);

    const lock = await lockCounterRow(connectionId, 500);
    const reply = await badlySigned(url);
    expect(reply.status).toBe(400);
    expect(reply.ms).toBeLessThan(250);
    // Closed while the count still waits on the lock: the close waits for it.
    await closing.close();
    await lock.released;
    expect(await refusedCount(connectionId)).toBe(2);
  });
});
