import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse, parseDocument } from 'yaml';
import { loadConfig } from '@retention/core';
import { DEVELOPMENT_SECRETS_KEY_FILE } from '@retention/runtime';
import {
  createEmptyDatabase,
  freePort,
  redisKeyPrefix,
  REPO_ROOT,
  runId,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  type TestDatabase,
  testSecretsKey,
} from '@retention/testkit';

/**
 * The container setup, checked without a Docker engine: docker-compose.yml and the
 * Dockerfile read structurally against the properties the deployment relies on, and the
 * bundle that `npm run build` makes (what the image runs) built and run for real.
 */

const read = (file: string) => readFile(path.join(REPO_ROOT, file), 'utf8');

let compose: any;
let composeDev: any;
let dockerfile: string;
beforeAll(async () => {
  compose = parse(await read('docker-compose.yml'), { merge: true });
  composeDev = parse(await read('infra/docker/compose.dev.yml'), { merge: true });
  dockerfile = await read('infra/docker/Dockerfile');
});

const APP_SERVICES = ['migrate', 'api', 'worker'];

describe('docker-compose.yml', () => {
  it('runs postgres, redis, a one-shot migrate, the API and the worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
  });

  it('keeps PostgreSQL on a named volume, with a healthcheck over TCP', () => {
    const postgres = compose.services.postgres;
    const [volume, mountPoint] = String(postgres.volumes[0]).split(':');
    expect(mountPoint).toBe('/var/lib/postgresql/data');
    expect(compose.volumes).toHaveProperty(volume!);
    // Not the Unix socket: the image's first-time initialisation runs a server on the socket
    // only, and "healthy" then would start migrate before TCP connections are accepted.
    expect(postgres.healthcheck.test.join(' ')).toMatch(/pg_isready -h 127\.0\.0\.1 /);
  });

  it('runs Redis with append-only persistence and noeviction, on a named volume, with a healthcheck', () => {
    const redis = compose.services.redis;
    const command: string[] = redis.command;
    expect(command[command.indexOf('--appendonly') + 1]).toBe('yes');
    expect(command[command.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
    const [volume, mountPoint] = String(redis.volumes[0]).split(':');
    expect(mountPoint).toBe('/data');
    expect(compose.volumes).toHaveProperty(volume!);
    expect(redis.healthcheck.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it('migrates once, after PostgreSQL is healthy, and starts the API and the workers only after that', () => {
    const { migrate, api, worker } = compose.services;
    expect(migrate.command).toEqual(['node', 'dist/migrate.js', '--wait', '30s']);
    expect(migrate.restart).toBe('no');
    expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const service of [api, worker]) {
      expect(service.depends_on).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
      });
      expect(service.restart).toBe('unless-stopped');
    }
  });

  it('can scale the worker: no fixed name, no published port; only the API publishes one port', () => {
    for (const [name, service] of Object.entries<any>(compose.services)) {
      expect([name, service.container_name]).toEqual([name, undefined]);
      expect([name, service.hostname]).toEqual([name, undefined]);
      if (name !== 'api') expect([name, service.ports]).toEqual([name, undefined]);
    }
    expect(compose.services.api.ports).toEqual(['${API_PORT:-3000}:3000']);
    expect(compose.services.api.environment.PORT).toBe(3000);
    // /readyz and /metrics: on the compose network only, never published.
    expect(compose.services.api.environment.API_INTERNAL_PORT).toBe(3002);
    expect(JSON.stringify(compose.services.api.ports)).not.toContain('3002');
    // The printed and documented URLs follow the published port unless BASE_URL says otherwise.
    expect(compose.services.api.environment.BASE_URL).toBe('${BASE_URL:-http://localhost:${API_PORT:-3000}}');
  });

  it('runs several API replicas through infra/docker/compose.api-replicas.yml, not --scale', async () => {
    const document = parseDocument(await read('infra/docker/compose.api-replicas.yml'));
    const override = document.toJS();
    expect(Object.keys(override.services)).toEqual(['api']);
    // Replicas cannot share API_PORT: the override publishes none (Compose's !reset), and the
    // operator's load balancer reaches them on the compose network as api:3000.
    const ports = document.getIn(['services', 'api', 'ports'], true) as { tag?: string; toJSON(): unknown };
    expect([ports.tag, ports.toJSON()]).toEqual(['!reset', []]);
    // As many as API_EXPECTED_REPLICAS says, so each allows its share of a limit while Redis is
    // down; and behind a balancer TRUST_PROXY must be said, or every client shares its address.
    expect(override.services.api.deploy.replicas).toMatch(/^\$\{API_EXPECTED_REPLICAS:\?[^}]+\}$/);
    expect(override.services.api.environment).toEqual({
      TRUST_PROXY: expect.stringMatching(/^\$\{TRUST_PROXY:\?[^}]+\}$/),
    });
    for (const file of ['README.md', 'docker-compose.yml']) {
      const text = await read(file);
      expect([file, text.includes('infra/docker/compose.api-replicas.yml')]).toEqual([file, true]);
      // No command that scales the API: its replicas would all claim API_PORT.
      expect([file, /docker compose [^\n`]*--scale api=/.exec(text)?.[0]]).toEqual([file, undefined]);
    }
  });

  it('runs every process of the service from the one image, hardened', () => {
    for (const name of APP_SERVICES) {
      const service = compose.services[name];
      expect(service.build).toEqual({ context: '.', dockerfile: 'infra/docker/Dockerfile' });
      expect(service.image).toBe(compose.services.api.image);
      expect(service.user).toBeUndefined(); // the image's non-root user
      expect(service).toMatchObject({ init: true, read_only: true, cap_drop: ['ALL'] });
      expect(service.security_opt).toContain('no-new-privileges:true');
      expect(service.environment.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(service.environment.REDIS_URL).toBe('redis://redis:6379');
      // Required, with the fix in compose's own error message: no default key ships with the file.
      expect(service.environment.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?.*openssl rand -base64 32.*\}$/);
    }
  });

  it('checks the API and the workers through their health endpoints, on the ports they listen on', () => {
    const { api, worker } = compose.services;
    expect(api.healthcheck.test).toEqual([
      'CMD',
      'node',
      'healthcheck.mjs',
      `http://127.0.0.1:${api.environment.PORT}/healthz`,
    ]);
    expect(worker.healthcheck.test).toEqual([
      'CMD',
      'node',
      'healthcheck.mjs',
      `http://127.0.0.1:${worker.environment.WORKER_PORT}/healthz`,
    ]);
  });

  it('gives the long-running processes more time to stop than they give themselves', () => {
    const graceMs = (name: string) => 1_000 * Number(/^(\d+)s$/.exec(compose.services[name].stop_grace_period)?.[1]);
    // The API drains for up to 30 s.
    expect(graceMs('api')).toBeGreaterThan(30_000);
    // The worker allows max(30 s, WEBHOOK_TIMEOUT_MS + 15 s) (services/worker/src/main.ts), and
    // compose passes WEBHOOK_TIMEOUT_MS through: no timeout the worker accepts may outlast it.
    const largestTimeoutCovered = graceMs('worker') - 15_000;
    expect(largestTimeoutCovered).toBeGreaterThanOrEqual(30_000);
    expect(() =>
      loadConfig({ SECRETS_KEY: testSecretsKey(), WEBHOOK_TIMEOUT_MS: String(largestTimeoutCovered + 1) }),
    ).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });

  it('publishes PostgreSQL and Redis on loopback only, in the development override', () => {
    expect(Object.keys(composeDev.services).sort()).toEqual(['postgres', 'redis']);
    expect(composeDev.services.postgres.ports).toEqual(['127.0.0.1:${POSTGRES_PORT:-5432}:5432']);
    expect(composeDev.services.redis.ports).toEqual(['127.0.0.1:${REDIS_PORT:-6379}:6379']);
  });
});

describe("docker-compose.yml's environment", () => {
  /**
   * Names the processes read that compose does not pass: its DATABASE_URL names its user, so
   * PGUSER is never consulted (config.ts, withLoginName; node-postgres likewise). NODE_ENV is
   * the image's own (`ENV NODE_ENV=production` in infra/docker/Dockerfile): a compose default
   * would only risk undoing it. INSECURE_FAST_PASSWORD_HASHING is for test runs, and the image's
   * NODE_ENV=production refuses it.
   */
  const NOT_PASSED = new Set(['PGUSER', 'NODE_ENV', 'INSECURE_FAST_PASSWORD_HASHING']);
  /** Names in the sources that no process reads: the receiver's example code in the API reference. */
  const NOT_READ = new Set(['WEBHOOK_SECRET']);
  /** Set by compose itself, for its own PostgreSQL and Redis and the ports inside the containers. */
  const FIXED = new Set(['DATABASE_URL', 'REDIS_URL', 'PORT', 'WORKER_PORT', 'API_INTERNAL_PORT']);

  /** What loadConfig reads, recorded as it reads it (every name is read on every call). */
  function configNames(): Set<string> {
    const names = new Set<string>();
    const env = new Proxy<Record<string, string | undefined>>(
      {},
      {
        get: (_, name) => {
          if (typeof name === 'string') names.add(name);
          return name === 'SECRETS_KEY' ? testSecretsKey() : undefined;
        },
      },
    );
    loadConfig(env);
    return names;
  }

  /** The variables README's Configuration table documents (NODE_EXTRA_CA_CERTS, Node's own, among them). */
  async function documentedNames(): Promise<Set<string>> {
    const readme = await read('README.md');
    const section = readme.slice(
      readme.indexOf('\n## Configuration'),
      readme.indexOf('\n## ', readme.indexOf('\n## Configuration') + 1),
    );
    return new Set([...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((match) => match[1]!));
  }

  /** Names the image's processes read directly (process.env.X, env.X), outside loadConfig. */
  async function namesReadDirectly(): Promise<Set<string>> {
    const names = new Set<string>();
    for (const parent of ['packages', 'services']) {
      for (const workspace of await readdir(path.join(REPO_ROOT, parent))) {
        // The test kit runs in tests only; the dashboard in the browser.
        if (['packages/testkit', 'services/dashboard'].includes(`${parent}/${workspace}`)) continue;
        const src = path.join(parent, workspace, 'src');
        for (const file of await readdir(path.join(REPO_ROOT, src), { recursive: true })) {
          if (!file.endsWith('.ts')) continue;
          const text = await read(path.join(src, file));
          for (const match of text.matchAll(/\b(?:process\.env|env)(?:\.|\[')([A-Z][A-Z0-9_]*)\b/g))
            names.add(match[1]!);
        }
      }
    }
    return names;
  }

  it('passes every variable the processes read and documents, and no other', async () => {
    const names = new Set([...configNames(), ...(await documentedNames()), ...(await namesReadDirectly())]);
    expect(names).toContain('TRUST_PROXY');
    expect(names).toContain('NODE_EXTRA_CA_CERTS');
    const expected = [...names].filter((name) => !NOT_PASSED.has(name) && !NOT_READ.has(name)).sort();
    for (const name of APP_SERVICES) {
      expect([name, Object.keys(compose.services[name].environment).sort()]).toEqual([name, expected]);
    }
  });

  it("passes each from the shell or .env under its own name, defaulting to the code's own default", () => {
    const key = testSecretsKey();
    const defaults = loadConfig({ SECRETS_KEY: key });
    for (const [name, value] of Object.entries<unknown>(compose.services.api.environment)) {
      if (FIXED.has(name)) {
        expect([name, String(value)]).not.toEqual([name, expect.stringContaining(`\${${name}`)]);
        continue;
      }
      const match = /^\$\{([A-Z][A-Z0-9_]*)(:-|:\?)(.*)\}$/s.exec(String(value));
      expect([name, match?.[1]]).toEqual([name, name]);
      // BASE_URL's default follows the published port (tested above); SECRETS_KEY is required.
      if (match![2] !== ':-' || name === 'BASE_URL') continue;
      // An empty default (`${SMTP_URL:-}`) sets the variable to "": the code must read that as unset.
      expect([name, loadConfig({ SECRETS_KEY: key, [name]: match![3] })]).toEqual([name, defaults]);
    }
  });

  it('may pass NODE_EXTRA_CA_CERTS empty: Node reads an empty one as unset', async () => {
    const loadCertificates = (value: string) =>
      run('-e', ["require('node:tls').createSecureContext()"], { NODE_EXTRA_CA_CERTS: value }, REPO_ROOT);
    const missing = loadCertificates(path.join(tmpdir(), `no-such-file-${runId()}.pem`));
    expect(await missing.exited).toBe(0);
    expect(missing.output()).toContain('Ignoring extra certs');
    const empty = loadCertificates('');
    expect([await empty.exited, empty.output()]).toEqual([0, '']);
  });
});

describe('.dockerignore', () => {
  /**
   * Docker's matching (moby/patternmatcher): patterns are relative to the context's root, `*`
   * and `?` stay within one path segment, `**` spans any number of them, and a path is left out
   * when it or a directory above it matches. Unlike .gitignore, a bare name matches at the root
   * only. Exceptions (`!`) are not used here and not supported.
   */
  function excludedByDocker(patterns: string[], file: string): boolean {
    const regexps = patterns.map((pattern) => {
      const segments = pattern.replace(/^\/+|\/+$/g, '').split('/');
      const source = segments.map((segment, index) => {
        const last = index === segments.length - 1;
        if (segment === '**') return last ? '.*' : '(?:[^/]+/)*';
        const glob = segment
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replaceAll('*', '[^/]*')
          .replaceAll('?', '[^/]');
        return last ? glob : `${glob}/`;
      });
      return new RegExp(`^${source.join('')}$`);
    });
    const parts = file.split('/');
    return parts.some((_, index) => regexps.some((regexp) => regexp.test(parts.slice(0, index + 1).join('/'))));
  }

  const lines = (text: string) =>
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));

  it('matches as Docker does (the check below relies on it)', () => {
    const patterns = ['**/node_modules', 'bench/results', '**/*.log', 'dist'];
    expect(excludedByDocker(patterns, 'services/api/node_modules/x/index.js')).toBe(true);
    expect(excludedByDocker(patterns, 'node_modules/x')).toBe(true);
    expect(excludedByDocker(patterns, 'bench/results/run.json')).toBe(true);
    expect(excludedByDocker(patterns, 'packages/x/bench/results')).toBe(false);
    expect(excludedByDocker(patterns, 'services/api/a.log')).toBe(true);
    expect(excludedByDocker(patterns, 'dist/api.js')).toBe(true);
    expect(excludedByDocker(patterns, 'services/dashboard/dist/index.html')).toBe(false);
    expect(excludedByDocker(patterns, 'distance.ts')).toBe(false);
  });

  it('leaves out of the build context everything git ignores: local secrets, builds, dependencies', async () => {
    const ignored = lines(await read('.gitignore'));
    const excluded = lines(await read('.dockerignore'));
    // Each .gitignore pattern tried where git applies it: a pattern with no inner slash at any
    // depth, one with an inner slash at the root only; a directory's pattern on a file inside.
    const probes = ignored.flatMap((pattern) => {
      const name = pattern.replace(/^\//, '').replace(/\/$/, '').replaceAll('*', 'x');
      const file = pattern.endsWith('/') ? `${name}/file` : name;
      return name.includes('/') || pattern.startsWith('/') ? [file] : [file, `services/api/${file}`];
    });
    expect(probes).toContain('.secrets-key.dev');
    expect(probes.filter((probe) => !excludedByDocker(excluded, probe))).toEqual([]);
    // The key `npm start` writes, wherever the code puts it.
    expect(excludedByDocker(excluded, path.relative(REPO_ROOT, DEVELOPMENT_SECRETS_KEY_FILE))).toBe(true);
  });
});

describe('infra/docker/Dockerfile', () => {
  const stages = () =>
    dockerfile
      .split(/^(?=FROM )/m)
      .filter((block) => block.startsWith('FROM '))
      .map((block) => ({ name: /^FROM \S+ AS (\S+)/.exec(block)?.[1], body: block }));

  it('is multi-stage, and the image it leaves runs as a non-root user', () => {
    const all = stages();
    expect(all.length).toBeGreaterThanOrEqual(3);
    const runtime = all.at(-1)!;
    const user = /^USER (\S+)/m.exec(runtime.body)?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    // The user is set after the last file is copied in, and nothing runs as root after it.
    expect(runtime.body.slice(runtime.body.indexOf('USER ')).match(/^(COPY|RUN|ADD) /m)).toBeNull();
  });

  it('sets NODE_ENV=production in the image it leaves (compose does not pass it: production messages rely on it)', () => {
    expect(stages().at(-1)!.body).toMatch(/^ENV NODE_ENV=production\b/m);
  });

  it('ships dist/ from `npm run build` with production dependencies only, no sources', () => {
    const runtime = stages().at(-1)!.body;
    expect(stages().find((stage) => stage.name === 'build')!.body).toMatch(/^RUN npm run build$/m);
    const prodDeps = stages().find((stage) => stage.name === 'prod-deps')!.body;
    expect(prodDeps).toMatch(/npm ci --omit=dev/);
    const copies = [...runtime.matchAll(/^COPY (.+)$/gm)].map((match) => match[1]!);
    expect(copies).toEqual([
      '--from=prod-deps /app/node_modules ./node_modules',
      '--from=prod-deps /app/package.json ./package.json',
      '--from=build /app/dist ./dist',
      'infra/docker/healthcheck.mjs ./healthcheck.mjs',
    ]);
  });

  it('installs from every workspace manifest, whatever workspaces exist', async () => {
    const manifest = JSON.parse(await read('package.json'));
    expect(manifest.workspaces).toEqual(['packages/*', 'services/*']);
    expect(dockerfile).toMatch(/find packages services -mindepth 2 -maxdepth 2 -name package\.json/);
  });
});

interface Bundle {
  dir: string;
  externals: Set<string>;
  /** Each process's npm packages imported at its start (not by a dynamic import()), by file. */
  importedAtStart: Map<string, Set<string>>;
}

/** A process of the bundle, run with plain node as the image runs it. */
function run(
  file: string,
  args: string[],
  env: Record<string, string>,
  cwd = path.dirname(file),
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [file, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', SECRETS_KEY: testSecretsKey(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitForOutput(process: ReturnType<typeof run>, pattern: RegExp, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(process.output())) {
    if (process.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`no ${pattern} in:\n${process.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the bundle `npm run build` makes (what the image runs)', () => {
  let bundle: Bundle;
  let database: TestDatabase;

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'retention-bundle-'));
    // `npm run build`'s last step, which runs the script through tsx.
    const build = run(
      path.join(REPO_ROOT, 'scripts/bundle.ts'),
      ['--outdir', dir, '--metafile', `${dir}/meta.json`],
      { NODE_OPTIONS: '--import tsx' },
      REPO_ROOT,
    );
    expect([await build.exited, build.output()]).toEqual([0, expect.any(String)]);
    // The bundle resolves npm packages from node_modules beside it, as in the image.
    await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const meta = JSON.parse(await readFile(`${dir}/meta.json`, 'utf8'));
    const externals = new Set<string>();
    const importedAtStart = new Map<string, Set<string>>();
    for (const [file, output] of Object.entries<any>(meta.outputs)) {
      const atStart = new Set<string>();
      for (const imported of output.imports) {
        if (!imported.external) continue;
        externals.add(imported.path);
        if (imported.kind !== 'dynamic-import') atStart.add(imported.path);
      }
      importedAtStart.set(path.basename(file), atStart);
    }
    bundle = { dir, externals, importedAtStart };
    database = await createEmptyDatabase();
  }, 30_000);

  afterAll(async () => {
    await database?.drop();
    if (bundle) await rm(bundle.dir, { recursive: true, force: true });
  });

  it('has a file for every command the image and docker-compose.yml run', async () => {
    const commands = [
      JSON.parse(/^CMD (.+)$/m.exec(dockerfile)![1]!) as string[],
      ...Object.values<any>(compose.services)
        .map((service) => service.command)
        .filter((command) => Array.isArray(command) && command[0] === 'node'),
    ];
    expect(commands.length).toBe(4);
    for (const [, file] of commands) {
      expect(file).toMatch(/^dist\/[a-z]+\.js$/);
      await expect(stat(path.join(bundle.dir, path.basename(file)))).resolves.toBeTruthy();
    }
  });

  it('migrates, as compose runs it (--wait), a PostgreSQL that accepts connections only after a while', async () => {
    const target = await createEmptyDatabase();
    const upstream = new URL(TEST_POSTGRES_URL);
    // Forwards to the test server once listening: a server still coming up until then.
    const late = createServer((socket) => {
      const server = connect(Number(upstream.port || 5432), upstream.hostname);
      socket.on('error', () => server.destroy());
      server.on('error', () => socket.destroy());
      socket.pipe(server).pipe(socket);
    });
    try {
      const port = await freePort();
      const url = new URL(target.url);
      [url.hostname, url.port] = ['127.0.0.1', String(port)];
      const migrate = run(path.join(bundle.dir, 'migrate.js'), compose.services.migrate.command.slice(2), {
        DATABASE_URL: url.toString(),
      });
      await waitForOutput(
        migrate,
        /waiting for PostgreSQL at postgres:\/\/[^ ]*127\.0\.0\.1:\d+\/\S+ \(connect ECONNREFUSED/,
      );
      await new Promise<void>((resolve) => late.listen(port, '127.0.0.1', resolve));
      expect([await migrate.exited, migrate.output()]).toEqual([0, expect.stringContaining('"applied":[')]);
      expect(await target.db('knex_migrations').select('name')).not.toHaveLength(0);
    } finally {
      await new Promise((resolve) => late.close(resolve));
      await target.drop();
    }
  }, 40_000);

  it('imports only Node built-ins and production dependencies of the workspace packages', async () => {
    // Every workspace package's manifest: `npm ci --omit=dev` installs their `dependencies`.
    const workspaces = (
      await Promise.all(
        ['packages', 'services'].map(async (parent) =>
          (await readdir(path.join(REPO_ROOT, parent))).map((name) => `${parent}/${name}/package.json`),
        ),
      )
    ).flat();
    const manifests = await Promise.all(workspaces.map(async (file) => JSON.parse(await read(file))));
    const declared = new Set(manifests.flatMap((manifest) => Object.keys(manifest.dependencies ?? {})));
    const packageOf = (specifier: string) =>
      specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
    const undeclared = [...bundle.externals].filter(
      (specifier) => !isBuiltin(specifier) && !declared.has(packageOf(specifier)),
    );
    expect(undeclared).toEqual([]);
    expect(bundle.externals).toContain('express');
  });

  it('loads stripe, got and nodemailer at their first use, not at each start', () => {
    // A quarter of each start's CPU, in processes most of which never call Stripe, send a
    // webhook or a mail (docs/performance.md, "Test run").
    const lazy = ['stripe', 'got', 'nodemailer'];
    for (const file of ['api.js', 'worker.js', 'cli.js', 'migrate.js']) {
      expect([file, [...bundle.importedAtStart.get(file)!].filter((name) => lazy.includes(name))]).toEqual([file, []]);
    }
    for (const name of lazy) expect(bundle.externals).toContain(name);
  });

  it('migrates an empty database, serves the API with its health endpoints, and stops on SIGTERM', async () => {
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `${redisKeyPrefix(runId())}-bundle`,
    };
    const migrate = run(path.join(bundle.dir, 'migrate.js'), [], env);
    expect(await migrate.exited).toBe(0);
    expect(JSON.parse(migrate.output()).applied.length).toBeGreaterThan(0);

    const port = await freePort();
    const internalPort = await freePort();
    const api = run(path.join(bundle.dir, 'api.js'), [], {
      ...env,
      PORT: String(port),
      API_INTERNAL_PORT: String(internalPort),
    });
    try {
      await waitForOutput(api, /API listening/);
      const healthcheck = (url: string) => run(path.join(REPO_ROOT, 'infra/docker/healthcheck.mjs'), [url], {}).exited;
      expect(await healthcheck(`http://127.0.0.1:${port}/healthz`)).toBe(0);
      expect(await healthcheck(`http://127.0.0.1:${port}/nowhere`)).toBe(1);
      expect(await healthcheck(`http://127.0.0.1:${await freePort()}/healthz`)).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${internalPort}/readyz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/docs`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/stats`)).status).toBe(401);
    } finally {
      api.child.kill('SIGTERM');
    }
    expect(await api.exited).toBe(0);

    const worker = run(path.join(bundle.dir, 'worker.js'), [], { ...env, WORKER_PORT: String(await freePort()) });
    await waitForOutput(worker, /worker started/);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);

    const cli = run(path.join(bundle.dir, 'cli.js'), ['help'], env);
    expect(await cli.exited).toBe(0);
  }, 60_000);
});
