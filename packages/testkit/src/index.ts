export * from './cli.js';
export * from './database.js';
export * from './environment.js';
export * from './hooks.js';
export * from './processes.js';
export * from './signing-secrets.js';
export * from './wait.js';
