// The wrap module: find MCP client configs, and wrap, unwrap or report their servers.
// The CLI (`lowdown-proxy wrap|unwrap|status`) and the editor extension both call this.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { innerCommand, wrappedCommand, applyEdits } from './entry.js';
import { configLocations, serverTables, clientOfPath, CLIENT_IDS, FOLDER_FILE } from './clients.js';
import { formatOf } from './formats.js';
import { readConfig, writeConfigAtomic, ConfigError } from './fsio.js';
import { unifiedDiff } from './diff.js';
import { targetLabel, labelInArgs } from './label.js';

export { CLIENT_IDS, CLIENT_NAMES } from './clients.js';
export { ConfigError } from './fsio.js';
export { MARKER_KEY } from './entry.js';

/**
 * Where to look: defaults to this machine and process; tests and the extension inject them.
 * @typedef {object} Where
 * @property {string} [home] home directory (default os.homedir())
 * @property {string} [platform] 'darwin' | 'win32' | 'linux' (default process.platform)
 * @property {Record<string, string|undefined>} [env] environment (default process.env)
 * @property {string} [cwd] project directory for project-scoped files (default process.cwd())
 */

/**
 * The config files to act on: every known location of the chosen clients, or exactly the
 * given paths.
 * @param {Where & {clients?: string[], configs?: string[]}} opts
 * @returns {{client: string, path: string, scope: string, explicit: boolean}[]}
 */
export function locateConfigs(opts = {}) {
  if (opts.configs && opts.configs.length) {
    return opts.configs.map((p) => ({ client: opts.clients?.length === 1 ? opts.clients[0] : clientOfPath(p), path: p, scope: 'file', explicit: true }));
  }
  const where = {
    home: opts.home ?? os.homedir(),
    platform: opts.platform ?? process.platform,
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? process.cwd(),
  };
  const wanted = opts.clients?.length ? new Set(opts.clients) : new Set(CLIENT_IDS);
  return configLocations(where)
    .filter((l) => wanted.has(l.client))
    .flatMap((l) => (l.folder ? folderFiles(l) : [{ ...l, explicit: false }]));
}

/**
 * What processConfig says of one server entry.
 * @typedef {{table: string, name: string, state: string, action: string, label: string|null, reason?: string}} ServerRow
 */
/**
 * What processConfig says of one file.
 * @typedef {{client: string, path: string, scope: string, servers: ServerRow[]} & (
 *   {status: 'missing' | 'unchanged'} | {status: 'error', error: {type: string, message: string}}
 *   | {status: 'would_change', diff: string} | {status: 'written', diff: string, backup: string})} ConfigReport
 */
/** @typedef {{client: string, path: string, scope: string, explicit?: boolean, folder?: boolean}} ConfigLocation */

// The config files in a folder location, by name; the folder itself (reported `missing`)
// when it holds none.
/** @param {ConfigLocation} loc */
function folderFiles(loc) {
  /** @type {string[]} */
  let names = [];
  try {
    names = fs.readdirSync(loc.path, { withFileTypes: true }).filter((e) => !e.isDirectory() && FOLDER_FILE.test(e.name)).map((e) => e.name).sort();
  } catch {
    // missing or unreadable: nothing in it to wrap
  }
  if (names.length === 0) return [{ ...loc, explicit: false }];
  return names.map((name) => ({ client: loc.client, path: path.join(loc.path, name), scope: loc.scope, explicit: false }));
}

/**
 * Wraps, unwraps or inspects one config file.
 *
 * The result says, per server (`table` is `mcpServers`, `servers` or `project DIR`):
 * `state` before, `action` taken (`wrap`, `unwrap` or `none`), `label` and `reason`.
 * `status` is `missing`, `error` (with `error: {type, message}`; the file is untouched),
 * `unchanged`, `would_change` (dry run, with `diff`) or `written` (with `diff` and `backup`).
 * @param {ConfigLocation} loc
 * @param {{mode: 'wrap'|'unwrap'|'status', dryRun?: boolean, actor?: string, cwd?: string, env?: Record<string, string|undefined>,
 *   hooks?: {beforeCommit?: () => Promise<void>|void}, label?: (command: string, args: string[], where: {cwd?: string, env?: Record<string, string|undefined>}) => Promise<string|null>}} opts
 * @returns {Promise<ConfigReport>}
 */
export async function processConfig(loc, opts) {
  const report = { client: loc.client, path: loc.path, scope: loc.scope, servers: /** @type {ServerRow[]} */ ([]) };
  /** @type {(e: {type?: string, message: string}) => ConfigReport} */
  const fail = (e) => ({ ...report, status: 'error', error: { type: e.type || 'error', message: e.message } });
  if (loc.folder) return { ...report, status: 'missing' };
  let read;
  try {
    read = await readConfig(loc.path);
  } catch (caught) {
    const e = /** @type {ConfigError} */ (caught); // readConfig throws only these
    if (e.type === 'missing' && !loc.explicit) return { ...report, status: 'missing' };
    return fail(e);
  }
  const format = formatOf(loc.path);
  let root;
  try {
    root = format.parse(read.text);
  } catch (caught) {
    const e = /** @type {Error & {type?: string}} */ (caught); // JsoncError or YamlError, else a bug
    if (e.type === format.errorType) return fail(new ConfigError(format.errorType, loc.path, `is not valid ${format.name}: ${e.message}; nothing was changed`));
    throw e;
  }
  const labelOf = opts.label ?? targetLabel;
  /** @type {import('./entry.js').Edit[]} */
  const edits = [];
  // What each changed entry must read as afterwards, by table and entry index.
  /** @type {Map<string, import('./entry.js').EntryInfo>} */
  const expected = new Map();
  for (const [t, table] of serverTables(root, loc).entries()) {
    for (const [e, entry] of table.entries.entries()) {
      const info = format.inspect(entry.node);
      /** @type {{table: string, name: string, state: string, action: string, label: string|null, reason?: string}} */
      const row = { table: table.scope, name: entry.name, state: info.state, action: 'none', label: null, reason: info.reason };
      if (info.state === 'wrapped' || info.state === 'manual') row.label = labelInArgs(info.args);
      if (info.state === 'unwrapped') {
        const inner = innerCommand(/** @type {string} */ (info.command), info.args || []); // unwrapped: has one
        row.label = await labelOf(inner.command, inner.args, { cwd: opts.cwd, env: opts.env });
      }
      if (opts.mode === 'wrap' && info.state === 'unwrapped') {
        // An entry inspected as wrappable or wrapped is an object node.
        edits.push(...format.wrapEdits(read.text, /** @type {import('./jsonc.js').ObjectNode} */ (entry.node), { label: row.label, actor: opts.actor }));
        const now = wrappedCommand(/** @type {string} */ (info.command), info.args || [], { label: row.label, actor: opts.actor });
        expected.set(`${t}:${e}`, { state: 'wrapped', ...now, original: { command: /** @type {string} */ (info.command), args: info.args } });
        row.action = 'wrap';
      } else if (opts.mode === 'unwrap' && info.state === 'wrapped') {
        edits.push(...format.unwrapEdits(read.text, /** @type {import('./jsonc.js').ObjectNode} */ (entry.node)));
        expected.set(`${t}:${e}`, { state: 'unwrapped', ...info.original });
        row.action = 'unwrap';
        row.label = labelInArgs(info.args);
      }
      report.servers.push(row);
    }
  }
  if (edits.length === 0) return { ...report, status: 'unchanged' };
  const text = applyEdits(read.text, edits);
  // Never write a file this tool cannot read back, or one that does not say what it meant.
  const problem = readBackProblem(format, text, loc, expected);
  if (problem) return fail(new ConfigError('write_failed', loc.path, `${problem}; nothing was changed`));
  const diff = unifiedDiff(read.text, edits, applyEdits, loc.path);
  if (opts.dryRun || opts.mode === 'status') return { ...report, status: 'would_change', diff };
  try {
    const { backup } = await writeConfigAtomic(read, text, opts.hooks);
    return { ...report, status: 'written', diff, backup };
  } catch (e) {
    if (e instanceof ConfigError) return fail(e);
    throw e;
  }
}

/** @type {(a: unknown, b: unknown) => boolean} */
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Why the rewritten text does not read back as intended, or null when it does.
 * @param {typeof import('./formats.js').JSON_FORMAT} format
 * @param {string} text
 * @param {ConfigLocation} loc
 * @param {Map<string, import('./entry.js').EntryInfo>} expected
 */
function readBackProblem(format, text, loc, expected) {
  let tables;
  try {
    tables = serverTables(format.parse(text), loc);
  } catch (e) {
    return `the rewrite would not be valid ${format.name} (${/** @type {Error} */ (e).message})`;
  }
  for (const [at, want] of expected) {
    const [t, e] = at.split(':').map(Number);
    const entry = tables[t]?.entries[e];
    const got = entry ? format.inspect(entry.node) : null;
    const ok = got && got.state === want.state && got.command === want.command && same(got.args, want.args)
      && (want.state !== 'wrapped' || (got.original?.command === want.original?.command && same(got.original?.args, want.original?.args)));
    if (!ok) return `the rewrite of "${entry?.name ?? at}" would not read back as intended (the entry may have been edited by hand)`;
  }
  return null;
}

/**
 * Runs `wrap`, `unwrap` or `status` over the chosen configs.
 * @param {'wrap'|'unwrap'|'status'} mode
 * @param {Where & {clients?: string[], configs?: string[], dryRun?: boolean, actor?: string, hooks?: {beforeCommit?: () => Promise<void>|void}}} opts
 * @returns {Promise<ConfigReport[]>} one report per config file (see processConfig)
 */
export async function run(mode, opts = {}) {
  /** @type {ConfigReport[]} */
  const reports = [];
  for (const loc of locateConfigs(opts)) reports.push(await processConfig(loc, { ...opts, mode }));
  return reports;
}
