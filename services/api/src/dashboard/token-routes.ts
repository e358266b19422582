import { Router } from 'express';
import { notFound } from '@retention/core';
import type { Queryable } from '@retention/db';
import { createToken, listTokens, revokeToken, type ApiToken } from '@retention/domain';
import { pathId } from '../middleware/validate-query.js';
import { actorOf, allow, signedIn, type DashboardContext } from './context.js';
import { bodyOf } from './json-body.js';

/**
 * Settings, API tokens: owners and admins only, list included (a member has no use for the
 * names, hints, creators and last uses of the keys to the workspace's data; least privilege).
 */
export function tokenRoutes(context: DashboardContext): Router {
  const router = Router();
  const { db } = context;

  /**
   * Who made each token: the user while they are in the workspace; once removed, the email
   * kept on the token (`removed: true`, no id or name); null when no user made it. And what
   * made it when that was not the dashboard: the security log's name for the maker of its
   * `token.created` (`operator CLI`, `npm start`), so that this page and the log name it alike
   * (docs/dashboard-api.md, "API tokens").
   */
  async function creators(trx: Queryable, ids: string[]) {
    const madeVia = trx('security_events as e')
      .whereRaw('e.workspace_id = t.workspace_id')
      .where({ 'e.action': 'token.created', 'e.target_type': 'api_token' })
      .whereRaw('e.target_id = t.id::text')
      .whereNot('e.actor_type', 'user')
      .orderBy('e.created_at')
      .limit(1)
      .select('e.actor_label');
    const rows = await trx('api_tokens as t')
      .leftJoin('users as u', 'u.id', 't.created_by')
      .whereIn('t.id', ids)
      .select<
        Array<{
          id: string;
          user_id: string | null;
          name: string | null;
          email: string | null;
          kept: string | null;
          via: string | null;
        }>
      >('t.id', 'u.id as user_id', 'u.name', 'u.email', 't.created_by_email as kept', madeVia.as('via'));
    return new Map(
      rows.map((row) => [
        row.id,
        {
          created_by: row.user_id
            ? { id: row.user_id, name: row.name, email: row.email, removed: false }
            : row.kept
              ? { id: null, name: null, email: row.kept, removed: true }
              : null,
          created_via: row.via,
        },
      ]),
    );
  }

  async function views(tokens: ApiToken[]) {
    const by = await creators(
      db,
      tokens.map((token) => token.id),
    );
    return tokens.map(({ workspace_id: _workspace, ...token }) => ({
      ...token,
      ...(by.get(token.id) ?? { created_by: null, created_via: null }),
    }));
  }

  async function ownToken(workspaceId: string, id: string) {
    pathId(id);
    const row = await db('api_tokens').where({ id, workspace_id: workspaceId }).first<{ id: string } | undefined>('id');
    if (!row) throw notFound(`No API token with id ${id}`);
  }

  router.get('/tokens', allow('read_tokens'), async (_req, res) => {
    const data = await views(await listTokens(db, signedIn(res).workspaceId));
    res.json({ object: 'list', data, has_more: false, next_cursor: null });
  });

  router.post('/tokens', allow('manage_tokens'), async (req, res) => {
    const { name } = bodyOf(req.body, ['name']);
    const created = await createToken(
      db,
      { workspace_id: signedIn(res).workspaceId, name: name as string },
      actorOf(req, res),
    );
    const [view] = await views([created]);
    res.status(201).json({ ...view, token: created.token });
  });

  router.post('/tokens/:id/revoke', allow('manage_tokens'), async (req, res) => {
    await ownToken(signedIn(res).workspaceId, String(req.params.id));
    const revoked = await revokeToken(
      db,
      { id: String(req.params.id) },
      { announce: context.announceTokenChange, actor: actorOf(req, res) },
    );
    res.json((await views([revoked]))[0]);
  });

  return router;
}
