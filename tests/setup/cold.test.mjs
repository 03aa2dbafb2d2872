// Every set-up step on a machine that has none of its tools. A warm machine cannot show the
// cold path, so each step runs in a copy of the tree, with a PATH holding only basic system
// tools plus fake installers (rustup, cargo, apt-get, npm, python3) that record their calls
// and then provide what they were asked for. A step must install what is missing (never fail
// because a tool is absent), and do nothing the second time.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Basic tools the recipes use; everything a step installs is absent from PATH.
const BASICS = ['bash', 'sh', 'make', 'awk', 'grep', 'sed', 'cat', 'touch', 'mkdir', 'rm', 'dirname', 'basename',
  'readlink', 'id', 'env', 'head', 'tail', 'tr', 'sort', 'ls', 'cp', 'mv', 'mktemp', 'chmod', 'find', 'true', 'false', 'cut', 'wc', 'date'];
const CLAUDE_CODE = execFileSync('awk', ['/^CLAUDE_CODE_VERSION :=/ { print $3 }', path.join(ROOT, 'mk/prowl.mk')], { encoding: 'utf8' }).trim();
const WASM_BINDGEN = execFileSync('awk', ['/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print }', path.join(ROOT, 'Cargo.lock')], { encoding: 'utf8' }).trim();

// Fake installers. Each logs "name args" to $FAKE_LOG, then does just enough that the step's
// own checks find the tool installed afterwards.
const FAKES = {
  rustup: `
case "$1 $2" in
  "target list") cat "$FAKE_STATE/targets" 2>/dev/null ;;
  "target add") log; printf '%s\\n' "$3" >> "$FAKE_STATE/targets" ;;
  "component list") cat "$FAKE_STATE/components" 2>/dev/null ;;
  "component add") log; shift 2; for c in "$@"; do echo "$c-x86_64-unknown-linux-gnu" >> "$FAKE_STATE/components"; done ;;
  *) log ;;
esac`,
  cargo: `
log
if [ "$1" = install ] && [ "$2" = wasm-bindgen-cli ]; then printf '#!/bin/sh\\necho "wasm-bindgen %s"\\n' "$4" > "$FAKE_BIN/wasm-bindgen"; chmod +x "$FAKE_BIN/wasm-bindgen"; fi
if [ "$1" = install ] && [ "$2" = cargo-zigbuild ]; then printf '#!/bin/sh\\n' > "$FAKE_BIN/cargo-zigbuild"; chmod +x "$FAKE_BIN/cargo-zigbuild"; fi`,
  'apt-get': `
log
case "$*" in
  *install*chromium*) printf '#!/bin/sh\\n' > "$FAKE_BIN/chromium"; chmod +x "$FAKE_BIN/chromium" ;;
  *install*postgresql*) mkdir -p "$PG_LIBDIR/15/bin"; for b in initdb postgres; do printf '#!/bin/sh\\n' > "$PG_LIBDIR/15/bin/$b"; chmod +x "$PG_LIBDIR/15/bin/$b"; done ;;
esac`,
  npm: `
log
if [ "$1" = ci ]; then mkdir -p node_modules && touch node_modules/.package-lock.json; fi
if [ "$1" = install ] && [ "$2" = --prefix ]; then mkdir -p "$3/node_modules/.bin"; printf '#!/bin/sh\\necho fake\\n' > "$3/node_modules/.bin/claude"; chmod +x "$3/node_modules/.bin/claude"; fi`,
  python3: `
log
if [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin"
  cat > "$3/bin/python" <<'PY'
#!/bin/bash
log() { echo "python $*" >> "$FAKE_LOG"; }
case "$1" in
  -c) if echo "$2" | grep -q ziglang; then [ -e "$FAKE_STATE/ziglang" ] || exit 1; echo "$FAKE_STATE"; fi ;;
  -m) log "$@"; case "$*" in *ziglang*) touch "$FAKE_STATE/ziglang" ;; esac ;;
  *) log "$@" ;;
esac
PY
  chmod +x "$3/bin/python"
fi`,
};

let work;

before(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-cold-'));
  // The tree as a fresh clone has it: tracked files plus new ones not ignored.
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (!fs.existsSync(path.join(ROOT, f))) continue; // deleted, not yet committed
    fs.mkdirSync(path.join(work, 'tree', path.dirname(f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(work, 'tree', f));
  }
});
after(() => work && fs.rmSync(work, { recursive: true, force: true }));

/** A fresh sandbox: basic tools, the fakes, empty state. */
function sandbox(name) {
  const dir = path.join(work, name);
  const bin = path.join(dir, 'bin');
  const state = path.join(dir, 'state');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(state);
  for (const tool of BASICS) {
    const real = execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
    fs.symlinkSync(real, path.join(bin, tool));
  }
  for (const [tool, body] of Object.entries(FAKES)) {
    fs.writeFileSync(path.join(bin, tool), `#!/bin/bash\nARGS="$*"\nlog() { echo "${tool} $ARGS" >> "$FAKE_LOG"; }\n${body}\n`, { mode: 0o755 });
  }
  const env = {
    PATH: bin,
    HOME: dir,
    FAKE_BIN: bin,
    FAKE_STATE: state,
    FAKE_LOG: path.join(dir, 'calls.log'),
    PG_LIBDIR: path.join(dir, 'postgresql'),
  };
  return { dir, env };
}

/** Runs `make <target>` in the tree copy; the installer calls it made, one per line. */
function make(box, target) {
  fs.rmSync(box.env.FAKE_LOG, { force: true });
  const r = spawnSync('make', ['--no-print-directory', target, `VENV=${path.join(box.dir, 'venv')}`], {
    cwd: path.join(work, 'tree'),
    env: box.env,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `make ${target} failed:\n${r.stdout}\n${r.stderr}`);
  const log = fs.existsSync(box.env.FAKE_LOG) ? fs.readFileSync(box.env.FAKE_LOG, 'utf8') : '';
  return log.split('\n').filter(Boolean).map((l) => l.replaceAll(box.dir, '<box>'));
}

const STEPS = [
  ['setup-rust', ['rustup target add wasm32-unknown-unknown', 'rustup component add clippy rustfmt']],
  ['setup-wasm-bindgen', ['rustup target add wasm32-unknown-unknown', 'rustup component add clippy rustfmt',
    `cargo install wasm-bindgen-cli --version ${WASM_BINDGEN} --force`]],
  ['setup-python-binding', ['python3 -m venv <box>/venv',
    'python -m pip install --quiet --disable-pip-version-check -r bindings-python/requirements-dev.txt']],
  ['setup-prowl', ['python3 -m venv <box>/venv',
    'python -m pip install --quiet --disable-pip-version-check -r bindings-python/requirements-dev.txt',
    'python -m pip install --quiet --disable-pip-version-check -r bindings-python/tests/requirements.txt',
    `npm install --prefix <box>/venv/claude-code-${CLAUDE_CODE} --no-save --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@${CLAUDE_CODE}`]],
  ['setup-clients', ['python3 -m venv <box>/venv',
    'python -m pip install --quiet --disable-pip-version-check -r bindings-python/requirements-dev.txt',
    'python -m pip install --quiet --disable-pip-version-check -r tests/clients/requirements.txt']],
  ['setup-dataset', ['python3 -m venv <box>/venv',
    'python -m pip install --quiet --disable-pip-version-check -r bindings-python/requirements-dev.txt',
    'python -m pip install --quiet --disable-pip-version-check -r tests/dataset/requirements.txt']],
  ['setup-npm', ['npm ci --no-audit --no-fund']],
  ['setup-chromium', ['apt-get update -qq', 'apt-get install -y -qq chromium']],
  ['setup-server', ['apt-get update -qq', 'apt-get install -y -qq postgresql']],
  ['setup-cross', ['rustup target add wasm32-unknown-unknown', 'rustup component add clippy rustfmt',
    'python3 -m venv <box>/venv',
    'python -m pip install --quiet --disable-pip-version-check -r bindings-python/requirements-dev.txt',
    'rustup target add aarch64-unknown-linux-gnu', 'rustup target add x86_64-unknown-linux-musl',
    'python -m pip install --quiet --disable-pip-version-check ziglang==0.17.1', 'cargo install cargo-zigbuild']],
];

test('every setup target of `make setup` is covered here', () => {
  const out = execFileSync('make', ['-pn', 'help'], { cwd: ROOT, encoding: 'utf8' });
  const targets = out.match(/^SETUP_TARGETS :?= (.*)$/m)[1].trim().split(/\s+/).sort();
  const covered = STEPS.map(([t]) => t);
  for (const t of targets) assert.ok(covered.includes(t), `${t} has no cold-path case`);
});

for (const [target, calls] of STEPS) {
  test(`${target}: installs what is missing on a bare machine, then does nothing`, () => {
    const box = sandbox(target);
    assert.deepEqual(make(box, target), calls);
    const again = make(box, target);
    assert.deepEqual(again, [], `a second run installed again: ${again.join('; ')}`);
  });
}
