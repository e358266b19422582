import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { signatureHeader } from '@retention/core';
import { eventually, freePort, REPO_ROOT, startService, type ServiceProcess } from '@retention/testkit';
import { useApi, workspaceWithToken } from '../../../services/api/test/harness.js';
import { runScript } from './run-script.js';

/**
 * Every TypeScript block of the README is marked `ts test` (a script run to completion; a
 * following `text output` block is what it must print) or `ts test-server` (a webhook
 * receiver, sent a signed delivery and a forged one). Each is type-checked and run against
 * the real API, so the README cannot drift from the package.
 */
interface Block {
  kind: 'test' | 'test-server';
  code: string;
  output?: string;
  line: number;
}

function readmeBlocks(): Block[] {
  const text = readFileSync(path.join(REPO_ROOT, 'packages/sdk/README.md'), 'utf8');
  const fences = [...text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)];
  const blocks: Block[] = [];
  for (const [index, fence] of fences.entries()) {
    const info = fence[1]!.trim();
    const line = text.slice(0, fence.index).split('\n').length;
    if (!info.startsWith('ts')) continue;
    if (info !== 'ts test' && info !== 'ts test-server') {
      throw new Error(`README line ${line}: a TypeScript block must be marked "ts test" or "ts test-server"`);
    }
    const next = fences[index + 1];
    blocks.push({
      kind: info === 'ts test' ? 'test' : 'test-server',
      code: fence[2]!,
      line,
      ...(next?.[1]!.trim() === 'text output' && { output: next[2] }),
    });
  }
  return blocks;
}

const blocks = readmeBlocks();
const SECRET = 'whsec_readmeExamples000000000000000000000000';
const api = useApi();
// Inside the repository, so the blocks resolve packages as its own code does (tsx maps no
// paths inside node_modules); ignored by packages/sdk/.gitignore, removed after the run.
const directory = path.join(REPO_ROOT, 'packages/sdk/test', `.readme-${process.pid}`);
const fileOf = (block: Block) => path.join(directory, `line-${block.line}.mts`);
let env: Record<string, string>;

beforeAll(async () => {
  const { token } = await workspaceWithToken(api.current, {
    customers: [
      { key: 'c', email: 'vip@example.com', tags: ['vip'], subscriptions: [{}] },
      { key: 'd', subscriptions: [{}] },
    ],
    campaigns: Array.from({ length: 60 }, (_, i) => ({ customer: i % 2 ? 'c' : 'd' })),
    cancel_sessions: [{ customer: 'd', outcome: 'canceled' }],
  });
  env = { RETENTION_API_URL: api.current.url, RETENTION_API_TOKEN: token, WEBHOOK_SECRET: SECRET };
  mkdirSync(directory, { recursive: true });
  for (const block of blocks) writeFileSync(fileOf(block), block.code);
  writeFileSync(
    path.join(directory, 'tsconfig.json'),
    JSON.stringify({ extends: path.join(REPO_ROOT, 'tsconfig.json'), include: ['*.mts'] }),
  );
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the README of @retention/sdk', () => {
  it('has its examples marked for testing', () => {
    expect(blocks.filter((block) => block.kind === 'test').length).toBeGreaterThanOrEqual(4);
    expect(blocks.filter((block) => block.kind === 'test-server')).toHaveLength(1);
    expect(blocks.filter((block) => block.output !== undefined).length).toBeGreaterThanOrEqual(2);
  });

  it('type-checks every example', async () => {
    const output = await new Promise<string>((resolve) => {
      execFile(
        process.execPath,
        [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(directory, 'tsconfig.json')],
        { cwd: REPO_ROOT },
        (error, stdout) => resolve(error ? stdout || error.message : ''),
      );
    });
    expect(output).toBe('');
  }, 60_000);

  it.each(blocks.filter((block) => block.kind === 'test').map((block) => [block.line, block] as const))(
    'runs the example at line %i',
    async (_line, block) => {
      const result = await runScript(fileOf(block), env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      if (block.output !== undefined) expect(result.stdout).toBe(block.output);
    },
  );

  describe('the webhook receiver example', () => {
    let receiver: ServiceProcess | undefined;
    afterEach(async () => {
      await receiver?.stop();
    });

    it('answers a signed delivery with 200 and a forged one with 401', async () => {
      const block = blocks.find((candidate) => candidate.kind === 'test-server')!;
      const port = await freePort();
      receiver = startService(path.relative(REPO_ROOT, fileOf(block)), { ...env, PORT: String(port) });
      const url = `http://127.0.0.1:${port}/webhooks`;
      const body =
        '{"type":"recovery.recovered","created_at":"2026-03-07T09:15:02.123Z","data":{"campaign_id":"6f1c2a52-9d1e-4a8e-b2c4-1f0e2d3c4b5a","customer_email":"ann@example.com","amount_cents":4900,"currency":"usd","recovered_via":"retry"}}';
      const deliver = (secret: string) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-signature': signatureHeader(secret, Math.floor(Date.now() / 1000), body),
          },
          body,
        }).then((response) => response.status);
      const first = await eventually(() => deliver(SECRET).catch(() => 0), 20_000, 100);
      expect(first).toBe(200);
      expect(await deliver('whsec_forged')).toBe(401);
      await receiver.waitFor(/recovered 4900 usd via retry/);
    }, 30_000);
  });
});
