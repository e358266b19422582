import {
  DEMO_DEFAULT_CUSTOMERS,
  DEMO_DEFAULT_SEED,
  DEMO_MAX_CUSTOMERS,
  MIN_DEMO_CUSTOMERS,
  seedDemo,
} from '@retention/domain';
import { defineCommand } from '../command.js';
import { integer } from '../options.js';

export const demoCommands = [
  defineCommand({
    name: 'demo seed',
    printsLinks: true,
    summary: `Create a demo workspace with a realistic business's data and a fresh API token (default ${DEMO_DEFAULT_CUSTOMERS} customers, seed ${DEMO_DEFAULT_SEED})`,
    options: {
      customers: integer('N', MIN_DEMO_CUSTOMERS, DEMO_MAX_CUSTOMERS).optional(),
      seed: integer('S', 0, 0xffff_ffff).optional(),
    },
    run: (context, options) =>
      seedDemo(context.db(), {
        baseUrl: context.config.baseUrl,
        secretsKey: context.config.secretsKey,
        ...(options.customers !== undefined && { customers: options.customers }),
        ...(options.seed !== undefined && { seed: options.seed }),
      }),
  }),
];
