#!/usr/bin/env node
/** The operator CLI: `npm run --silent cli -- <command> [options]` (operator-cli.md). */
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
