import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  connectProcessor,
  createWorkspace,
  OPERATOR,
  storeProcessorEvent,
  type ClaimedProcessorEvent,
} from '@retention/domain';
import { createLogger } from '@retention/runtime';
import { useTestDatabase } from '@retention/testkit';
import { ProcessorEventApplier } from '../../src/processor/processor-events.js';

/**
 * The applier's wake-ups (docs/processor.md, "The inbox is the queue"): a NOTIFY for a
 * connection that a loop is applying tells that loop to go on rather than waking another. The
 * poll here is an hour, so an event that waits for it fails the test: no wake-up is lost.
 */

const database = useTestDatabase();

describe('ProcessorEventApplier wake-ups', () => {
  it('applies an event stored while its connection is being applied, at once, without the poll', async () => {
    const db = database.current.db;
    const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
    const connection = await connectProcessor(
      db,
      randomBytes(32),
      { workspace_id: workspace.id, provider: 'stripe', webhook_secret: `whsec_${randomBytes(20).toString('hex')}` },
      'none',
      OPERATOR,
    );
    await db('processor_connections').where({ id: connection.id }).update({ status: 'connected' });
    const row = await db('processor_connections').where({ id: connection.id }).first();
    const store = (id: string) =>
      storeProcessorEvent(db, row, {
        psp_event_id: id,
        type: 'customer.created',
        created: new Date(),
        payload: { id },
      });

    const applied: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const applier = new ProcessorEventApplier({
      db,
      apply: async (_trx, event: ClaimedProcessorEvent) => {
        if (event.psp_event_id === 'evt_first') {
          firstStarted();
          await firstHeld;
        }
        applied.push(event.psp_event_id);
        return 'applied';
      },
      logger: createLogger('test', 'silent'),
      concurrency: 4,
      batchSize: 100,
      pollMs: 3_600_000,
    });
    applier.start(); // every loop looks once, finds nothing, and sleeps
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await store('evt_first');
      applier.wake(connection.id);
      await started;
      // Stored and notified while evt_first's batch holds the connection.
      await store('evt_second');
      applier.wake(connection.id);
      await store('evt_third');
      applier.wake(connection.id);
      releaseFirst();
      // Applied in order, and marked so once the batch commits (the apply callback runs before it).
      const states = () => db('processor_events').where({ connection_id: connection.id }).pluck('state');
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && (applied.length < 3 || (await states()).some((state) => state !== 'applied'))) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(applied).toEqual(['evt_first', 'evt_second', 'evt_third']);
      expect(await states()).toEqual(['applied', 'applied', 'applied']);
    } finally {
      await applier.stop();
    }
  });
});
