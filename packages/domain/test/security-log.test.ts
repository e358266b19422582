import { describe, expect, it } from '@jest/globals';
import { inTransaction } from '@retention/db';
import { createWorkspace, listSecurityEvents, recordSecurityEvent, type SecurityEvent } from '@retention/domain';
import { useTestDatabase } from '@retention/testkit';

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
        actor: { type: 'user', user_id: null, label: 'owner@acme.test' },
        target: { type: 'api_token', id: 'tok', label: 'ci' },
        ip_address: '203.0.113.9',
        user_agent: 'Mozilla/5.0',
        details: { rate_limit_per_minute: 60 },
      }),
    ]);
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
