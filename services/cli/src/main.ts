#!/usr/bin/env node
/** The operator CLI: `npm run --silent cli -- <command> [options]` (operator-cli.md). */
import { withDevelopmentSecretsKey } from '@retention/runtime';
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  // Beside `npm start`, its development key: what the demo sealed, the CLI opens.
  env: withDevelopmentSecretsKey(process.env),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
