import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import { computeSignature } from '@retention/core';
import { REPO_ROOT } from '@retention/testkit';
import { NODE_VERIFY_SNIPPET, SDK_VERIFY_SNIPPET } from '../services/api/src/openapi/webhook-snippets.js';

/**
 * docs/webhooks.md shows receivers how to verify a signature without our SDK. Its blocks marked
 * `webhook-verify` are run here, as written, against signatures made by the service's own
 * signer: the page cannot drift from what the worker sends.
 */
const run = promisify(execFile);
const page = readFileSync(path.join(REPO_ROOT, 'docs/webhooks.md'), 'utf8');
const block = (language: string, marker = 'webhook-verify') => {
  const match = page.match(new RegExp('^```' + language + ' ' + marker + '\\n([\\s\\S]*?)^```$', 'm'));
  if (!match) throw new Error(`docs/webhooks.md has no "${language} ${marker}" block`);
  return match[1]!;
};

const directory = mkdtempSync(path.join(tmpdir(), 'webhooks-doc-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const NEW_SECRET = 'whsec_new00000000000000000000000000000000000';
const OLD_SECRET = 'whsec_old00000000000000000000000000000000000';
const NOW = 1_764_057_302;
const body =
  '{"type":"recovery.opened","created_at":"2026-11-25T07:55:02.123Z","data":{"amount_cents":4900,"note":"é ✓"}}';
const v1 = (secret: string, t = NOW, raw = body) => computeSignature(secret, t, raw);

interface Case {
  name: string;
  header: string;
  secret: string;
  body?: string;
  now?: number;
  valid: boolean;
}

const cases: Case[] = [
  { name: 'one v1', header: `t=${NOW},v1=${v1(NEW_SECRET)}`, secret: NEW_SECRET, valid: true },
  {
    name: 'rotation overlap, new secret',
    header: `t=${NOW},v1=${v1(NEW_SECRET)},v1=${v1(OLD_SECRET)}`,
    secret: NEW_SECRET,
    valid: true,
  },
  {
    name: 'rotation overlap, old secret',
    header: `t=${NOW},v1=${v1(NEW_SECRET)},v1=${v1(OLD_SECRET)}`,
    secret: OLD_SECRET,
    valid: true,
  },
  { name: 'wrong secret', header: `t=${NOW},v1=${v1(OLD_SECRET)}`, secret: NEW_SECRET, valid: false },
  {
    name: 'body changed',
    header: `t=${NOW},v1=${v1(NEW_SECRET)}`,
    secret: NEW_SECRET,
    body: body.replace('4900', '9900'),
    valid: false,
  },
  {
    name: 'stale timestamp',
    header: `t=${NOW},v1=${v1(NEW_SECRET)}`,
    secret: NEW_SECRET,
    now: NOW + 301,
    valid: false,
  },
  { name: 'no v1', header: `t=${NOW}`, secret: NEW_SECRET, valid: false },
  { name: 'no header', header: '', secret: NEW_SECRET, valid: false },
];
const input = JSON.stringify(cases.map((c) => ({ ...c, body: c.body ?? body, now: c.now ?? NOW + 5 })));

async function verdicts(command: string, args: string[]): Promise<boolean[]> {
  const child = run(command, args, { cwd: directory });
  child.child.stdin!.end(input);
  const { stdout } = await child;
  return JSON.parse(stdout) as boolean[];
}

describe('docs/webhooks.md verification examples', () => {
  it('are the snippets the API reference (/docs) shows, word for word', () => {
    expect(block('js')).toBe(NODE_VERIFY_SNIPPET);
    expect(block('ts', 'webhook-sdk')).toBe(SDK_VERIFY_SNIPPET);
  });

  it('the Node.js example accepts exactly the valid signatures', async () => {
    writeFileSync(path.join(directory, 'verify.mjs'), block('js'));
    writeFileSync(
      path.join(directory, 'driver.mjs'),
      `import { verify } from './verify.mjs';
       let input = '';
       for await (const chunk of process.stdin) input += chunk;
       const cases = JSON.parse(input);
       console.log(JSON.stringify(cases.map((c) => verify(Buffer.from(c.body, 'utf8'), c.header, c.secret, c.now))));`,
    );
    expect(await verdicts(process.execPath, ['driver.mjs'])).toEqual(cases.map((c) => c.valid));
  });

  it('the Python example accepts exactly the valid signatures', async () => {
    writeFileSync(
      path.join(directory, 'verify.py'),
      `${block('python')}
import json, sys
cases = json.load(sys.stdin)
print(json.dumps([verify(c["body"].encode("utf-8"), c["header"], c["secret"], c["now"]) for c in cases]))
`,
    );
    expect(await verdicts('python3', ['verify.py'])).toEqual(cases.map((c) => c.valid));
  });
});
