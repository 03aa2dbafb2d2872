// The host linters of `make lint-hosts` can fail: each is run, with the project's own
// configuration, on a scratch file holding one planted mistake, and must exit non-zero naming
// it. (`make test-lint-hosts` first runs them green over the real sources; stubtest's own
// failing case is in bindings-python/tests/test_native.py.)

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VENV_BIN = path.join(ROOT, '.venv', 'bin');
const PYPROJECT = path.join(ROOT, 'bindings-python', 'pyproject.toml');
// Inside the tree (target/ is ignored), so tsc finds node_modules/@types as the packages do.
fs.mkdirSync(path.join(ROOT, 'target'), { recursive: true });
const SCRATCH = fs.mkdtempSync(path.join(ROOT, 'target', 'lint-scratch-'));
after(() => fs.rmSync(SCRATCH, { recursive: true, force: true }));

/** Writes `files` into a fresh folder of SCRATCH and runs `cmd` there. */
function run(name, files, cmd, args) {
  const dir = path.join(SCRATCH, name);
  fs.mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.error, undefined, `${cmd} did not run`);
  return { status: r.status, out: r.stdout + r.stderr };
}

test('ruff refuses an undefined name, a mutable default and a type: ignore without a code', () => {
  const r = run('ruff', {
    'scratch.py': [
      'def f(xs=[]):  # B006',
      '    return undefined_name  # F821',
      '',
      'n: int = 1  # type: ignore',
      '',
    ].join('\n'),
  }, path.join(VENV_BIN, 'ruff'), ['check', '--no-cache', '--config', PYPROJECT, '--output-format', 'concise', 'scratch.py']);
  assert.equal(r.status, 1, r.out);
  for (const code of ['F821', 'B006', 'PGH003']) assert.match(r.out, new RegExp(`scratch\\.py:\\d+:\\d+: ${code}`), code);
});

test('mypy --strict refuses a wrong type and a function without annotations', () => {
  const r = run('mypy', {
    'scratch.py': ['n: int = "one"', '', '', 'def f(x):', '    return x', ''].join('\n'),
  }, path.join(VENV_BIN, 'mypy'), ['--config-file', PYPROJECT, '--no-incremental', '--cache-dir', '/dev/null', 'scratch.py']);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /scratch\.py:1: error: .*\[assignment\]/);
  assert.match(r.out, /scratch\.py:4: error: Function is missing a type annotation\s+\[no-untyped-def\]/);
});

test('tsc --checkJs refuses a JSDoc type the value breaks, a possibly-null read, an untyped parameter and an unnarrowed caught value', () => {
  const r = run('tsc', {
    'tsconfig.json': JSON.stringify({ extends: path.join(ROOT, 'tsconfig.base.json'), include: ['*.js'] }),
    'scratch.js': [
      '/** @type {number} */',
      "export const n = 'one';",
      '/** @param {string | null} s */',
      'export const len = (s) => s.length;',
      'export const id = (x) => x;',
      '/** @param {() => void} f */',
      'export function tryIt(f) { try { f(); } catch (e) { return e.message; } }',
      '',
    ].join('\n'),
  }, path.join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', '.']);
  assert.equal(r.status, 2, r.out);
  assert.match(r.out, /scratch\.js\(2,14\): error TS2322: Type 'string' is not assignable to type 'number'/);
  assert.match(r.out, /scratch\.js\(4,27\): error TS18047: 's' is possibly 'null'/);
  // noImplicitAny and useUnknownInCatchVariables (strict in full, tsconfig.base.json).
  assert.match(r.out, /scratch\.js\(5,20\): error TS7006: Parameter 'x' implicitly has an 'any' type/);
  assert.match(r.out, /scratch\.js\(7,60\): error TS18046: 'e' is of type 'unknown'/);
});
