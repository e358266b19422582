import { Type } from '@sinclair/typebox';
import { conflict, OneOf, toIsoMillis, USER_ROLES, Uuid, type UserRole } from '@retention/core';
import { inTransaction, pgErrorCode, type Db } from '@retention/db';
import { OPERATOR, recordSecurityEvent, type Actor } from './security-log.js';
import { getWorkspace } from './workspaces.js';
import { inputValidator, withTidyName } from './validate.js';
import { AccountEmailInput } from './accounts/account-email.js';

export interface User {
  id: string;
  object: 'user';
  workspace_id: string;
  email: string;
  role: UserRole;
  created_at: string;
}

export interface UserRow {
  id: string;
  workspace_id: string;
  email: string;
  role: UserRole;
  created_at: Date;
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    object: 'user',
    workspace_id: row.workspace_id,
    email: row.email,
    role: row.role,
    created_at: toIsoMillis(row.created_at),
  };
}

const validateCreate = inputValidator(
  Type.Object(
    { workspace_id: Uuid(), email: AccountEmailInput(), role: OneOf(USER_ROLES) },
    { additionalProperties: false },
  ),
);

export async function createUser(
  db: Db,
  input: { workspace_id: string; email: string; role: UserRole },
  actor: Actor = OPERATOR,
): Promise<User> {
  const valid = validateCreate(withTidyName(input));
  await getWorkspace(db, valid.workspace_id);
  try {
    return await inTransaction(db, async (trx) => {
      const [row] = await trx<UserRow>('users').insert(valid).returning('*');
      // A person added without an invitation (the CLI): recorded like one who joined.
      await recordSecurityEvent(trx, {
        workspace_id: valid.workspace_id,
        action: 'team.joined',
        actor,
        target: { type: 'user', id: row!.id, label: row!.email },
        details: { role: row!.role, added_directly: true },
      });
      return toUser(row as UserRow);
    });
  } catch (error) {
    if (pgErrorCode(error) === '23505')
      throw conflict(`A user with email ${valid.email} already exists in this workspace.`);
    throw error;
  }
}
