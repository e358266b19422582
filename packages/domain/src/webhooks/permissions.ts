import { forbidden, isOneOf, notFound, WEBHOOK_MANAGER_ROLES, type UserRole } from '@retention/core';
import type { Queryable } from '@retention/db';
import { assertUuid } from '../validate.js';

/**
 * Only an owner or admin of the endpoint's own workspace may add, edit, toggle, test or
 * delete its endpoints (docs/dashboard-api.md, "Roles"). A user of another workspace is refused like a member:
 * roles never reach across workspaces.
 */
export async function assertWebhookManager(db: Queryable, workspaceId: string, actorId: string): Promise<void> {
  assertUuid(actorId, 'actor');
  const actor = await db<{ id: string; workspace_id: string; role: UserRole }>('users')
    .where({ id: actorId })
    .first('workspace_id', 'role');
  if (!actor) throw notFound(`No user with id ${actorId}`);
  if (actor.workspace_id !== workspaceId) {
    throw forbidden(`User ${actorId} is not a member of this endpoint's workspace`);
  }
  if (!isOneOf(WEBHOOK_MANAGER_ROLES, actor.role)) {
    throw forbidden(`Only an owner or admin may manage webhook endpoints; user ${actorId} is a ${actor.role}`);
  }
}
