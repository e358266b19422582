export * from './fixtures/load.js';
export type { FixtureFile, FixtureResult } from './fixtures/schema.js';
export * from './fx.js';
export * from './outbox.js';
export * from './tags.js';
export * from './tokens.js';
export * from './users.js';
export * from './workspaces.js';
export * from './stats.js';
