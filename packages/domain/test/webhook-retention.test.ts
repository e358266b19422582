import { describe, expect, it } from '@jest/globals';
import { loadFixtures, pruneWebhookLog } from '@retention/domain';
import { useTestDatabase, testSecretsKeyBytes } from '@retention/testkit';

const database = useTestDatabase();

/** A delivery of `status` finished (or not) `ageDays` ago, with `attempts` log lines of that age. */
async function delivery(endpoint: { id: string; workspaceId: string }, status: string, ageDays: number, attempts = 2) {
  const db = database.current.db;
  const at = db.raw(`now() - ? * interval '1 day'`, [ageDays]);
  const [row] = await db('webhook_deliveries')
    .insert({
      workspace_id: endpoint.workspaceId,
      endpoint_id: endpoint.id,
      event_type: 'ping', // no event row needed: a ping delivery has none
      status,
      attempt_count: attempts,
      next_attempt_at: status === 'pending' ? db.fn.now() : null,
      created_at: at,
      completed_at: status === 'pending' ? null : at,
    })
    .returning('id');
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    await db('webhook_attempts').insert({
      delivery_id: row.id,
      endpoint_id: endpoint.id,
      event_type: 'ping', // no event row needed: a ping delivery has none
      attempt,
      outcome: 'failed',
      error: 'HTTP 500',
      response_body: 'x'.repeat(4096),
      duration_ms: 10,
      attempted_at: at,
      url: 'https://hooks.example.com/retention',
    });
  }
  return row.id as string;
}

describe('pruneWebhookLog', () => {
  it('deletes attempts and finished deliveries past the retention, in batches, and keeps the rest', async () => {
    const db = database.current.db;
    const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
      workspaces: [{ key: 'w', webhooks: [{ key: 'e', name: 'main', url: 'https://hooks.example.com/a' }] }],
    });
    const endpoint = { id: loaded.workspaces.w!.webhooks.e!.id, workspaceId: loaded.workspaces.w!.id };
    const old: string[] = [];
    for (let i = 0; i < 5; i += 1) old.push(await delivery(endpoint, i % 2 ? 'failed' : 'succeeded', 91 + i));
    old.push(await delivery(endpoint, 'skipped', 200, 1));
    const recent = await delivery(endpoint, 'succeeded', 89);
    // Pending is never deleted, however old its rows look.
    const pending = await delivery(endpoint, 'pending', 120);

    const result = await pruneWebhookLog(db, { olderThanDays: 90, batchSize: 2 });
    expect(result).toEqual({ attempts: 5 * 2 + 1 + 2, deliveries: 6 });
    const left = await db('webhook_deliveries').where({ endpoint_id: endpoint.id }).pluck('id');
    expect(left.sort()).toEqual([recent, pending].sort());
    const attemptsOf = async (id: string) => (await db('webhook_attempts').where({ delivery_id: id })).length;
    expect(await attemptsOf(recent)).toBe(2);
    // The pending delivery stays; its 120-day-old attempt lines go, like any other's.
    expect(await attemptsOf(pending)).toBe(0);
    // A second run finds nothing.
    expect(await pruneWebhookLog(db, { olderThanDays: 90, batchSize: 2 })).toEqual({ attempts: 0, deliveries: 0 });
  });

  it('finds each batch through an index, not a scan of the table', async () => {
    const db = database.current.db;
    await db.raw('SET enable_seqscan = off');
    try {
      const { rows } = await db.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(
        `EXPLAIN SELECT id FROM webhook_deliveries WHERE completed_at < now() AND status <> 'pending'
          ORDER BY completed_at LIMIT 1000`,
      );
      expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('webhook_deliveries_completed_at_idx');
      const attempts = await db.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(
        'EXPLAIN SELECT id FROM webhook_attempts WHERE attempted_at < now() ORDER BY attempted_at LIMIT 1000',
      );
      expect(attempts.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('webhook_attempts_attempted_at_idx');
    } finally {
      await db.raw('RESET enable_seqscan');
    }
  });
});
