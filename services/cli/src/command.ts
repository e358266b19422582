import type { Db } from '@retention/db';
import type { Config } from '@retention/core';
import type { OptionSpec } from './options.js';

/** What a command may use: configuration and connections opened on first use. */
export interface CliContext {
  config: Config;
  db(): Db;
  /** Reads a file named on the command line. */
  readFile(path: string): Promise<string>;
  /** Tells the API processes that a token changed (they cache token look-ups). */
  announceTokenChange(): Promise<void>;
}

type OptionsSpec = Record<string, OptionSpec<unknown>>;

/** A flag is true when given; a required option is always there; others may be undefined. */
type ParsedOptions<O extends OptionsSpec> = {
  [K in keyof O]: O[K] extends { flag: true }
    ? boolean
    : O[K] extends OptionSpec<infer T> & { required: true }
      ? T
      : O[K] extends OptionSpec<infer T>
        ? T | undefined
        : never;
};

export interface Command<O extends OptionsSpec = OptionsSpec> {
  /** Words of the command, as typed: `token create`. */
  name: string;
  summary: string;
  options: O;
  /** Positional arguments, by name (`fixtures load FILE`). */
  positionals?: string[];
  run(context: CliContext, options: ParsedOptions<O>, positionals: string[]): Promise<unknown>;
  /** Its output holds links made from BASE_URL (webhook_url, invitation and reset links, the demo's curl line). */
  printsLinks?: boolean;
}

/**
 * A malformed command line (exit 2). The runner raises it for unknown, missing or repeated
 * options; a command raises it for a rule its option specs cannot express, such as "exactly
 * one of these two".
 */
export class UsageError extends Error {}

/**
 * A command that ran, whose result the caller asked to hear of as a failure (`webhook test
 * --fail` when the receiver did not answer 2xx): the runner prints `output` on stdout as for a
 * success, then the error document (`type`, `message`) on stderr, and exits 1.
 */
export class FailedResult extends Error {
  constructor(
    readonly output: unknown,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** Keeps each command's option types tied to its handler. */
export function defineCommand<O extends OptionsSpec>(command: Command<O>): Command {
  return command;
}

export function usageOf(command: Command): string {
  const parts = [command.name, ...(command.positionals ?? [])];
  for (const [name, spec] of Object.entries(command.options)) {
    const text = spec.flag ? `--${name}` : `--${name} ${spec.placeholder}`;
    parts.push(spec.required ? text : `[${text}]`);
  }
  return parts.join(' ');
}
