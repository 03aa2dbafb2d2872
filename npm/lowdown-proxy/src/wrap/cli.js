// `lowdown-proxy wrap | unwrap | status`: the command line over the wrap module.

import { run, CLIENT_IDS } from './index.js';
import { formatReports } from './report.js';
import { apiClient } from '../api.js';
import { nodeText, reputationLine } from '../mcp/format.js';
import { destinationLines } from '../record/node.js';

/** Help text for the config subcommands. */
export const HELP = `Usage: lowdown-proxy wrap|unwrap|status [options]

  wrap     rewrite the stdio MCP servers of your MCP clients to run through lowdown-proxy
  unwrap   restore them exactly as they were
  status   show, per client and server, whether it is wrapped and what Lowdown has seen of it;
           then where records go (the configured deployment or the local node) and the spool

Options:
  --client ID     only this client (repeatable): ${CLIENT_IDS.join(', ')}
  --config PATH   only this config file (repeatable)
  --dry-run       print the diff of what would change, write nothing
  --actor NAME    record wrapped servers' calls as this actor (wrap)
  --help          show this help

Each rewritten file is replaced atomically; its previous contents are kept in FILE.bak.
Remote (url) servers cannot be wrapped and are listed as such.
`;

const MODES = ['wrap', 'unwrap', 'status'];

/** @param {string[]} args */
function parse(args) {
  /** @type {{mode: 'wrap'|'unwrap'|'status', clients: string[], configs: string[], dryRun: boolean, help?: boolean, actor?: string}} */
  const opts = { mode: /** @type {'wrap'|'unwrap'|'status'} */ (args[0]) /* checked by the caller */, clients: [], configs: [], dryRun: false };
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      if (a.includes('=')) return a.slice(a.indexOf('=') + 1);
      if (i + 1 >= args.length || args[i + 1].startsWith('--')) throw new Error(`${a} needs a value`);
      return args[++i];
    };
    const name = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (name === '--help' || name === '-h') opts.help = true;
    else if (name === '--dry-run') opts.dryRun = true;
    else if (name === '--client') {
      for (const c of value().split(',')) {
        if (!CLIENT_IDS.includes(c)) throw new Error(`unknown client "${c}"; choose from ${CLIENT_IDS.join(', ')}`);
        opts.clients.push(c);
      }
    } else if (name === '--config') opts.configs.push(value());
    else if (name === '--actor') opts.actor = value();
    else throw new Error(`unknown option "${a}"`);
  }
  if (opts.actor !== undefined && !opts.actor) throw new Error('--actor needs a non-empty value');
  return opts;
}

/**
 * Looks up the reputation line of every label; an unreachable API gives one line saying so.
 * @param {string[]} labels
 * @param {Record<string, string|undefined>} env
 * @returns {Promise<{lines: Map<string, string>, note: string|null}>}
 */
export async function reputationLines(labels, env = process.env) {
  const lines = new Map();
  if (labels.length === 0) return { lines, note: null };
  const api = apiClient({ env, timeoutMs: 3000 });
  for (const label of new Set(labels)) {
    try {
      lines.set(label, reputationLine(await api.request('GET', `/api/reputation/${encodeURIComponent(label)}`)));
    } catch (caught) {
      const e = /** @type {import('../api.js').ApiError} */ (caught); // the client throws only these
      if (e.type === 'unreachable' || e.type === 'timeout') return { lines, note: `Reputation not shown: ${e.message}` };
      lines.set(label, e.status === 404 ? 'no interactions recorded yet' : `reputation unavailable: ${e.message}`);
    }
  }
  return { lines, note: null };
}

/**
 * What the deployment records go to has of this machine's node (its records, targets, days),
 * for `status`; nothing when it does not answer (the destination line says where that is).
 * @param {Record<string, string|undefined>} env
 * @returns {Promise<string[]>}
 */
export async function contributionLines(env = process.env) {
  const api = apiClient({ env, timeoutMs: 3000 });
  if (!api.nodeId) return [];
  try {
    return nodeText(await api.request('GET', `/api/node/${encodeURIComponent(api.nodeId)}`)).split('\n');
  } catch {
    return [];
  }
}

/**
 * Runs a config subcommand. Sets and returns the exit code: 0 done (status: always, even
 * with the API down), 1 a file could not be processed (it was left untouched), 2 bad usage.
 * @param {string[]} args the full argument list starting with the subcommand word,
 *   e.g. ['wrap', '--dry-run']
 * @param {{stdout?: {write: Function}, stderr?: {write: Function}, home?: string, platform?: string, env?: Record<string, string|undefined>, cwd?: string}} [io]
 * @returns {Promise<number>}
 */
export async function main(args, io = {}) {
  // Accept a caller that passes only the words after the subcommand: recover the word from
  // this process's own command line when the rest matches it exactly.
  const word = process.argv[2];
  if (!MODES.includes(args[0]) && MODES.includes(word) && process.argv.slice(3).join('\0') === args.join('\0')) args = [word, ...args];
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  let opts;
  try {
    if (!MODES.includes(args[0])) throw new Error('expected wrap, unwrap or status');
    opts = parse(args);
  } catch (e) {
    stderr.write(`lowdown-proxy: ${/** @type {Error} */ (e).message}\n\n${HELP}`);
    return (process.exitCode = 2);
  }
  if (opts.help) {
    stdout.write(HELP);
    return (process.exitCode = 0);
  }
  const where = { home: io.home, platform: io.platform, env: io.env, cwd: io.cwd };
  const reports = await run(opts.mode, { ...where, ...opts });
  let reputation;
  let note = null;
  if (opts.mode === 'status') {
    const labels = reports.flatMap((r) => r.servers.flatMap((s) => (s.label ? [s.label] : [])));
    ({ lines: reputation, note } = await reputationLines(labels, io.env ?? process.env));
  }
  stdout.write(formatReports(opts.mode, reports, { dryRun: opts.dryRun, reputation }));
  if (note) stdout.write(`${note}\n`);
  if (opts.mode === 'status') {
    const env = io.env ?? process.env;
    stdout.write(`\n${[...destinationLines(env), ...(await contributionLines(env))].join('\n')}\n`);
  }
  const failed = reports.some((r) => r.status === 'error');
  return (process.exitCode = failed && opts.mode !== 'status' ? 1 : 0);
}
