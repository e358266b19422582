import type { Db } from '@retention/db';
import { testRedis } from '@retention/testkit';
import { runCli as runInProcess } from '../src/run.js';

export interface InProcessResult {
  code: number;
  json: any;
  error: { type: string; message: string } | undefined;
  stdout: string;
  stderr: string;
}

/** The CLI's own entry function with real connections; only process start-up is skipped. */
export function cli(databaseUrl: string, ...args: string[]): Promise<InProcessResult> {
  return cliWithEnv(databaseUrl, {}, ...args);
}

/** `cli` with some environment variables of its own. */
export async function cliWithEnv(
  databaseUrl: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<InProcessResult> {
  let stdout = '';
  let stderr = '';
  const code = await runInProcess(args, {
    env: { ...process.env, ...testRedis(), DATABASE_URL: databaseUrl, ...env },
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return {
    code,
    stdout,
    stderr,
    json: code === 0 ? JSON.parse(stdout) : undefined,
    error: stderr ? (JSON.parse(stderr) as { error: InProcessResult['error'] }).error : undefined,
  };
}

/**
 * A delivery of `event` to `endpoint` as the worker leaves it after a first attempt that failed
 * (no worker runs in these tests): for `webhook recover` and `webhook resend` to act on. Its id.
 */
export async function failedDelivery(
  db: Db,
  where: { workspace: string; endpoint: string; event: string; type?: string },
): Promise<string> {
  const [delivery] = await db('webhook_deliveries')
    .insert({
      workspace_id: where.workspace,
      endpoint_id: where.endpoint,
      event_id: where.event,
      event_type: where.type ?? 'recovery.opened',
      status: 'failed',
      attempt_count: 1,
      completed_at: new Date(),
    })
    .returning('id');
  return (delivery as { id: string }).id;
}
