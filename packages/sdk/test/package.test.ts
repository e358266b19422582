import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REPO_ROOT } from '@retention/testkit';

/**
 * The package as it would be published: built with its own tsconfig into a scratch copy,
 * packed, installed next to a consumer and used from there, outside the repository, where
 * nothing of the service can be reached.
 */
const SDK = path.join(REPO_ROOT, 'packages/sdk');
const TSC = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)));
}

let scratch: string;
let packageDir: string;
let build: Run;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sdk-package-'));
  packageDir = path.join(scratch, 'node_modules/@retention/sdk');
  mkdirSync(packageDir, { recursive: true });
  build = await run(
    process.execPath,
    [TSC, '-p', path.join(SDK, 'tsconfig.build.json'), '--outDir', path.join(packageDir, 'dist')],
    REPO_ROOT,
  );
  cpSync(path.join(SDK, 'package.json'), path.join(packageDir, 'package.json'));
  cpSync(path.join(SDK, 'README.md'), path.join(packageDir, 'README.md'));
  cpSync(path.join(SDK, 'src'), path.join(packageDir, 'src'), { recursive: true });
}, 120_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the source', () => {
  it('imports nothing but its own modules and node: built-ins', () => {
    const sources = filesUnder(path.join(SDK, 'src')).filter((file) => file.endsWith('.ts'));
    expect(sources.length).toBeGreaterThan(5);
    for (const file of sources) {
      const text = readFileSync(path.join(SDK, 'src', file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((match) => match[1]!);
      for (const specifier of specifiers) expect(`${file}: ${specifier}`).toMatch(/: (\.{1,2}\/|node:)/);
    }
  });

  it('declares no runtime dependency', () => {
    const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.private).toBeUndefined();
    expect(manifest.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    });
  });
});

describe('the built package', () => {
  it('compiles with its own build configuration, declarations included', () => {
    expect(build.stdout + build.stderr).toBe('');
    expect(build.code).toBe(0);
    const built = filesUnder(path.join(packageDir, 'dist'));
    expect(built).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'webhooks/verify.js']));
    for (const file of built.filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'))) {
      expect(`${file}: ${readFileSync(path.join(packageDir, 'dist', file), 'utf8')}`).not.toContain('@retention/');
    }
  });

  it('packs only dist/, the sources its maps point at, the README and the manifest', async () => {
    const packed = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], packageDir);
    expect(packed.code).toBe(0);
    const [report] = JSON.parse(packed.stdout) as Array<{ name: string; files: Array<{ path: string }> }>;
    expect(report!.name).toBe('@retention/sdk');
    for (const { path: file } of report!.files)
      expect(file).toMatch(/^(dist\/.+|src\/.+\.ts|README\.md|package\.json)$/);
  }, 60_000);

  it('is imported by its name from outside the repository and works', async () => {
    const consumer = path.join(scratch, 'consumer.mjs');
    writeFileSync(
      consumer,
      `import { createHmac } from 'node:crypto';
import { Client, InvalidParamError, verifyWebhook } from '@retention/sdk';
const body = '{"type":"ping","created_at":"2026-03-07T09:15:02.123Z","data":{"test":true}}';
const t = Math.floor(Date.now() / 1000);
const header = 't=' + t + ',v1=' + createHmac('sha256', 'whsec_x').update(t + '.' + body).digest('hex');
const event = verifyWebhook(Buffer.from(body), header, 'whsec_x');
const client = new Client({ token: 'sk_live_x', baseUrl: 'http://127.0.0.1:9' });
const error = await client.campaigns.retrieve('..').catch((e) => e);
console.log(event.type, error instanceof InvalidParamError, typeof client.customers.all);
`,
    );
    const result = await run(process.execPath, [consumer], scratch);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('ping true function');
  });

  it('type-checks a consumer against its declarations', async () => {
    const consumer = path.join(scratch, 'consumer.mts');
    writeFileSync(
      consumer,
      `import { Client, verifyWebhook, type RecoveryCampaign, type WebhookEvent } from '@retention/sdk';
const client = new Client({ token: 'sk_live_x', baseUrl: 'https://retention.example.com' });
export async function lost(): Promise<RecoveryCampaign[]> {
  const rows: RecoveryCampaign[] = [];
  for await (const campaign of client.campaigns.all({ status: 'lost' })) rows.push(campaign);
  return rows;
}
export function amount(body: Buffer, header: string): number | undefined {
  const event: WebhookEvent = verifyWebhook(body, header, 'whsec_x');
  return event.type === 'recovery.recovered' ? event.data.amount_cents : undefined;
}
// @ts-expect-error not a campaign status
void client.campaigns.list({ status: 'open' });
`,
    );
    const result = await run(
      process.execPath,
      [
        TSC,
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2023',
        '--types',
        'node',
        '--typeRoots',
        path.join(REPO_ROOT, 'node_modules/@types'),
        consumer,
      ],
      scratch,
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);
});
