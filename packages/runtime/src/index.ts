export * from './logger.js';
export * from './redis.js';
export * from './shutdown.js';
