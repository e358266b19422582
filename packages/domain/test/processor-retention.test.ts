import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { SetAsideReason } from '@retention/core';
import { connectProcessor, createWorkspace, OPERATOR, processorStatus, pruneProcessorEvents } from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';

const database = useTestDatabase();
const key = randomBytes(32);

async function connection(): Promise<{ id: string; workspaceId: string }> {
  const db = database.current.db;
  const workspace = await createWorkspace(db, { name: 'Acme', processor: 'disconnected' });
  const row = await connectProcessor(
    db,
    key,
    {
      workspace_id: workspace.id,
      provider: 'stripe',
      webhook_secret: `whsec_${randomBytes(20).toString('hex')}`,
      api_key: `rk_test_${randomBytes(20).toString('hex')}`,
    },
    'accepted',
    OPERATOR,
  );
  return { id: row.id, workspaceId: workspace.id };
}

type State = 'pending' | 'applied' | 'ignored' | 'parked';

/** A stored event of `state` received `ageDays` ago (and applied then, when finished). */
async function event(
  owner: { id: string; workspaceId: string },
  state: State,
  ageDays: number,
  reason: SetAsideReason | null = null,
): Promise<string> {
  const db = database.current.db;
  const at = db.raw(`now() - ? * interval '1 day'`, [ageDays]);
  const pspEventId = `evt_${randomBytes(12).toString('hex')}`;
  const [row] = await db('processor_events')
    .insert({
      connection_id: owner.id,
      workspace_id: owner.workspaceId,
      psp_event_id: pspEventId,
      type: 'customer.created',
      psp_created_at: at,
      payload: JSON.stringify({ id: pspEventId, object: 'event' }),
      received_at: at,
      state,
      applied_at: state === 'applied' || state === 'ignored' ? at : null,
      ignored_reason: reason,
      attempts: state === 'parked' ? 6 : 0,
      last_error: state === 'parked' ? 'boom' : null,
    })
    .returning('id');
  return row.id as string;
}

const idsOf = async (owner: { id: string }) =>
  ((await database.current.db('processor_events').where({ connection_id: owner.id }).pluck('id')) as string[]).sort();

/** What `processor status` says of the events: none of it may change when old ones are deleted. */
async function counts(owner: { workspaceId: string }) {
  const status = await processorStatus(database.current.db, 'https://x.test', owner.workspaceId);
  return {
    last_event_at: status.last_event_at,
    events_received: status.events_received,
    events_pending: status.events_pending,
    events_parked: status.events_parked,
    events_set_aside: status.events_set_aside,
    parked_events: status.parked_events,
  };
}

describe('pruneProcessorEvents', () => {
  it('deletes applied and ignored events past the retention, in batches, and keeps recent, pending and parked ones whatever their age', async () => {
    const db = database.current.db;
    const owner = await connection();
    for (const age of [91, 120, 400]) await event(owner, 'applied', age);
    await event(owner, 'ignored', 95);
    await event(owner, 'ignored', 100, 'other_mode');
    const kept = [
      await event(owner, 'applied', 89),
      await event(owner, 'ignored', 30, 'connected_account'),
      // Never deleted, however old: one still to apply, one waiting for a person.
      await event(owner, 'pending', 200),
      await event(owner, 'parked', 300),
      await event(owner, 'applied', 1),
    ];

    expect(await pruneProcessorEvents(db, { olderThanDays: 90, batchSize: 2 })).toEqual({ events: 5 });
    expect(await idsOf(owner)).toEqual(kept.sort());
    // A second run finds nothing.
    expect(await pruneProcessorEvents(db, { olderThanDays: 90, batchSize: 2 })).toEqual({ events: 0 });
  });

  it("keeps processor status's counts and last_event_at as they were, set-aside reasons included", async () => {
    const db = database.current.db;
    const owner = await connection();
    for (const age of [100, 101, 102]) await event(owner, 'applied', age);
    await event(owner, 'ignored', 103, 'connected_account');
    await event(owner, 'ignored', 104, 'connected_account');
    await event(owner, 'ignored', 105, 'other_mode');
    await event(owner, 'ignored', 106, 'signup_payment');
    await event(owner, 'ignored', 107);
    await event(owner, 'ignored', 5, 'other_mode');
    await event(owner, 'pending', 150);
    await event(owner, 'parked', 160);
    await event(owner, 'applied', 2);
    const before = await counts(owner);
    expect(before).toMatchObject({
      events_received: 12,
      events_pending: 1,
      events_parked: 1,
      events_set_aside: { connected_account: 2, other_mode: 2, signup_payment: 1 },
    });

    await pruneProcessorEvents(db, { olderThanDays: 90, batchSize: 3 });
    expect(await idsOf(owner)).toHaveLength(4);
    expect(await counts(owner)).toEqual(before);
    // Events received after a prune add to what was counted.
    await event(owner, 'ignored', 0, 'other_mode');
    expect(await counts(owner)).toMatchObject({
      events_received: 13,
      events_set_aside: { connected_account: 2, other_mode: 3, signup_payment: 1 },
    });
  });

  it("never deletes a connection's newest event, so last_event_at stays however long the connection was quiet", async () => {
    const db = database.current.db;
    const quiet = await connection();
    await event(quiet, 'applied', 150);
    await event(quiet, 'ignored', 120);
    const newest = await event(quiet, 'applied', 100);
    const before = await counts(quiet);

    await pruneProcessorEvents(db, { olderThanDays: 90 });
    expect(await idsOf(quiet)).toEqual([newest]);
    expect(await counts(quiet)).toEqual(before);
    expect(before).toMatchObject({ events_received: 3, last_event_at: expect.any(String) });
  });

  it('shares the work between runs at the same time (replicas), without errors, each event counted once', async () => {
    const db = database.current.db;
    const owners = [await connection(), await connection(), await connection()];
    for (const owner of owners) {
      const rows = Array.from({ length: 300 }, (_, index) => ({
        connection_id: owner.id,
        workspace_id: owner.workspaceId,
        psp_event_id: `evt_${randomBytes(12).toString('hex')}`,
        type: 'customer.created',
        psp_created_at: db.raw(`now() - ? * interval '1 minute'`, [200 * 1440 + index]),
        payload: JSON.stringify({}),
        received_at: db.raw(`now() - ? * interval '1 minute'`, [200 * 1440 + index]),
        state: index % 3 ? 'applied' : 'ignored',
        applied_at: db.fn.now(),
        ignored_reason: index % 3 ? null : 'connected_account',
      }));
      await db('processor_events').insert(rows);
      await event(owner, 'applied', 1);
    }
    const before = await Promise.all(owners.map(counts));

    const runs = await Promise.all(
      Array.from({ length: 4 }, () => pruneProcessorEvents(db, { olderThanDays: 90, batchSize: 10 })),
    );
    expect(runs.reduce((sum, run) => sum + run.events, 0)).toBe(3 * 300);
    for (const owner of owners) expect(await idsOf(owner)).toHaveLength(1);
    expect(await Promise.all(owners.map(counts))).toEqual(before);
    expect(before[0]).toMatchObject({ events_received: 301, events_set_aside: { connected_account: 100 } });
  });

  it("finds each batch through the connection's received-time index, not a scan of the table", async () => {
    const db = database.current.db;
    await db.raw('SET enable_seqscan = off');
    try {
      const { rows } = await db.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(
        `EXPLAIN SELECT id FROM processor_events
          WHERE connection_id = '00000000-0000-4000-8000-000000000000' AND received_at < now()
            AND state IN ('applied', 'ignored')
          ORDER BY received_at LIMIT 1000 FOR UPDATE SKIP LOCKED`,
      );
      expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('processor_events_received_idx');
    } finally {
      await db.raw('RESET enable_seqscan');
    }
  });
});
