// Jest loads global setup outside its module mapper, so the TypeScript behind it is loaded
// through tsx's loader instead.
import { register } from 'tsx/esm/api';

const unregister = register();
const { default: globalSetup } = await import('./global-setup.ts');
await unregister();

export default globalSetup;
