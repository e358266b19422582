import path from 'node:path';
import { PROCESS_ENTRY_POINTS } from '../../../scripts/process-entry-points.js';
import { REPO_ROOT } from './environment.js';

/**
 * Where global setup tells the test workers (and so the tests) it bundled the processes of the
 * run: the API, the worker, the CLI and migrate, as the container image runs them
 * (scripts/bundle-processes.ts), built from the checkout at the start of each run.
 */
export const BUNDLE_DIR_VARIABLE = 'RETENTION_TEST_BUNDLE_DIR';

const BUNDLE_OF_ENTRY = new Map<string, string>(
  Object.entries(PROCESS_ENTRY_POINTS).map(([name, entry]) => [entry, `${name}.js`]),
);

/**
 * The node arguments that start one of the repository's entry points (a path from its root, or
 * absolute): the run's bundle of it when it is a bundled process, where a start loads one file
 * rather than some 900 modules through tsx, three times slower (docs/performance.md, "Test run");
 * anything else (npm start's scripts/start.ts, an example, a test's fixture) through tsx, as
 * `npm run` would.
 */
export function entryArguments(entry: string): string[] {
  const relative = path.relative(REPO_ROOT, path.resolve(REPO_ROOT, entry));
  const bundled = BUNDLE_OF_ENTRY.get(relative);
  const dir = process.env[BUNDLE_DIR_VARIABLE];
  if (bundled !== undefined && dir) return [path.join(dir, bundled)];
  return ['--import', 'tsx', path.join(REPO_ROOT, relative)];
}
