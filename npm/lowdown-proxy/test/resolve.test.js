// Unit tests of the Windows command resolution (pure; runs on Linux with a fake file system).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveCommand, quoteWindowsArg, escapeForCmd, findWindowsExecutable } from '../src/relay/resolve.js';

const winEnv = {
  Path: 'C:\\Windows\\system32;C:\\Program Files\\nodejs',
  PATHEXT: '.COM;.EXE;.BAT;.CMD',
  ComSpec: 'C:\\Windows\\system32\\cmd.exe',
};
const files = new Set([
  'C:\\Program Files\\nodejs\\npx.cmd',
  'C:\\Program Files\\nodejs\\node.exe',
  'C:\\proj\\server.bat',
]);
const win = { platform: 'win32', env: winEnv, cwd: 'C:\\proj', exists: (p) => files.has(p) };

test('POSIX commands are passed to spawn exactly as given', () => {
  const r = resolveCommand('npx', ['-y', 'a b', '$HOME'], { platform: 'linux' });
  assert.deepEqual(r, { file: 'npx', args: ['-y', 'a b', '$HOME'], windowsVerbatimArguments: false });
});

test('Windows: an .exe on PATH is spawned directly with unchanged arguments', () => {
  const r = resolveCommand('node', ['server.js', 'a "b"'], win);
  assert.deepEqual(r, { file: 'C:\\Program Files\\nodejs\\node.exe', args: ['server.js', 'a "b"'], windowsVerbatimArguments: false });
});

test('Windows: npx resolves to npx.cmd and runs through cmd.exe /d /s /c with quoted, escaped arguments', () => {
  const r = resolveCommand('npx', ['-y', '@modelcontextprotocol/server-everything', 'a&b'], win);
  assert.equal(r.file, 'C:\\Windows\\system32\\cmd.exe');
  assert.equal(r.windowsVerbatimArguments, true);
  assert.deepEqual(r.args.slice(0, 3), ['/d', '/s', '/c']);
  assert.equal(
    r.args[3],
    '"^"C:\\Program^ Files\\nodejs\\npx.cmd^" ^^^"-y^^^" ^^^"@modelcontextprotocol/server-everything^^^" ^^^"a^^^&b^^^""',
  );
});

test('Windows: a .bat in the working directory is found before PATH', () => {
  assert.equal(findWindowsExecutable('server', { env: winEnv, cwd: 'C:\\proj', exists: (p) => files.has(p) }), 'C:\\proj\\server.bat');
});

test('Windows: an explicit extension is not extended again, and a missing command is left for spawn to report', () => {
  assert.equal(findWindowsExecutable('npx.cmd', { env: winEnv, cwd: 'C:\\x', exists: (p) => files.has(p) }), 'C:\\Program Files\\nodejs\\npx.cmd');
  assert.deepEqual(resolveCommand('nope', ['x'], win), { file: 'nope', args: ['x'], windowsVerbatimArguments: false });
});

test('MSVCRT quoting doubles backslashes before quotes and at the end', () => {
  assert.equal(quoteWindowsArg('plain'), '"plain"');
  assert.equal(quoteWindowsArg('a "b"'), '"a \\"b\\""');
  assert.equal(quoteWindowsArg('C:\\dir\\'), '"C:\\dir\\\\"');
  assert.equal(quoteWindowsArg('x\\"y'), '"x\\\\\\"y"');
  assert.equal(quoteWindowsArg(''), '""');
});

test('cmd.exe metacharacters are caret-escaped once or twice', () => {
  assert.equal(escapeForCmd('a&b|c%d'), 'a^&b^|c^%d');
  assert.equal(escapeForCmd('&', 2), '^^^&');
});
