import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { inTransaction } from '@retention/db';
import {
  createToken,
  createWorkspace,
  listSecurityEvents,
  OPERATOR,
  recordSecurityEvent,
  securityLogFilters,
  type SecurityEvent,
  type SecurityLogFilters,
} from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';
import { planOf } from '../../db/test/support/query-plan.js';

const database = useTestDatabase();

describe('security log', () => {
  it('commits with the change it records, and not without it', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Acme' });
    const actor = { type: 'user' as const, label: 'owner@acme.test', ip: '203.0.113.9', user_agent: 'Mozilla/5.0' };
    await inTransaction(db, (trx) =>
      recordSecurityEvent(trx, {
        workspace_id: workspace.id,
        action: 'token.created',
        actor,
        target: { type: 'api_token', id: 'tok', label: 'ci' },
        details: { rate_limit_per_minute: 60 },
      }),
    );
    await expect(
      inTransaction(db, async (trx) => {
        await recordSecurityEvent(trx, { workspace_id: workspace.id, action: 'token.revoked', actor });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');

    const { data, has_more, next_cursor } = await listSecurityEvents(db, workspace.id);
    expect(has_more).toBe(false);
    expect(next_cursor).toBeNull();
    expect(data).toEqual([
      expect.objectContaining({
        object: 'security_event',
        action: 'token.created',
        actor: { type: 'user', user_id: null, label: 'owner@acme.test', email: null },
        target: { type: 'api_token', id: 'tok', label: 'ci', exists: false },
        ip_address: '203.0.113.9',
        user_agent: 'Mozilla/5.0',
        details: { rate_limit_per_minute: 60 },
      }),
    ]);
  });

  it('says whether each target is still there: in this workspace, not deleted, an invitation only while pending', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Acme' });
    const other = await createWorkspace(db, { name: 'Elsewhere' });
    const token = await createToken(db, { workspace_id: workspace.id, name: 'ci' });
    const elsewhere = await createToken(db, { workspace_id: other.id, name: 'theirs' });
    const [kept, left] = await db('users')
      .insert([
        { workspace_id: workspace.id, email: 'kept@acme.test', role: 'member' },
        { workspace_id: workspace.id, email: 'left@acme.test', role: 'member' },
      ])
      .returning<Array<{ id: string }>>('id');
    const invitation = (pending: boolean) => ({
      workspace_id: workspace.id,
      kind: 'invitation',
      email: 'new@acme.test',
      role: 'member',
      token_hash: randomBytes(32).toString('hex'),
      expires_at: new Date(Date.now() + 86_400_000),
      ...(pending ? {} : { used_at: new Date() }),
    });
    const [pending, used] = await db('account_links')
      .insert([invitation(true), invitation(false)])
      .returning<Array<{ id: string }>>('id');
    const targets = [
      { type: 'api_token', id: elsewhere.id, label: 'theirs' },
      { type: 'user', id: kept!.id, label: 'kept@acme.test' },
      { type: 'user', id: left!.id, label: 'left@acme.test' },
      { type: 'invitation', id: pending!.id, label: 'new@acme.test' },
      { type: 'invitation', id: used!.id, label: 'new@acme.test' },
      { type: 'workspace', id: workspace.id, label: 'Acme' },
      { type: 'webhook_endpoint', id: 'not-a-uuid', label: 'https://old.example' },
    ];
    for (const target of targets) {
      await recordSecurityEvent(db, {
        workspace_id: workspace.id,
        action: 'team.role_changed',
        actor: OPERATOR,
        target,
      });
    }
    await db('users').where({ id: left!.id }).delete();
    const { data } = await listSecurityEvents(db, workspace.id);
    // By id: entries written in the same millisecond come in the order of their ids.
    expect(Object.fromEntries(data.map((event) => [event.target!.id, event.target!.exists]))).toEqual({
      [token.id]: true,
      [elsewhere.id]: false,
      [kept!.id]: true,
      [left!.id]: false,
      [pending!.id]: true,
      [used!.id]: false,
      [workspace.id]: true,
      'not-a-uuid': false,
    });
  });

  it("keeps the address of the person an entry names after they leave: the operator CLI's --actor is still named", async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Acme' });
    const [olga] = await db('users')
      .insert({ workspace_id: workspace.id, email: 'olga@acme.test', role: 'admin' })
      .returning<Array<{ id: string }>>('id');
    await recordSecurityEvent(db, {
      workspace_id: workspace.id,
      action: 'webhook.deleted',
      actor: { type: 'operator', user_id: olga!.id, label: 'operator CLI' },
    });
    await recordSecurityEvent(db, { workspace_id: workspace.id, action: 'token.created', actor: OPERATOR });
    const actors = async () =>
      Object.fromEntries((await listSecurityEvents(db, workspace.id)).data.map((entry) => [entry.action, entry.actor]));
    expect(await actors()).toEqual({
      'webhook.deleted': { type: 'operator', user_id: olga!.id, label: 'operator CLI', email: 'olga@acme.test' },
      'token.created': { type: 'operator', user_id: null, label: 'operator CLI', email: null },
    });
    // Removed from the team: the account goes, and with it the entry's id; the address stays.
    await db('users').where({ id: olga!.id }).delete();
    expect((await actors())['webhook.deleted']).toEqual({
      type: 'operator',
      user_id: null,
      label: 'operator CLI',
      email: 'olga@acme.test',
    });
  });

  it('pages through a group of equal timestamps, visiting every record once, and only its own workspace', async () => {
    const { db } = database.current;
    const [mine, other] = await Promise.all([
      createWorkspace(db, { name: 'Mine' }),
      createWorkspace(db, { name: 'Other' }),
    ]);
    // 7 records in one transaction share now(): a timestamp cursor alone would lose some.
    await inTransaction(db, async (trx) => {
      for (let index = 0; index < 7; index += 1) {
        await recordSecurityEvent(trx, {
          workspace_id: mine.id,
          action: 'webhook.updated',
          actor: { type: 'operator', label: 'operator CLI' },
          target: { type: 'webhook_endpoint', id: String(index) },
        });
      }
      await recordSecurityEvent(trx, {
        workspace_id: other.id,
        action: 'webhook.updated',
        actor: { type: 'operator' },
      });
    });
    const seen: SecurityEvent[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await listSecurityEvents(db, mine.id, { limit: 3, ...(cursor && { cursor }) });
      seen.push(...page.data);
      if (!page.has_more) break;
      cursor = page.next_cursor!;
    }
    expect(seen.map((event) => event.target?.id).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    expect(new Set(seen.map((event) => event.id)).size).toBe(7);
  });

  it('refuses a cursor it did not make', async () => {
    const { db } = database.current;
    const workspace = await createWorkspace(db, { name: 'Acme' });
    for (const cursor of [
      '2026-01-01',
      'not a cursor',
      Buffer.from('2026-01-01T00:00:00.000Z|x').toString('base64url'),
    ]) {
      await expect(listSecurityEvents(db, workspace.id, { cursor })).rejects.toMatchObject({ type: 'invalid_param' });
    }
  });
});

/**
 * Every filter of the log reads through an index (migration 0038), on a log of 200,000 entries in
 * one workspace: an action, a person or a kind of actor with few entries or none is one range of
 * its index, never a scan of the table nor a walk of the workspace's whole log; a time range is a
 * range of the list index. Plans, not timings: EXPLAIN of the query listSecurityEvents sends.
 */
describe('security log filters on a large log', () => {
  const ENTRIES = 200_000;
  let workspaceId: string;
  let busy: string;
  let rare: string;

  beforeAll(async () => {
    const { db } = database.current;
    workspaceId = (await createWorkspace(db, { name: 'Large log' })).id;
    const other = (await createWorkspace(db, { name: 'Other log' })).id;
    [busy, rare] = (await db('users')
      .insert(
        ['busy', 'rare'].map((name) => ({
          workspace_id: workspaceId,
          email: `${name}@large.test`,
          role: 'admin',
          name,
        })),
      )
      .returning('id')
      .then((rows) => rows.map((row: { id: string }) => row.id))) as [string, string];
    // Ten common actions, nine in ten entries by `busy` in the dashboard, the rest by the
    // operator CLI; one entry in 2,000 a token revoked by `rare`; nothing by the service itself
    // (`system`) nor the processor. As much again in another workspace.
    await db.raw(
      `INSERT INTO security_events (workspace_id, action, actor_type, actor_user_id, actor_label, created_at)
       SELECT w, CASE WHEN n % 2000 = 0 THEN 'token.revoked'
                      ELSE (ARRAY['campaign.marked_recovered', 'campaign.marked_lost', 'webhook.updated',
                                  'webhook.deliveries_requeued', 'team.invited', 'team.joined', 'token.created',
                                  'account.password_changed', 'processor.events_retried',
                                  'webhook.secret_rolled'])[1 + n % 10] END,
              CASE WHEN n % 10 = 9 THEN 'operator' ELSE 'user' END,
              CASE WHEN w <> ? THEN NULL WHEN n % 2000 = 0 THEN ?::uuid WHEN n % 10 = 9 THEN NULL ELSE ?::uuid END,
              'x', timestamp '2025-01-01' + n * interval '2 minutes'
         FROM unnest(ARRAY[?, ?]::uuid[]) AS w, generate_series(1, ?) AS n`,
      [workspaceId, rare, busy, workspaceId, other, ENTRIES],
    );
    await db.raw('ANALYZE security_events');
  }, 120_000);

  const planFor = (filters: SecurityLogFilters, cursor?: string) => {
    const { db } = database.current;
    return planOf(db, 'security_events', () =>
      listSecurityEvents(db, workspaceId, { filters, ...(cursor !== undefined && { cursor }) }),
    );
  };

  it('reads an action with few entries or none from the action index, first page and after a cursor', async () => {
    const { db } = database.current;
    const revoked = await listSecurityEvents(db, workspaceId, { filters: { actions: ['token.revoked'] } });
    expect(revoked.data).toHaveLength(50);
    expect(revoked.data.every((event) => event.action === 'token.revoked')).toBe(true);
    expect(await planFor({ actions: ['token.revoked'] })).toContain('security_events_action_idx');
    expect(await planFor({ actions: ['token.revoked'] }, revoked.next_cursor!)).toContain('security_events_action_idx');
    expect(await planFor({ actions: ['processor.key_rejected'] })).toContain('security_events_action_idx');
    expect(await planFor({ actions: ['token.revoked', 'token.limit_changed'] })).toContain(
      'security_events_action_idx',
    );
    // One common action: its index in the list's order, a page read and nothing sorted.
    const common = await planFor({ actions: ['team.joined'] });
    expect(common).toContain('security_events_action_idx');
    expect(common).not.toContain('"Sort"');
  });

  it("reads a person's entries, and a kind of actor's, from their indexes", async () => {
    const { db } = database.current;
    expect(await planFor({ actor: { user_id: rare } })).toContain('security_events_actor_user_idx');
    const busyPage = await listSecurityEvents(db, workspaceId, { filters: { actor: { user_id: busy } } });
    expect(await planFor({ actor: { user_id: busy } }, busyPage.next_cursor!)).toContain(
      'security_events_actor_user_idx',
    );
    expect(await planFor({ actor: { kind: 'system' } })).toContain('security_events_actor_kind_idx');
    expect(await planFor({ actor: { kind: 'operator' } })).toContain('security_events_actor_kind_idx');
    // A person removed from the team: the foreign key's SET NULL finds their entries by the index.
    const { rows } = await db.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(
      'EXPLAIN UPDATE security_events SET actor_user_id = NULL WHERE actor_user_id = ?',
      [rare],
    );
    expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('security_events_actor_user_idx');
  });

  it('reads a time range as a range of an index, alone and with an action', async () => {
    const range = { from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-02T00:00:00Z') };
    const plan = await planFor(range);
    expect(plan).toContain('security_events_workspace_idx');
    expect(plan).toMatch(/"Index Cond":"[^"]*created_at >=/);
    expect(plan).not.toContain('"Sort"');
    expect(await planFor({ ...range, actions: ['token.revoked'] })).toContain('security_events_action_idx');
  });
});

describe('the filters as a query gives them', () => {
  it('quotes an unknown action cut at 60 characters, never halfway through one', () => {
    const refusal = (action: string) => {
      try {
        securityLogFilters({ action });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    // 59 letters, then an emoji (two UTF-16 units) as the 60th character: kept whole, then cut.
    const message = refusal(`${'a'.repeat(59)}😀${'b'.repeat(20)}`);
    expect(message).toContain(`"${'a'.repeat(59)}😀…" is not an action of the security log`);
    expect(message).not.toMatch(/\p{Cs}/u); // no lone surrogate
  });
});
