import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REPO_ROOT } from '@retention/testkit';

/**
 * The package as it is published: `npm pack` (its prepack build included) on a copy of the
 * package, the tarball installed into a fresh consumer project outside the repository, where
 * nothing of the service can be reached, and used and type-checked from there.
 */
const SDK = path.join(REPO_ROOT, 'packages/sdk');
const TSC = path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// npm's own variables (set when the suite runs under `npm test`) would steer the nested npm.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: cleanEnv, timeout: 120_000 }, (error, stdout, stderr) =>
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
let consumerDir: string;
let installedDir: string;
let pack: Run;
let packedFiles: string[];
let install: Run;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'sdk-package-'));
  // The package's files where its tsconfig expects them, with the repository's tools.
  const copy = path.join(scratch, 'repo/packages/sdk');
  mkdirSync(copy, { recursive: true });
  cpSync(path.join(REPO_ROOT, 'tsconfig.base.json'), path.join(scratch, 'repo/tsconfig.base.json'));
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(scratch, 'repo/node_modules'), 'dir');
  for (const entry of ['package.json', 'tsconfig.build.json', 'README.md', 'src']) {
    cpSync(path.join(SDK, entry), path.join(copy, entry), { recursive: true });
  }
  pack = await run('npm', ['pack', '--json', '--pack-destination', scratch], copy);
  if (pack.code !== 0) return;
  const [report] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packedFiles = report!.files.map((file) => file.path);

  consumerDir = path.join(scratch, 'consumer');
  mkdirSync(consumerDir);
  writeFileSync(path.join(consumerDir, 'package.json'), '{"name":"consumer","private":true,"type":"module"}\n');
  install = await run(
    'npm',
    ['install', path.join(scratch, report!.filename), '--offline', '--no-audit', '--no-fund', '--no-package-lock'],
    consumerDir,
  );
  installedDir = path.join(consumerDir, 'node_modules/@retention/sdk');
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
  });

  it('is UNLICENSED and private: handed out as a tarball, never published to a registry by mistake', () => {
    const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.license).toBe('UNLICENSED');
    expect(manifest.private).toBe(true);
    expect(manifest.publishConfig).toBeUndefined();
    expect(manifest.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    });
  });
});

describe('the published package', () => {
  it('is built by npm pack (prepack) with its own configuration, declarations included', () => {
    expect(pack).toMatchObject({ code: 0 });
    expect(packedFiles).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/webhooks/verify.js', 'src/index.ts']),
    );
  });

  it('is what the README tells a user to install: the tarball npm pack writes', () => {
    const readme = readFileSync(path.join(SDK, 'README.md'), 'utf8');
    const install = /## Install\n[^#]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const [report] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
    expect(install).toContain('npm pack -w @retention/sdk');
    expect(install).toContain(`npm install /path/to/${report!.filename}`);
  });

  it('packs only dist/, the sources its maps point at, the README and the manifest', () => {
    for (const file of packedFiles) expect(file).toMatch(/^(dist\/.+|src\/.+\.ts|README\.md|package\.json)$/);
  });

  it('installs from the tarball alone, and its built files refer to nothing of the service', () => {
    expect(install).toMatchObject({ code: 0 });
    // No dependency came with it: the SDK is the only package installed.
    const installed = readdirSync(path.join(consumerDir, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['@retention']);
    expect(readdirSync(path.join(consumerDir, 'node_modules/@retention'))).toEqual(['sdk']);
    const built = filesUnder(path.join(installedDir, 'dist'));
    for (const file of built.filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'))) {
      expect(`${file}: ${readFileSync(path.join(installedDir, 'dist', file), 'utf8')}`).not.toContain('@retention/');
    }
  });

  it('is imported by its name from outside the repository and works', async () => {
    const consumer = path.join(consumerDir, 'consumer.mjs');
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
    const result = await run(process.execPath, [consumer], consumerDir);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('ping true function');
  });

  it('type-checks a consumer against its declarations, library checks included', async () => {
    const consumer = path.join(consumerDir, 'consumer.mts');
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
      consumerDir,
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);
});
