// Windows-safe resolution of the command the proxy spawns.
//
// On POSIX, `spawn(file, args)` without a shell already does the right thing: execvp
// searches PATH and runs scripts through their shebang. On Windows it does not: CreateProcess
// only runs `.exe`/`.com` files, does not try PATHEXT, and since Node 20.12.2
// (CVE-2024-27980) spawning a `.cmd`/`.bat` file without a shell throws EINVAL. `npx`,
// `pnpm`, `yarn` and most npm-installed servers are `.cmd` shims there, so the proxy
// resolves the command itself and, for batch files, runs `cmd.exe /d /s /c "<line>"` with
// every argument quoted so that cmd.exe sees only literal text.
//
// Everything here is pure: the file system and the environment come in as parameters, so
// the Windows logic is unit-tested on Linux.

import path from 'node:path';

/** Characters cmd.exe treats as syntax; each gets a `^` so it is read literally. */
const CMD_META = /([()\][%!^"`<>&|;, *?])/g;

/**
 * Quotes one argument by the rules the Microsoft C runtime uses to split a command line:
 * wrap in `"`, double the backslashes that precede a `"` or the closing quote, escape `"`.
 * @param {string} arg
 * @returns {string}
 */
export function quoteWindowsArg(arg) {
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes += 1;
      continue;
    }
    if (ch === '"') {
      out += '\\'.repeat(backslashes * 2 + 1) + '"';
    } else {
      out += '\\'.repeat(backslashes) + ch;
    }
    backslashes = 0;
  }
  return out + '\\'.repeat(backslashes * 2) + '"';
}

/**
 * Escapes text for cmd.exe by prefixing each metacharacter with `^`. A batch file re-parses
 * its arguments once more when it expands `%*`, so arguments bound for a `.cmd`/`.bat` are
 * escaped twice.
 * @param {string} text
 * @param {number} times
 * @returns {string}
 */
export function escapeForCmd(text, times = 1) {
  let out = text;
  for (let i = 0; i < times; i += 1) out = out.replace(CMD_META, '^$1');
  return out;
}

/**
 * Finds `command` the way a Windows shell would: as given when it has a path separator,
 * else in the current directory and then each PATH entry, trying each PATHEXT extension when
 * the name has none of them.
 * @param {string} command
 * @param {{env: Record<string, string|undefined>, cwd: string, exists: (p: string) => boolean}} io
 * @returns {string | null} the resolved file, or null when nothing matches
 */
export function findWindowsExecutable(command, { env, cwd, exists }) {
  const win = path.win32;
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
  const extKey = Object.keys(env).find((k) => k.toUpperCase() === 'PATHEXT') ?? 'PATHEXT';
  const exts = (env[extKey] || '.COM;.EXE;.BAT;.CMD')
    .split(';')
    .filter(Boolean)
    .map((e) => e.toLowerCase());
  const hasExt = exts.includes(win.extname(command).toLowerCase());
  const candidates = (/** @type {string} */ base) => (hasExt ? [base] : exts.map((e) => base + e));
  const hasDir = /[\\/]/.test(command) || win.isAbsolute(command);
  const dirs = hasDir ? [''] : [cwd, ...(env[pathKey] || '').split(';').filter(Boolean)];
  for (const dir of dirs) {
    const base = dir === '' ? win.resolve(cwd, command) : win.join(dir.replace(/^"|"$/g, ''), command);
    for (const file of candidates(base)) if (exists(file)) return file;
  }
  return null;
}

/**
 * Decides what to hand to `child_process.spawn` (always with `shell: false`) so that
 * `command args...` runs with its arguments unchanged.
 *
 * - POSIX: `{file: command, args}` as given; the OS resolves PATH and shebangs.
 * - Windows, `.exe`/`.com` (or not found, so spawn reports ENOENT itself): the resolved file.
 * - Windows, `.cmd`/`.bat`: `cmd.exe /d /s /c "<quoted line>"` with
 *   `windowsVerbatimArguments: true`, so Node does not re-quote the line.
 *
 * @param {string} command
 * @param {string[]} args
 * @param {{platform?: string, env?: Record<string, string|undefined>, cwd?: string, exists?: (p: string) => boolean}} [opts]
 * @returns {{file: string, args: string[], windowsVerbatimArguments: boolean}}
 */
export function resolveCommand(command, args, opts = {}) {
  const platform = opts.platform ?? process.platform;
  if (platform !== 'win32') return { file: command, args, windowsVerbatimArguments: false };
  const env = opts.env ?? process.env;
  const found = findWindowsExecutable(command, {
    env,
    cwd: opts.cwd ?? process.cwd(),
    exists: opts.exists ?? (() => false),
  });
  if (!found || !/\.(cmd|bat)$/i.test(found)) {
    return { file: found ?? command, args, windowsVerbatimArguments: false };
  }
  const comspecKey = Object.keys(env).find((k) => k.toUpperCase() === 'COMSPEC');
  const shell = (comspecKey && env[comspecKey]) || 'cmd.exe';
  const line = [escapeForCmd(quoteWindowsArg(found), 1), ...args.map((a) => escapeForCmd(quoteWindowsArg(a), 2))].join(' ');
  return { file: shell, args: ['/d', '/s', '/c', `"${line}"`], windowsVerbatimArguments: true };
}
