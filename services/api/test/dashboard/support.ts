import { randomUUID } from 'node:crypto';
import { createWorkspace, hashPassword } from '@retention/domain';
import type { Db } from '@retention/db';
import type { UserRole } from '@retention/core';

/** The Origin the dashboard sends: BASE_URL's, the default of loadConfig in the test harness. */
export const ORIGIN = 'http://localhost:3000';
export const PASSWORD = 'correct horse battery staple';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface Call {
  body?: unknown;
  cookie?: string | undefined;
  /** null sends no Origin at all. */
  origin?: string | null;
  headers?: Record<string, string>;
  rawBody?: string;
}

export function dashboardClient(baseUrl: string) {
  return async function call(method: string, path: string, options: Call = {}): Promise<Reply> {
    const headers = new Headers(options.headers);
    if (options.cookie) headers.set('cookie', options.cookie);
    const origin = options.origin === undefined ? ORIGIN : options.origin;
    if (origin !== null) headers.set('origin', origin);
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers.set('content-type', 'application/json');
    } else if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    const response = await fetch(`${baseUrl}/dashboard/api${path}`, {
      method,
      headers,
      ...(body !== undefined && { body }),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };
}

export type DashboardCall = ReturnType<typeof dashboardClient>;

/** `name=value` of the session cookie a response set, for the next request's Cookie header. */
export function sessionCookieOf(reply: Reply): string {
  const header = reply.headers.get('set-cookie') ?? '';
  const match = /(?:__Host-)?retention_session=([^;]*)/.exec(header);
  if (!match) throw new Error(`no session cookie in ${header}`);
  return match[0];
}

/** `name=value` of the device cookie a response set (trusted-devices.ts), for a later sign-in. */
export function deviceCookieOf(reply: Reply): string {
  const header = reply.headers.getSetCookie().find((cookie) => /^(?:__Host-)?retention_device=/.test(cookie));
  if (!header) throw new Error(`no device cookie in ${reply.headers.get('set-cookie')}`);
  return header.split(';')[0]!;
}

let hashed: Promise<string> | undefined;

export async function makeUser(
  db: Db,
  workspaceId: string,
  role: UserRole,
  email = `${role}-${randomUUID().slice(0, 8)}@example.com`,
): Promise<{ id: string; email: string }> {
  hashed ??= hashPassword(PASSWORD);
  const [row] = await db('users')
    .insert({ workspace_id: workspaceId, email, role, name: `${role} person`, password_hash: await hashed })
    .returning(['id', 'email']);
  return row as { id: string; email: string };
}

export async function signIn(call: DashboardCall, email: string, password = PASSWORD): Promise<string> {
  const reply = await call('POST', '/session', { body: { email, password } });
  if (reply.status !== 200) throw new Error(`sign-in failed: ${reply.status} ${reply.text}`);
  return sessionCookieOf(reply);
}

/** A workspace with a signed-in owner, admin and member. */
export async function team(db: Db, call: DashboardCall, name = 'Acme') {
  const workspace = await createWorkspace(db, { name });
  const owner = await makeUser(db, workspace.id, 'owner');
  const admin = await makeUser(db, workspace.id, 'admin');
  const member = await makeUser(db, workspace.id, 'member');
  return {
    workspace,
    owner: { ...owner, cookie: await signIn(call, owner.email) },
    admin: { ...admin, cookie: await signIn(call, admin.email) },
    member: { ...member, cookie: await signIn(call, member.email) },
  };
}
