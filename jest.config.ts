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
};

export default config;
