import { register } from 'tsx/esm/api';

const unregister = register();
const { default: globalTeardown } = await import('./global-teardown.ts');
await unregister();

export default globalTeardown;
