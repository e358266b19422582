// Bundles each process into one file under dist/ for the container images. Workspace
// packages (@retention/*) are compiled in; everything from npm stays an import.
import { build } from 'esbuild';

const entryPoints = {
  api: 'services/api/src/main.ts',
  worker: 'services/worker/src/main.ts',
  cli: 'services/cli/src/main.ts',
  migrate: 'packages/db/src/migrate-cli.ts',
};

await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
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
