#!/usr/bin/env node
/** The operator CLI: `npm run --silent cli -- <command> [options]` (operator-cli.md). */
import { withDevelopmentSecretsKey } from '@retention/runtime';
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  // Run with `npm run cli` beside `npm start`: its development key when none is set, so the CLI
  // opens what the demo sealed. Run any other way (the image's dist/cli.js, a test that
  // spawns this file), the environment alone: a missing SECRETS_KEY stops it.
  env: process.env.npm_lifecycle_event === 'cli' ? withDevelopmentSecretsKey(process.env) : process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
