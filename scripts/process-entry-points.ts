/**
 * The processes the container image runs, each bundled into <outdir>/<name>.js from its source
 * entry (a path from the repository's root): scripts/bundle-processes.ts builds them, and the
 * test run starts them (packages/testkit/src/process-bundle.ts).
 */
export const PROCESS_ENTRY_POINTS = {
  api: 'services/api/src/main.ts',
  worker: 'services/worker/src/main.ts',
  cli: 'services/cli/src/main.ts',
  migrate: 'packages/db/src/migrate-cli.ts',
} as const;
