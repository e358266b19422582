export * from './address-guard.js';
export * from './deliveries.js';
export * from './dns-resolver.js';
export * from './delivery-log.js';
export * from './endpoints.js';
export * from './permissions.js';
export * from './send-test.js';
export * from './sender.js';
