// Runs every examples/*/classify-transcript example on the recorded server-everything
// session and checks that all hosts print the same records, and the right ones.
//
// The examples are the cross-host check: Node (napi), WASM under Node and Rust each feed the
// same transcript through the core's Recorder and print canonical JSON, so any difference
// between the bindings shows up as a differing line. Python takes no part: its binding
// (prowl._native) exposes what prowl uses, and prowl records no MCP sessions; the Python
// build still checks below that every record is one the API accepts.
//
//   node --test tests/examples/        (after make build-js-binding build-python-binding build-wasm-binding)

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TRANSCRIPT = path.join(ROOT, 'examples/transcripts/server-everything.jsonl');
const PYTHON = process.env.PY ?? path.join(ROOT, '.venv/bin/python');

/** The counter a record goes to (SPEC §3.1), as the API counts it. */
const outcomeClass = (r) =>
  r.request_kind === 'protocol' ? 'protocol' : r.outcome === 'cancelled' ? 'cancelled' : r.error_layer === 'request' ? 'rejected' : r.outcome;

// The Rust example is core/Cargo.toml's `[[example]] classify_transcript`;
// LOWDOWN_RUST_EXAMPLE may instead name an already built binary of it.
const RUST_BIN = process.env.LOWDOWN_RUST_EXAMPLE;
const RUST = RUST_BIN ? [RUST_BIN] : ['cargo', 'run', '-q', '-p', 'lowdown-core', '--example', 'classify_transcript', '--'];

/** Every host's example: a name and the argv that runs it (a transcript path is appended). */
const HOSTS = [
  ['node', [process.execPath, 'examples/node/classify-transcript.mjs']],
  ['wasm', [process.execPath, 'examples/wasm/classify-transcript.mjs']],
  ['rust', RUST],
];

/** Runs `argv` (plus `transcript` when given): `{code, stdout, stderr}`, whatever the exit status. */
function run([cmd, ...args], transcript) {
  return new Promise((resolve) => {
    const options = { cwd: ROOT, maxBuffer: 64 << 20, timeout: 900_000 };
    execFile(cmd, transcript ? [...args, transcript] : args, options, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? `spawn failed: ${err.message}`) : 0, stdout, stderr });
    });
  });
}

/** Runs every host's example on `transcript`, one after the other: `{host: result}`. */
async function runAll(transcript) {
  const out = {};
  for (const [name, argv] of HOSTS) out[name] = await run(argv, transcript);
  return out;
}

const records = (stdout) => stdout.trimEnd().split('\n').map((line) => JSON.parse(line));

let session;
let scratch;
before(async () => {
  const napi = readdirSync(path.join(ROOT, 'bindings-js')).some((f) => f.endsWith('.node'));
  assert.ok(napi, 'bindings-js has no native build: run make build-js-binding');
  const wasm = existsSync(path.join(ROOT, 'bindings-js/wasm/lowdown_bg.wasm'));
  assert.ok(wasm, 'bindings-js/wasm is missing: run make build-wasm-binding');
  if (!RUST_BIN) {
    // Compile first, so that no run below waits for a build.
    const build = await run(['cargo', 'build', '-q', '-p', 'lowdown-core', '--example', 'classify_transcript']);
    assert.equal(build.code, 0, `cargo build of the Rust example failed:\n${build.stderr}`);
  }
  scratch = mkdtempSync(path.join(tmpdir(), 'lowdown-examples-'));
  session = await runAll(TRANSCRIPT);
});
after(() => scratch && rmSync(scratch, { recursive: true, force: true }));

test('the Rust example takes part', () => {
  assert.equal(session.rust.code, 0, session.rust.stderr);
  assert.equal(session.rust.stdout, session.node.stdout, 'rust prints different records than node');
});

test('every example exits 0 and prints the same records, byte for byte', () => {
  for (const [name] of HOSTS) {
    assert.equal(session[name].code, 0, `${name} example failed:\n${session[name].stderr}`);
    assert.equal(session[name].stderr, '', `${name} example wrote to stderr`);
  }
  for (const [name] of HOSTS.slice(1)) {
    assert.equal(session[name].stdout, session.node.stdout, `${name} prints different records than node`);
  }
});

test('the records are what the recorded session holds, in order', () => {
  const got = records(session.node.stdout);
  // One record per client request; the server's sampling/createMessage and roots/list are not recorded.
  assert.deepEqual(
    got.map((r) => [r.task_type, outcomeClass(r), r.failure_type]),
    [
      ['initialize', 'protocol', null],
      ['tools/list', 'protocol', null],
      ['echo', 'success', null],
      ['get-sum', 'success', null],
      ['gzip-file-as-resource', 'failure', 'tool_error'],
      ['no-such-tool', 'rejected', 'invalid_arguments'],
      ['get-sum', 'rejected', 'invalid_arguments'],
      ['ping', 'protocol', null],
      ['trigger-sampling-request', 'success', null],
      ['trigger-long-running-operation', 'cancelled', null],
      ['echo', 'success', null],
    ],
  );
  const classes = new Set(got.map(outcomeClass));
  for (const want of ['success', 'failure', 'rejected', 'protocol', 'cancelled']) assert.ok(classes.has(want), want);
  for (const r of got) {
    assert.equal(r.actor, 'example');
    assert.equal(r.target, 'npm:@modelcontextprotocol/server-everything');
    assert.equal(r.target_type, 'tool');
    assert.equal(r.source, 'organic');
    assert.equal(r.node_id, null);
    assert.equal(r.server_version, '2.0.0');
    assert.equal(r.protocol_version, '2025-06-18');
    // Every key in canonical (sorted) order, so any host's line can be compared as text.
    assert.deepEqual(Object.keys(r), Object.keys(r).toSorted());
  }
  assert.deepEqual(got.map((r) => r.record_id), got.map((_, i) => `example-${i.toString(16)}`));
  // Every record is one the API accepts: the core's own validation, as prowl runs it.
  const check = 'import json, sys; from prowl._native import validate_records\nvalidate_records([json.loads(l) for l in sys.stdin])';
  execFileSync(PYTHON, ['-c', check], { input: session.node.stdout });
  // Before tools/list answers there is no schema hash; afterwards, the one the golden vector expects.
  const vector = JSON.parse(readFileSync(path.join(ROOT, 'tests/vectors/classify.json'), 'utf8'))
    .cases.find((c) => c.name.startsWith('real server-everything session'));
  assert.ok(vector, 'tests/vectors/classify.json has the server-everything case');
  assert.deepEqual(got.map((r) => r.schema_hash), [null, ...Array(10).fill(vector.expected.facts.schema_hash)]);
  const latencies = vector.expected.exchanges.filter((e) => e.direction === 'client_to_server').map((e) => Math.round(e.latency_ms * 1000) / 1000); // records keep microseconds
  assert.deepEqual(got.map((r) => r.latency_ms), latencies);
});

test('no argument, result, error text or root path reaches a record', () => {
  // Canaries: strings that are in the transcript's messages and must never be in a record.
  const canaries = ['hello from lowdown', 'still alive', 'ftp://example.invalid', 'Unsupported URL protocol',
    'Tool no-such-tool not found', 'Input validation error', '"two"', 'A short story', 'demo-model',
    'file:///home/demo/project', 'User cancelled', 'The sum of 2 and 3', 'lowdown-demo-client'];
  const transcript = readFileSync(TRANSCRIPT, 'utf8');
  for (const canary of canaries) {
    assert.ok(transcript.includes(canary.replaceAll('"', '\\"')), `canary ${canary} is in the transcript`);
    for (const [name] of HOSTS) assert.ok(!session[name].stdout.includes(canary), `${name} leaked ${canary}`);
  }
});

test('a session the client cut short records its pending request as cancelled, in every host', async () => {
  // The first 7 lines end with the tools/list request sent and never answered; the examples
  // close the session as the client did (a server that dies would make it a server failure).
  const cut = path.join(scratch, 'cut.jsonl');
  writeFileSync(cut, readFileSync(TRANSCRIPT, 'utf8').split('\n').slice(0, 7).join('\n') + '\n');
  const out = await runAll(cut);
  for (const [name] of HOSTS) {
    assert.equal(out[name].code, 0, `${name}: ${out[name].stderr}`);
    assert.equal(out[name].stdout, out.node.stdout, `${name} differs from node`);
  }
  const got = records(out.node.stdout);
  assert.deepEqual(got.map((r) => [r.task_type, r.outcome, r.failure_type, r.error_layer]), [
    ['initialize', 'success', null, null],
    ['tools/list', 'cancelled', null, null],
  ]);
  // Timed at the close, which the examples put at the last line's time (the request's own).
  assert.equal(got[1].latency_ms, 0);
});

test('a bad transcript line is named with its file and line number, and the example exits 1', async () => {
  const bad = path.join(scratch, 'bad.jsonl');
  const good = readFileSync(TRANSCRIPT, 'utf8').split('\n')[0];
  for (const [line, says] of [
    ['{"direction":"sideways","at_ms":1,"line":"{}"}', /sideways|direction/],
    ['not json at all', /bad\.jsonl:2: \S/],
  ]) {
    writeFileSync(bad, `${good}\n${line}\n`);
    const out = await runAll(bad);
    for (const [name] of HOSTS) {
      assert.equal(out[name].code, 1, `${name} must fail on ${line}`);
      assert.match(out[name].stderr, new RegExp(`bad\\.jsonl:2: `), `${name} names the line`);
      assert.match(out[name].stderr, says, `${name} says what is wrong`);
      assert.doesNotMatch(out[name].stderr, /\n\s+at /, `${name} prints a message, not a stack trace`);
    }
  }
  const missing = await runAll(path.join(scratch, 'no-such-file.jsonl'));
  for (const [name] of HOSTS) {
    assert.notEqual(missing[name].code, 0, `${name} must fail on a missing file`);
    assert.match(missing[name].stderr, /no-such-file\.jsonl/, `${name} names the missing file`);
  }
});

test('examples/README.md: its commands print these records, and its sample record is one of them', async () => {
  const readme = readFileSync(path.join(ROOT, 'examples/README.md'), 'utf8');
  const commands = readme.match(/```sh\n([\s\S]*?)```/)[1].trim().split('\n');
  assert.equal(commands.length, HOSTS.length, 'one command per host');
  for (const command of commands) {
    const [cmd, ...args] = command.split(/\s+/);
    const argv = [cmd === 'node' ? process.execPath : cmd, ...args];
    // No transcript argument: each example must find the recorded session on its own.
    const out = await run(argv);
    assert.equal(out.code, 0, `${command}: ${out.stderr}`);
    assert.equal(out.stdout, session.node.stdout, `${command} prints other records`);
  }
  const sample = readme.match(/```json\n(.*)\n```/)[1];
  assert.ok(session.node.stdout.split('\n').includes(sample), 'the README sample is a line the examples print');
});
