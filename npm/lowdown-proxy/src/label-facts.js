// What the file system says about a command line, for the core's target label (SPEC §3.2,
// "one server, one label"). The core reads no files: to it `node_modules/.bin/x` is only a
// file name. This module looks, and hands the core facts: which words are files of a
// published package. The proxy, `wrap` and the editor extension all use it, so they label a
// server alike however it is launched.
//
// - npm: a word that is (or, for the command, resolves on PATH to) a file inside
//   `node_modules/` (a `.bin` link is followed to its target) belongs to the package whose
//   folder holds it: its `package.json` `name`. A project's own files, outside
//   `node_modules/`, are not a published package and keep the file label. A bare name that
//   is a bin of the project (`node_modules/.bin/<name>` in the working directory or above)
//   is a fact too: npx runs that bin before it looks at the registry, and the core decides
//   whether the word is what a runner runs.
// - PyPI: a command that is a script in a `bin/` (or `Scripts\`) folder with a
//   `site-packages` beside it (a virtualenv, a user install) belongs to the distribution
//   whose `*.dist-info` declares it (a console script in `entry_points.txt`, or the file in
//   `RECORD`): its `METADATA` `Name`.
//
// Anything unreadable is simply not a fact: labelling never fails because of the disk.

import fs from 'node:fs';
import path from 'node:path';

/** A word worth a look: the command, or an argument naming a script file. */
const SCRIPT = /\.(c|m)?[jt]s$|\.py$/;
/** A bare name a runner could find among the project's bins (no version, scope or path). */
const BIN_NAME = /^[a-z0-9][a-z0-9._-]{0,213}$/i;
/** Directories looked in for a project's bins, from the working directory up. */
const MAX_ANCESTORS = 64;

/**
 * The facts the core's `targetLabel` takes, for `argv` run in `cwd`.
 * @param {string[]} argv the command first
 * @param {{cwd?: string, env?: Record<string, string|undefined>}} [where]
 * @returns {{packages: {arg: string, registry: 'npm'|'pypi', name: string}[], cwd: string|null}}
 */
export function labelFacts(argv, { cwd = process.cwd(), env = process.env } = {}) {
  /** @type {{arg: string, registry: 'npm'|'pypi', name: string}[]} */
  const packages = [];
  argv.forEach((word, i) => {
    if (typeof word !== 'string' || word === '') return;
    const isPath = word.includes('/') || word.includes('\\');
    const bin = i > 0 && !isPath && BIN_NAME.test(word);
    if (i > 0 && !(isPath && SCRIPT.test(word)) && !bin) return;
    const file = isPath ? path.resolve(cwd, word) : i === 0 ? onPath(word, env) : projectBin(word, cwd);
    if (!file) return;
    const fact = npmPackage(file) ?? (i === 0 ? pypiDistribution(file) : null);
    if (fact && !packages.some((p) => p.arg === word)) packages.push({ arg: word, ...fact });
  });
  return { packages, cwd: cwd ?? null };
}

/**
 * The project's bin `name` (`node_modules/.bin/<name>` in `cwd` or the nearest directory
 * above that has one), or null.
 * @param {string} name
 * @param {string} cwd
 */
function projectBin(name, cwd) {
  let dir = path.resolve(cwd);
  for (let i = 0; i < MAX_ANCESTORS; i += 1) {
    const candidate = path.join(dir, 'node_modules', '.bin', name);
    if (isFile(candidate)) return candidate;
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
  return null;
}

/**
 * The executable `name` would run, from PATH (and PATHEXT on Windows), or null.
 * @param {string} name
 * @param {Record<string, string|undefined>} env
 */
function onPath(name, env) {
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat(['']) : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isFile(candidate)) return candidate;
    }
  }
  return null;
}

/**
 * `{registry: 'npm', name}` when `file` (after links) lies inside an installed package.
 * @param {string} file
 * @returns {{registry: 'npm', name: string} | null}
 */
function npmPackage(file) {
  let real;
  try {
    real = fs.realpathSync(file);
  } catch {
    return null;
  }
  const parts = real.split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at === -1 || at + 1 >= parts.length) return null;
  // node_modules/pkg/… or node_modules/@scope/pkg/…: the file must lie inside that folder.
  const depth = parts[at + 1].startsWith('@') ? 2 : 1;
  if (at + depth >= parts.length - 1) return null;
  const dir = parts.slice(0, at + 1 + depth).join(path.sep);
  const name = readJson(path.join(dir, 'package.json'))?.name;
  return typeof name === 'string' && name ? { registry: 'npm', name } : null;
}

/**
 * `{registry: 'pypi', name}` when `file` is a console script of an installed distribution.
 * @param {string} file
 * @returns {{registry: 'pypi', name: string} | null}
 */
function pypiDistribution(file) {
  const bin = path.dirname(file);
  if (!['bin', 'Scripts'].includes(path.basename(bin))) return null;
  const script = path.basename(file).replace(/\.exe$/i, '');
  for (const site of sitePackages(path.dirname(bin))) {
    let entries;
    try {
      entries = fs.readdirSync(site).filter((d) => d.endsWith('.dist-info'));
    } catch {
      continue;
    }
    for (const info of entries) {
      const dir = path.join(site, info);
      if (!declaresScript(path.join(dir, 'entry_points.txt'), script) && !recordsFile(path.join(dir, 'RECORD'), site, file)) continue;
      const name = readText(path.join(dir, 'METADATA'))?.match(/^Name:\s*(.+?)\s*$/m)?.[1];
      if (name) return { registry: 'pypi', name };
    }
  }
  return null;
}

/**
 * The `site-packages` folders of an environment root (POSIX `lib/pythonX.Y/`, Windows `Lib/`).
 * @param {string} root
 */
function sitePackages(root) {
  const out = [path.join(root, 'Lib', 'site-packages')];
  try {
    for (const d of fs.readdirSync(path.join(root, 'lib'))) {
      if (d.startsWith('python')) out.push(path.join(root, 'lib', d, 'site-packages'));
    }
  } catch {
    // no lib/: not a POSIX environment
  }
  return out;
}

/**
 * Whether an `entry_points.txt` names `script` among its console or GUI scripts.
 * @param {string} file
 * @param {string} script
 */
function declaresScript(file, script) {
  const text = readText(file);
  if (!text) return false;
  let inScripts = false;
  for (const line of text.split(/\r?\n/)) {
    const section = line.match(/^\s*\[(.+)\]\s*$/);
    if (section) inScripts = section[1] === 'console_scripts' || section[1] === 'gui_scripts';
    else if (inScripts && line.split('=')[0].trim() === script) return true;
  }
  return false;
}

/**
 * Whether a `RECORD` (paths relative to site-packages) lists `file` as installed.
 * @param {string} record
 * @param {string} site
 * @param {string} file
 */
function recordsFile(record, site, file) {
  const text = readText(record);
  if (!text) return false;
  return text.split(/\r?\n/).some((line) => line && path.resolve(site, line.slice(0, line.indexOf(','))) === file);
}

/** True when `p` names an existing regular file. @param {string} p */
export function isFile(p) {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** @param {string} p */
function readText(p) {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

/**
 * A JSON file's value (arbitrary JSON), or null when unreadable.
 * @param {string} p
 * @returns {any}
 */
function readJson(p) {
  try {
    return JSON.parse(fs.readFileSync(p, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * The target label of `argv` by the core's `targetLabel`, with the facts read here;
 * `unknown` when there is none or the core throws (which `debug` reports).
 * @param {(argv: string[], factsJson: string) => string | null | undefined} targetLabel
 * @param {string[]} argv
 * @param {(m: string) => void} debug
 */
export function safeLabel(targetLabel, argv, debug) {
  try {
    return targetLabel(argv, JSON.stringify(labelFacts(argv))) ?? 'unknown';
  } catch (err) {
    debug(`target label: ${/** @type {Error} */ (err).message}`);
    return 'unknown';
  }
}
