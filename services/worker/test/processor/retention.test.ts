import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { connectProcessor, createWorkspace, OPERATOR, processorStatus } from '@retention/domain';
import {
  eventually,
  LEFT_OPEN,
  redisKeyPrefix,
  runId,
  startService,
  TEST_REDIS_URL,
  testSecretsKeyBytes,
  useTestDatabase,
  type ServiceProcess,
} from '@retention/testkit';

/**
 * The inbox's retention as deployed: the worker's own entry point (main.ts, bundled as the image
 * runs it) schedules the job that deletes finished Stripe events past
 * PROCESSOR_EVENT_RETENTION_DAYS, and refuses to start on a value that would let a resent event
 * be applied twice. The job's rules themselves: packages/domain/test/processor-retention.test.ts.
 */

const database = useTestDatabase();
let worker: ServiceProcess | undefined;

afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});

function startWorker(env: Record<string, string>): ServiceProcess {
  worker = startService('services/worker/src/main.ts', {
    DATABASE_URL: database.current.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-${randomBytes(4).toString('hex')}`,
    WORKER_PORT: '0',
    ...env,
  });
  return worker;
}

describe('the worker keeps the Stripe event inbox to PROCESSOR_EVENT_RETENTION_DAYS', () => {
  it('deletes applied and ignored events received longer ago once started (its job runs at once, then hourly), and processor status says the same', async () => {
    const db = database.current.db;
    const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
    const connection = await connectProcessor(
      db,
      testSecretsKeyBytes(),
      {
        workspace_id: workspace.id,
        provider: 'stripe',
        webhook_secret: `whsec_${randomBytes(20).toString('hex')}`,
      },
      'none',
      OPERATOR,
    );
    const stored = async (state: string, ageDays: number) => {
      const at = db.raw(`now() - ? * interval '1 day'`, [ageDays]);
      const id = `evt_${randomBytes(12).toString('hex')}`;
      await db('processor_events').insert({
        connection_id: connection.id,
        workspace_id: workspace.id,
        psp_event_id: id,
        type: 'customer.created',
        psp_created_at: at,
        payload: JSON.stringify({ id, object: 'event' }),
        received_at: at,
        state,
        applied_at: state === 'applied' || state === 'ignored' ? at : null,
        // A parked one (no more attempts until a person asks): the worker leaves it alone.
        ...(state === 'parked' && { attempts: 6, last_error: 'boom' }),
      });
      return id;
    };
    // 70 days: kept by the default 90, deleted by the 60 this worker is given.
    await stored('applied', 70);
    await stored('ignored', 200);
    const kept = [await stored('applied', 50), await stored('parked', 300), await stored('applied', 1)];
    const before = await processorStatus(db, 'https://x.test', workspace.id);

    startWorker({ PROCESSOR_EVENT_RETENTION_DAYS: '60' });
    const left = () => db('processor_events').where({ connection_id: connection.id }).pluck('psp_event_id');
    await eventually(async () => (await left()).length === kept.length, 20_000);
    expect((await left()).sort()).toEqual(kept.sort());
    expect(await processorStatus(db, 'https://x.test', workspace.id)).toEqual(before);
    expect(before).toMatchObject({ events_received: 5, events_parked: 1 });
  });

  it('refuses to start on fewer than 31 days, naming the variable and why', async () => {
    const started = startWorker({ PROCESSOR_EVENT_RETENTION_DAYS: '30' });
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain(
      'worker failed to start: Invalid PROCESSOR_EVENT_RETENTION_DAYS: 30 days is fewer than 31. Stripe resends an event up to 30 days after it was created',
    );
    expect(started.output()).not.toMatch(LEFT_OPEN);
  });
});
