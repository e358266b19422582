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
};

export default config;
