// wrap → wrap → unwrap on a realistic config of every client, in its real place.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import YAML from 'yaml';
import { run, MARKER_KEY } from '../src/wrap/index.js';
import { parseJsonc } from '../src/wrap/jsonc.js';
import { makeWorld, testLabel } from './wrap-helpers.js';

const parse = (text) => parseJsonc(text).value;

// A file as its client reads it, with Continue's shapes made comparable to the others: a
// list of blocks becomes an object keyed by name, and a one-server JSON file a table of one.
function load(file, text) {
  const doc = /\.ya?ml$/.test(file) ? YAML.parse(text) : parseJsonc(text).value;
  if (Array.isArray(doc.mcpServers)) doc.mcpServers = Object.fromEntries(doc.mcpServers.map((e, i) => [e.name ?? e.uses ?? `#${i + 1}`, e]));
  if (typeof doc.command === 'string' && file.includes('.continue')) return { file: { [path.basename(file, '.json')]: doc } };
  return doc;
}

// Every server table of a loaded config, as [scope, table] pairs.
function tables(doc) {
  const out = [];
  if (doc.mcpServers) out.push(['mcpServers', doc.mcpServers]);
  if (doc.servers) out.push(['servers', doc.servers]);
  if (doc.file) out.push(['file', doc.file]);
  for (const [dir, p] of Object.entries(doc.projects || {})) if (p.mcpServers) out.push([`project ${dir}`, p.mcpServers]);
  return out;
}

const isStdio = (e) => typeof e.command === 'string';

test('wrap rewrites every stdio server of every client, keeps everything else, and unwrap restores the bytes', async () => {
  const w = makeWorld();
  try {
    const reports = await run('wrap', { ...w.where, label: testLabel });
    for (const f of w.files) {
      const r = reports.find((x) => x.path === f.file);
      assert.ok(r, `${f.client} config at ${f.rel} was found`);
      assert.equal(r.client, f.client);
      assert.equal(r.status, 'written', `${f.fixture}: ${JSON.stringify(r.error)}`);
      const before = load(f.file, f.original);
      const afterText = fs.readFileSync(f.file, 'utf8');
      const after = load(f.file, afterText);
      assert.equal(fs.readFileSync(`${f.file}.bak`, 'utf8'), f.original, `${f.fixture}: .bak holds the original`);
      assert.equal(fs.statSync(f.file).mode & 0o777, 0o640, `${f.fixture}: file mode kept`);
      assert.equal(afterText.includes('\r\n'), f.original.includes('\r\n'), `${f.fixture}: line endings kept`);
      assert.equal(afterText.endsWith('\n'), f.original.endsWith('\n'), `${f.fixture}: final newline kept`);
      let wrappedCount = 0;
      const restored = load(f.file, afterText);
      for (const [scope, table] of tables(before)) {
        const afterTable = tables(after).find(([s]) => s === scope)[1];
        assert.deepEqual(Object.keys(afterTable), Object.keys(table), `${f.fixture}: server order kept`);
        for (const [name, entry] of Object.entries(table)) {
          const got = afterTable[name];
          const row = r.servers.find((s) => s.name === name && s.table === scope);
          if (!isStdio(entry)) {
            assert.deepEqual(got, entry, `${f.fixture}/${name}: remote entry untouched`);
            assert.equal(row.state, 'remote');
            continue;
          }
          wrappedCount++;
          const label = await testLabel(entry.command, entry.args || []);
          assert.equal(got.command, 'npx');
          assert.deepEqual(got.args, ['-y', 'lowdown-proxy', '--target', label, '--', entry.command, ...(entry.args || [])]);
          const original = { command: entry.command, ...(entry.args ? { args: entry.args } : {}) };
          assert.deepEqual(got[MARKER_KEY], original, `${f.fixture}/${name}: original kept under ${MARKER_KEY}`);
          // An added `args` follows `command`; the marker comes last.
          const keys = Object.keys(entry).flatMap((k) => (k === 'command' && !entry.args ? [k, 'args'] : [k]));
          assert.deepEqual(Object.keys(got), [...keys, MARKER_KEY], `${f.fixture}/${name}: key order kept`);
          assert.equal(row.action, 'wrap');
          // Everything but command/args/marker is as before.
          const rest = { ...got };
          delete rest[MARKER_KEY];
          rest.command = entry.command;
          if (entry.args) rest.args = entry.args;
          else delete rest.args;
          assert.deepEqual(rest, entry);
          const t = tables(restored).find(([s]) => s === scope)[1];
          t[name] = entry;
        }
      }
      assert.ok(wrappedCount > 0, `${f.fixture} has stdio servers`);
      // With the wrapped entries put back, the whole document equals the original: no
      // unknown key anywhere was lost or changed.
      assert.deepEqual(restored, before, `${f.fixture}: nothing outside the wrapped entries changed`);
    }

    const snapshot = w.files.map((f) => fs.readFileSync(f.file, 'utf8'));
    const again = await run('wrap', { ...w.where, label: testLabel });
    for (const [i, f] of w.files.entries()) {
      assert.equal(fs.readFileSync(f.file, 'utf8'), snapshot[i], `${f.fixture}: second wrap changes nothing`);
      const r = again.find((x) => x.path === f.file);
      assert.equal(r.status, 'unchanged');
      assert.ok(r.servers.every((s) => s.action === 'none'));
    }

    const unwrapped = await run('unwrap', w.where);
    for (const f of w.files) {
      assert.equal(unwrapped.find((x) => x.path === f.file).status, 'written');
      assert.equal(fs.readFileSync(f.file, 'utf8'), f.original, `${f.fixture}: unwrap restores the original bytes`);
    }
    const second = await run('unwrap', w.where);
    assert.ok(second.filter((r) => r.status !== 'missing').every((r) => r.status === 'unchanged'), 'unwrap of an unwrapped config changes nothing');
  } finally {
    w.cleanup();
  }
});

test('dry run writes nothing and prints a diff that patch(1) applies to exactly the wrapped file', async () => {
  const w = makeWorld();
  try {
    const dry = await run('wrap', { ...w.where, label: testLabel, dryRun: true });
    for (const f of w.files) assert.equal(fs.readFileSync(f.file, 'utf8'), f.original, `${f.fixture}: untouched by the dry run`);
    for (const f of w.files) assert.ok(!fs.existsSync(`${f.file}.bak`), 'no backup on a dry run');
    const copies = w.files.map((f) => {
      const copy = path.join(w.root, `copy-${path.basename(f.rel)}-${f.fixture}`);
      fs.writeFileSync(copy, f.original);
      return copy;
    });
    await run('wrap', { ...w.where, label: testLabel });
    for (const [i, f] of w.files.entries()) {
      const r = dry.find((x) => x.path === f.file);
      assert.equal(r.status, 'would_change');
      assert.match(r.diff, /^--- .*\n\+\+\+ .*\n@@ -\d+,\d+ \+\d+,\d+ @@/);
      execFileSync('patch', ['--quiet', '--batch', copies[i]], { input: r.diff });
      assert.equal(fs.readFileSync(copies[i], 'utf8'), fs.readFileSync(f.file, 'utf8'), `${f.fixture}: the diff is exactly the change`);
    }
  } finally {
    w.cleanup();
  }
});

test('a label comes from lowdown-core when the binding has one, else the proxy derives it at run time', async () => {
  const w = makeWorld([{ client: 'cursor', fixture: 'cursor-mcp.json', base: 'home', rel: '.cursor/mcp.json' }]);
  try {
    let core = null;
    try {
      core = await import('../src/core.js');
    } catch {
      // binding not built: covered by the else branch
    }
    await run('wrap', w.where);
    const entry = parse(fs.readFileSync(w.files[0].file, 'utf8')).mcpServers['brave-search'];
    const inner = ['npx', '-y', '@modelcontextprotocol/server-brave-search'];
    if (core && typeof core.targetLabel === 'function') {
      assert.deepEqual(entry.args, ['-y', 'lowdown-proxy', '--target', core.targetLabel(inner), '--', ...inner]);
    } else {
      assert.deepEqual(entry.args, ['-y', 'lowdown-proxy', '--', ...inner]);
    }
  } finally {
    w.cleanup();
  }
});
