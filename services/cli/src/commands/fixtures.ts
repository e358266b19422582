import { loadFixtures, parseFixtureText } from '@retention/domain';
import { defineCommand } from '../command.js';

export const fixtureCommands = [
  defineCommand({
    name: 'fixtures load',
    summary: 'Load a fixture file in one transaction; prints the ids and secrets it created',
    options: {},
    positionals: ['FILE.json'],
    run: async (context, _options, [file]) =>
      loadFixtures(context.db(), context.config.secretsKey, parseFixtureText(await context.readFile(file!))),
  }),
];
