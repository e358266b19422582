// Bundles each process into one file (esbuild): what the container image runs (scripts/bundle.ts,
// `npm run build`), and what the test run starts (packages/testkit/src/process-bundle.ts), so
// every process a test starts loads one file rather than hundreds of TypeScript modules through
// tsx. Workspace packages (@retention/*) are compiled in; everything from npm stays an import,
// resolved from the node_modules beside the bundle, so every such package must be a
// `dependencies` entry of a workspace package (test/deployment.test.ts checks it).
//
// The built dashboard (services/dashboard/dist, made by `npm run build:dashboard`) is copied to
// <outdir>/dashboard, where <outdir>/api.js serves it.
import { cp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { PROCESS_ENTRY_POINTS } from './process-entry-points.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface BundleOptions {
  outdir: string;
  /** Where to write esbuild's metafile (the imports of each output), if anywhere. */
  metafile?: string | undefined;
  /** No summary of the output files (the test run's global setup). */
  quiet?: boolean;
  /** These processes only (npm start's API and worker); all four by default. */
  only?: ReadonlyArray<keyof typeof PROCESS_ENTRY_POINTS>;
  /**
   * <outdir>/dashboard a link to services/dashboard/dist rather than a copy: npm start's bundle,
   * which serves the checkout's build as it is rebuilt, as the API run from source does.
   */
  linkDashboard?: boolean;
}

/** Writes <outdir>/{api,worker,cli,migrate}.js and copies (or links) the built dashboard beside them. */
export async function bundleProcesses({
  outdir: givenOutdir,
  metafile,
  quiet = false,
  only,
  linkDashboard = false,
}: BundleOptions): Promise<void> {
  const outdir = path.resolve(givenOutdir);
  const entryPoints = only
    ? Object.fromEntries(only.map((name) => [name, PROCESS_ENTRY_POINTS[name]]))
    : PROCESS_ENTRY_POINTS;
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node26',
    sourcemap: true,
    metafile: metafile !== undefined,
    logLevel: quiet ? 'warning' : 'info',
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
  if (metafile) await writeFile(metafile, JSON.stringify(result.metafile));

  const dashboardBuild = path.join(REPO_ROOT, 'services/dashboard/dist');
  await rm(path.join(outdir, 'dashboard'), { recursive: true, force: true });
  if (linkDashboard) {
    await symlink(dashboardBuild, path.join(outdir, 'dashboard'), 'junction'); // a junction: Windows, no administrator
  } else if (await stat(path.join(dashboardBuild, 'index.html')).catch(() => null)) {
    await cp(dashboardBuild, path.join(outdir, 'dashboard'), { recursive: true });
  } else {
    // `npm run build` builds it first; a bare bundle (the deployment test's) serves a 503 page.
    process.stderr.write(
      'warning: services/dashboard/dist is missing, so the bundle has no dashboard (npm run build:dashboard)\n',
    );
  }
}
