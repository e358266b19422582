import type { ProcessorStatus } from '@retention/core';
import { inTransaction, type Db } from '@retention/db';
import { recordSecurityEvent, type Actor } from '../security-log.js';
import { getWorkspace, updateWorkspace, type CurrencyRefusalReader, type Workspace } from '../workspaces.js';

/**
 * The Workspace settings page (owner: name and display currency) and the CLI's `workspace
 * update` (the processor status too), recorded in the security log with what changed. A save
 * that changes nothing (the page saved as it was loaded) succeeds and records nothing: an entry
 * "Workspace settings changed" that names no change sent readers looking for one.
 */
export async function updateWorkspaceSettings(
  db: Db,
  workspaceId: string,
  input: { name?: string; display_currency?: string; processor?: ProcessorStatus },
  actor: Actor,
): Promise<Workspace> {
  // A currency's refusal speaks to its reader: an owner on the page cannot add an FX rate, nor
  // run the CLI's `fx set`, so it asks them to ask (assertDisplayCurrencyConvertible).
  const reader: CurrencyRefusalReader = actor.type === 'operator' ? 'operator' : 'owner';
  return inTransaction(db, async (trx) => {
    const before = await getWorkspace(trx, workspaceId);
    const after = await updateWorkspace(trx, workspaceId, input, reader);
    const changed = Object.fromEntries(
      (['name', 'display_currency', 'processor'] as const)
        .filter((key) => before[key] !== after[key])
        .map((key) => [key, { from: before[key], to: after[key] }]),
    );
    if (Object.keys(changed).length === 0) return after;
    await recordSecurityEvent(trx, {
      workspace_id: workspaceId,
      action: 'workspace.updated',
      actor,
      target: { type: 'workspace', id: workspaceId, label: after.name },
      details: changed,
    });
    return after;
  });
}
