import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createWorkspace, OUTBOX_CHANNEL, recordEvent, recordEvents } from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();

const reactivation = {
  reactivation_id: '6f1c1f3e-4d59-4d2a-9d0e-0c4f1b7f2a11',
  customer_email: 'ann@example.com',
  subscription_id: '1b7e3c9a-52d4-4b8f-a2f0-8e8d6c1f0a22',
};

/** Collects the notifications on the outbox channel while `work` runs. */
async function notificationsDuring(work: () => Promise<void>): Promise<number> {
  const listener = new pg.Client({ connectionString: database.current.url });
  await listener.connect();
  let received = 0;
  listener.on('notification', (message) => {
    if (message.channel === OUTBOX_CHANNEL) received += 1;
  });
  await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
  try {
    await work();
    // A round trip on the listener flushes any notification already sent to it.
    await listener.query('SELECT 1');
    return received;
  } finally {
    await listener.end();
  }
}

describe('recordEvent', () => {
  it('writes the event row in the caller transaction and notifies at commit', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Outbox' });
    let eventId = '';
    const notified = await notificationsDuring(async () => {
      await db.transaction(async (trx) => {
        const event = await recordEvent(trx, workspace.id, 'reactivation.sent', reactivation);
        eventId = event.id;
        expect(event).toEqual({
          id: expect.any(String),
          seq: expect.any(Number),
          workspace_id: workspace.id,
          type: 'reactivation.sent',
          data: reactivation,
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        });
      });
    });
    expect(notified).toBe(1);
    const [row] = await db('events').where({ id: eventId });
    expect(row).toMatchObject({ workspace_id: workspace.id, type: 'reactivation.sent', data: reactivation });
    // In the dispatcher's queue, in the event's order.
    expect(await db('event_outbox').where({ event_id: eventId })).toEqual([
      { seq: row.seq, event_id: eventId, recorded_at: expect.any(Date) },
    ]);
  });

  it('leaves no row and sends no notification when the transaction rolls back', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Rolled back' });
    const queued = async () => Number((await db('event_outbox').count({ n: '*' }))[0]!.n);
    const queuedBefore = await queued();
    const notified = await notificationsDuring(async () => {
      await expect(
        db.transaction(async (trx) => {
          await recordEvent(trx, workspace.id, 'reactivation.sent', reactivation);
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
    });
    expect(notified).toBe(0);
    expect(await db('events').where({ workspace_id: workspace.id })).toEqual([]);
    expect(await queued()).toBe(queuedBefore);
  });

  it('refuses data that the event catalog does not allow, writing nothing', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Strict' });
    await expect(
      db.transaction((trx) =>
        recordEvent(trx, workspace.id, 'reactivation.sent', { ...reactivation, extra: 1 } as never),
      ),
    ).rejects.toThrow(/extra/);
    expect(await db('events').where({ workspace_id: workspace.id })).toEqual([]);
  });

  it('appends a batch in order with one notification, or nothing when one event is invalid', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Batch' });
    const emails = ['a@example.com', 'b@example.com', 'c@example.com'];
    const batch = emails.map((email) => ({
      workspaceId: workspace.id,
      type: 'reactivation.sent' as const,
      data: { ...reactivation, customer_email: email },
    }));
    let written: Array<{ seq: number; data: unknown }> = [];
    const notified = await notificationsDuring(async () => {
      written = await db.transaction((trx) => recordEvents(trx, batch));
    });
    expect(notified).toBe(1);
    expect(written.map((event) => (event.data as { customer_email: string }).customer_email)).toEqual(emails);
    const stored = await db('events').where({ workspace_id: workspace.id }).orderBy('seq');
    expect(stored.map((row) => row.data.customer_email)).toEqual(emails);
    const ids = stored.map((row) => row.id);
    expect(await db('event_outbox').whereIn('event_id', ids).orderBy('seq').pluck('event_id')).toEqual(ids);

    await expect(
      db.transaction((trx) =>
        recordEvents(trx, [...batch, { ...batch[0]!, data: { ...reactivation, customer_email: 42 } as never }]),
      ),
    ).rejects.toThrow(/customer_email/);
    expect(await db('events').where({ workspace_id: workspace.id })).toHaveLength(3);
  });
});
