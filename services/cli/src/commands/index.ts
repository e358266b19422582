import type { Command } from '../command.js';
import { campaignCommands } from './campaign.js';
import { cancelSessionCommands } from './cancel-session.js';
import { demoCommands } from './demo.js';
import { fixtureCommands } from './fixtures.js';
import { fxCommands } from './fx.js';
import { processorCommands } from './processor.js';
import { reactivationCommands } from './reactivation.js';
import { secretsCommands } from './secrets.js';
import { tokenCommands } from './token.js';
import { trialCommands } from './trial.js';
import { userCommands } from './user.js';
import { winbackCommands } from './winback.js';
import { webhookCommands } from './webhook.js';
import { workspaceCommands } from './workspace.js';

export const COMMANDS: readonly Command[] = [
  ...workspaceCommands,
  ...userCommands,
  ...tokenCommands,
  ...webhookCommands,
  ...fxCommands,
  ...campaignCommands,
  ...cancelSessionCommands,
  ...trialCommands,
  ...reactivationCommands,
  ...winbackCommands,
  ...fixtureCommands,
  ...demoCommands,
  ...processorCommands,
  ...secretsCommands,
];
