export * from './health.js';
export * from './logger.js';
export * from './metrics.js';
export * from './operational-server.js';
export * from './redis.js';
export * from './shutdown.js';
export * from './throttled-warn.js';
export * from './token-epoch.js';
