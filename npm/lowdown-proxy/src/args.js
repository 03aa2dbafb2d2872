// Command-line options of `lowdown-proxy` (the stdio proxy part).

import { InteractionRecord } from './contract.js';

/** The help text printed by `--help`. */
export const HELP = `Usage: lowdown-proxy [options] -- <command> [args...]

Runs an MCP stdio server and relays its stdin/stdout unchanged, recording what happens
(outcome, latency, version; never arguments or results) to the Lowdown API.

Options:
  --actor NAME          who is acting (default: anonymous)
  --target LABEL        what is being used (default: derived from the command, e.g. npm:pkg)
  --source KIND         organic | seeded | synthetic (default: organic)
  --test                same as --source synthetic
  --watch-log FILE      quote new matching lines of FILE into tool results (repeatable;
                        %VAR%, $VAR, \${VAR} and a leading ~ are expanded)
  --log-pattern REGEX   case-insensitive pattern for --watch-log lines
                        (default: \\b(error|exception|fatal|uncaught|unhandled|failed)\\b)
  --api-url URL         Lowdown API base URL (default: $LOWDOWN_API_URL, else config's, else the local node)
  --help                show this help
  --version             print the version

Environment:
  LOWDOWN_API_URL   API base URL          LOWDOWN_HOME   state dir (default ~/.lowdown)
  LOWDOWN_RECORD=0  relay only, record nothing
  LOWDOWN_AUTOSTART=0  never start the local node
  LOWDOWN_DEBUG=1   diagnostics on stderr

Also: lowdown-proxy wrap|unwrap|status  (rewrite MCP client configs to run through the proxy)
      lowdown-proxy config set api-url URL  (join a shared deployment; see config --help)
`;

const SOURCES = new Set(InteractionRecord.source.values);
const SOURCE_WORDS = `${InteractionRecord.source.values.slice(0, -1).join(', ')} or ${InteractionRecord.source.values.at(-1)}`;
const VALUED = new Set(['--actor', '--target', '--source', '--watch-log', '--log-pattern', '--api-url']);

/** A bad command line; `message` says what is wrong. */
export class UsageError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * @typedef {{help: boolean, version: boolean, actor?: string, target?: string, source: string,
 *   watchLogs: string[], logPattern?: string, apiUrl?: string, command?: string, commandArgs: string[]}} ProxyArgs
 */

/**
 * Parses the proxy's arguments. Options come first; `--` or the first non-option word
 * starts the command, and everything after it belongs to the command untouched.
 * @param {string[]} argv arguments after the program name
 * @returns {ProxyArgs}
 * @throws {UsageError}
 */
export function parseArgs(argv) {
  /** @type {ProxyArgs} */
  const opts = { help: false, version: false, source: 'organic', watchLogs: [], commandArgs: [] };
  let i = 0;
  let sourceSet = false;
  let testSet = false;
  for (; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') {
      i += 1;
      break;
    }
    if (!arg.startsWith('--')) break;
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (name === '--help') opts.help = true;
    else if (name === '--version') opts.version = true;
    else if (name === '--test') testSet = true;
    else if (VALUED.has(name)) {
      let value;
      if (eq !== -1) value = arg.slice(eq + 1);
      else {
        if (i + 1 >= argv.length) throw new UsageError(`${name} needs a value`);
        value = argv[++i];
      }
      if (value === '') throw new UsageError(`${name} needs a non-empty value`);
      if (name === '--actor') opts.actor = value;
      else if (name === '--target') opts.target = value;
      else if (name === '--source') {
        if (!SOURCES.has(value)) throw new UsageError(`--source must be ${SOURCE_WORDS}, not "${value}"`);
        opts.source = value;
        sourceSet = true;
      } else if (name === '--watch-log') opts.watchLogs.push(value);
      else if (name === '--log-pattern') opts.logPattern = value;
      else if (name === '--api-url') opts.apiUrl = value;
    } else {
      throw new UsageError(`unknown option ${name} (see --help)`);
    }
  }
  if (testSet) {
    if (sourceSet && opts.source !== 'synthetic') throw new UsageError('--test conflicts with --source ' + opts.source);
    opts.source = 'synthetic';
  }
  if (i < argv.length) {
    opts.command = argv[i];
    opts.commandArgs = argv.slice(i + 1);
  }
  if (!opts.help && !opts.version && opts.command === undefined) {
    throw new UsageError('no command given: lowdown-proxy [options] -- <command> [args...]');
  }
  return opts;
}
