import { setFxRate } from '@retention/domain';
import { defineCommand } from '../command.js';
import { currency, fxRate } from '../options.js';

export const fxCommands = [
  defineCommand({
    name: 'fx set',
    summary: 'Set the rate of a currency, in units per US dollar, used to normalise stats',
    options: { currency: currency().required(), 'per-usd': fxRate().required() },
    run: (context, options) => setFxRate(context.db(), { currency: options.currency, per_usd: options['per-usd'] }),
  }),
];
