// `npm run build` (after the type check): bundles each process into one file under dist/,
// which is what the container image runs (`node dist/api.js`, ...). Workspace packages
// (@retention/*) are compiled in; everything from npm stays an import, resolved from the
// image's production node_modules, so every such package must be a `dependencies` entry
// of a workspace package (test/deployment.test.ts checks it).
//
// The built dashboard (services/dashboard/dist, made by `npm run build:dashboard`, which
// `npm run build` runs first) is copied to dist/dashboard, where dist/api.js serves it.
//
//   node scripts/bundle.mjs [--outdir dist] [--metafile FILE]
import { cp, rm, stat, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const ENTRY_POINTS = {
  api: 'services/api/src/main.ts',
  worker: 'services/worker/src/main.ts',
  cli: 'services/cli/src/main.ts',
  migrate: 'packages/db/src/migrate-cli.ts',
};

const { values } = parseArgs({
  options: { outdir: { type: 'string', default: 'dist' }, metafile: { type: 'string' } },
});

const result = await build({
  entryPoints: ENTRY_POINTS,
  outdir: values.outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node26',
  sourcemap: true,
  metafile: values.metafile !== undefined,
  logLevel: 'info',
  plugins: [
    {
      name: 'external-npm-packages',
      setup(pluginBuild) {
        pluginBuild.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@retention/') ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});

if (values.metafile) await writeFile(values.metafile, JSON.stringify(result.metafile));

const dashboardBuild = 'services/dashboard/dist';
await rm(`${values.outdir}/dashboard`, { recursive: true, force: true });
if (await stat(`${dashboardBuild}/index.html`).catch(() => null)) {
  await cp(dashboardBuild, `${values.outdir}/dashboard`, { recursive: true });
} else {
  // `npm run build` builds it first; a bare bundle (the deployment test's) serves a 503 page.
  process.stderr.write(
    `warning: ${dashboardBuild} is missing, so the bundle has no dashboard (npm run build:dashboard)\n`,
  );
}
