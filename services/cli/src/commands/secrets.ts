import { resealSecrets } from '@retention/domain';
import { defineCommand } from '../command.js';

export const secretsCommands = [
  defineCommand({
    name: 'secrets reseal',
    summary:
      'Seal every stored secret with SECRETS_KEY, opening each with SECRETS_KEY or SECRETS_KEY_PREVIOUS (the last step of a key rotation); prints counts, never a secret',
    options: {},
    run: (context) => resealSecrets(context.db(), context.config.secretsKey),
  }),
];
