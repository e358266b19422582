import { ConfigError, loadConfig, localBaseUrlWarning, ServiceError, type Config } from '@retention/core';
import { createDb, describeConnectionFailure, isConnectionError, isDatabaseSetupError, type Db } from '@retention/db';
import { announceTokenChange, createRedis, waitForRedis, type Redis } from '@retention/runtime';
import { COMMANDS } from './commands/index.js';
import { FailedResult, UsageError, usageOf, type CliContext, type Command } from './command.js';
import { readInputFile } from './input-file.js';

/**
 * Runs one CLI invocation: prints one JSON document on stdout and returns 0, or prints
 * `{"error":{"type","message"}}` on stderr and returns 1 (2 for a usage error). A command whose
 * result is a failure it was asked to report (FailedResult) prints that result on stdout too.
 */

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * A token change is committed, but the API processes could not be told: one that cached the
 * token may go on accepting it (for at most its cache's lifetime, 10 s).
 */
class TokenChangeNotAnnounced extends Error {}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let db: Db | undefined;
  let redis: Redis | undefined;
  try {
    const help = helpFor(argv);
    if (help) {
      io.stdout(`${JSON.stringify(help, null, 2)}\n`);
      return 0;
    }
    const { command, rest } = findCommand(argv);
    const parsed = parseOptions(command, rest);
    if (parsed === HELP) {
      io.stdout(`${JSON.stringify(helpOf([command]).commands[0], null, 2)}\n`);
      return 0;
    }
    const { options, positionals } = parsed;
    const config = loadConfig(io.env);
    const context: CliContext = {
      config,
      db: () => (db ??= openDb(config)),
      readFile: readInputFile,
      async announceTokenChange() {
        try {
          redis ??= createRedis(config.redisUrl, 'command', 'retention-cli');
          await waitForRedis(redis);
          await announceTokenChange(redis, config.redisKeyPrefix);
        } catch (error) {
          throw new TokenChangeNotAnnounced(
            `${describeConnectionFailure('Redis', config.redisUrl, error, io.env)} The change is saved, but API processes ` +
              'that cached this token may go on using its old state for up to 10 s. Run the command again once Redis is back.',
          );
        }
      },
    };
    const output = await command.run(context, options, positionals);
    io.stdout(`${JSON.stringify(output, null, 2)}\n`);
    // After the output, and only once it is printed: on a failure stderr holds the error document alone.
    const warning = command.printsLinks ? localBaseUrlWarning(config.baseUrl, io.env) : null;
    if (warning) io.stderr(`${JSON.stringify({ warning })}\n`);
    return 0;
  } catch (error) {
    if (error instanceof FailedResult) io.stdout(`${JSON.stringify(error.output, null, 2)}\n`);
    const { code, type, message } = exitStatusFor(error, io.env);
    io.stderr(`${JSON.stringify({ error: { type, message } })}\n`);
    return code;
  } finally {
    redis?.disconnect();
    await db?.destroy();
  }
}

function openDb(config: Config): Db {
  return createDb(config.databaseUrl, { poolMax: 4, applicationName: 'retention-cli' });
}

const HELP_FLAGS = new Set(['--help', '-h']);
/** What parseOptions returns for `<command> --help` (or `-h`) where an option or an argument could be. */
const HELP = Symbol('help');

function helpOf(commands: readonly Command[]): { commands: Array<{ usage: string; summary: string }> } {
  return { commands: commands.map((command) => ({ usage: usageOf(command), summary: command.summary })) };
}

/**
 * `help`, `--help` and `-h` alone list every command; a group's words followed by one of the
 * flags (`token --help`) list that group's. A command's own `--help` is parseOptions' to find,
 * since it could be an option's value (`--name -h`).
 */
function helpFor(argv: string[]) {
  if (argv.length === 1 && (argv[0] === 'help' || HELP_FLAGS.has(argv[0]!))) return helpOf(COMMANDS);
  if (argv.length === 2 && HELP_FLAGS.has(argv[1]!)) {
    const group = COMMANDS.filter((command) => command.name.startsWith(`${argv[0]} `));
    if (group.length > 0) return helpOf(group);
  }
  return null;
}

function findCommand(argv: string[]): { command: Command; rest: string[] } {
  const words = argv.slice(0, 2).join(' ');
  const command = COMMANDS.find((candidate) => candidate.name === words);
  if (command) return { command, rest: argv.slice(2) };
  const known = COMMANDS.map(usageOf).join('\n  ');
  if (argv.length === 0) throw new UsageError(`Usage: cli <command> [options]. Commands:\n  ${known}`);
  const group = COMMANDS.filter((candidate) => candidate.name.startsWith(`${argv[0]} `));
  if (group.length > 0) {
    throw new UsageError(`Unknown command "${words}". ${argv[0]} commands:\n  ${group.map(usageOf).join('\n  ')}`);
  }
  throw new UsageError(`Unknown command "${argv[0] ?? ''}". Commands:\n  ${known}`);
}

/**
 * `--name value` and `--name=value`. A value may start with a dash (`--amount -5` reaches
 * the amount parser and is refused there as invalid_param), unless it is another option of
 * the command, which means the value was forgotten.
 */
function parseOptions(command: Command, args: string[]) {
  const usage = `Usage: ${usageOf(command)}`;
  const values = new Map<string, string | true>();
  const positionals: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    // Here, where no option is waiting for its value: `token create --help`, `--name N -h`.
    if (HELP_FLAGS.has(arg)) return HELP;
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
    const spec = command.options[name];
    if (!spec) throw new UsageError(`Unknown option --${name}. ${usage}`);
    if (values.has(name)) throw new UsageError(`--${name} is given more than once. ${usage}`);
    if (spec.flag) {
      if (equals !== -1) throw new UsageError(`--${name} takes no value. ${usage}`);
      values.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (equals !== -1) {
      value = arg.slice(equals + 1);
    } else {
      const next = args[index + 1];
      if (next === '--help') return HELP;
      const nextIsOption =
        next !== undefined && next.startsWith('--') && next.slice(2).split('=')[0]! in command.options;
      if (next !== undefined && !nextIsOption) {
        value = next;
        index += 1;
      }
    }
    if (value === undefined) throw new UsageError(`--${name} needs a value. ${usage}`);
    values.set(name, value);
  }
  const expected = command.positionals ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(`Expected ${expected.length ? expected.join(' ') : 'no positional arguments'}. ${usage}`);
  }
  const options: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(command.options)) {
    const value = values.get(name);
    if (spec.flag) options[name] = value === true;
    else if (value === undefined) {
      if (spec.required) throw new UsageError(`--${name} is required. ${usage}`);
    } else options[name] = spec.parse(value as string, name);
  }
  return { options, positionals };
}

function exitStatusFor(error: unknown, env: CliIo['env']): { code: number; type: string; message: string } {
  if (error instanceof UsageError) return { code: 2, type: 'invalid_param', message: error.message };
  if (error instanceof ServiceError) return { code: 1, type: error.type, message: error.message };
  if (error instanceof FailedResult) return { code: 1, type: error.type, message: error.message };
  if (error instanceof ConfigError) return { code: 1, type: 'invalid_param', message: error.message };
  if (error instanceof TokenChangeNotAnnounced) return { code: 1, type: 'redis_error', message: error.message };
  // Unreachable, missing, refusing the login, or never migrated: all say what to do next.
  if (isConnectionError(error) || isDatabaseSetupError(error)) {
    return {
      code: 1,
      type: 'database_error',
      message: describeConnectionFailure('PostgreSQL', env.DATABASE_URL, error, env),
    };
  }
  return { code: 1, type: 'internal_error', message: error instanceof Error ? error.message : String(error) };
}
