import { availableParallelism } from 'node:os';
import type { Config } from 'jest';

// Every workspace package maps to its TypeScript source, so tests never need a build.
const workspacePackages = ['core', 'db', 'domain', 'processors', 'runtime', 'sdk', 'testkit'];

const config: Config = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023', parser: { syntax: 'typescript' } } }],
  },
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    ...Object.fromEntries(
      workspacePackages.map((name) => [`^@retention/${name}$`, `<rootDir>/packages/${name}/src/index.ts`]),
    ),
  },
  testMatch: ['<rootDir>/{packages,services}/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/packages/testkit/src/global-setup.mjs',
  globalTeardown: '<rootDir>/packages/testkit/src/global-teardown.mjs',
  testTimeout: 30_000,
  // The suites wait on servers, child processes, Redis, PostgreSQL and a browser far more than
  // they compute, so more run well side by side than there are cores, where jest's default (one
  // fewer than the cores) would run them one at a time on two: measured on the 2-core CI
  // machine, 570 s in band against 385 s with two workers, and later (a larger suite, a slower
  // day) 829 s with two against 772 s with three, every suite passing (docs/performance.md).
  maxWorkers: availableParallelism() + 1,
  // How long a jest worker has to exit once the run is over before it is killed with "A worker
  // process has failed to exit gracefully" (500 ms by default). That line came in one full run of
  // two, on cores still busy with the run's end, while every worker's last suite had left no
  // handle beyond those it had after its first (process.getActiveResourcesInfo() at each
  // suite's teardown, docs/performance.md): slow to exit, not held open. A handle a test did
  // leak would still hold a worker past this, and the line would still say so.
  workerGracefulExitTimeout: 5_000,
};

export default config;
