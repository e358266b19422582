import type { Command } from '../command.js';
import { fixtureCommands } from './fixtures.js';
import { fxCommands } from './fx.js';
import { tokenCommands } from './token.js';
import { userCommands } from './user.js';
import { webhookCommands } from './webhook.js';
import { workspaceCommands } from './workspace.js';

export const COMMANDS: readonly Command[] = [
  ...workspaceCommands,
  ...userCommands,
  ...tokenCommands,
  ...webhookCommands,
  ...fxCommands,
  ...fixtureCommands,
];
