// The figures the READMEs state that the code also defines: every default a README gives a
// flag is the one the program's --help prints, and the quota table is the server's defaults.
// A default changed in the code and not in the docs fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_BIN } from '../../npm/lowdown-proxy/test/helpers/lowdown-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p) => readFileSync(path.join(ROOT, p), 'utf8');
const run = (cmd, args) => execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
/** `8,192` → `8192`, quotes and backticks off. */
const plain = (v) => v.replace(/[`"']/g, '').replace(/(\d),(?=\d{3}\b)/g, '$1').trim();

/** Flag → default, from clap's `--flag <X> … [default: V]` help (or its prose `Default: V`). */
function clapDefaults(help) {
  const out = new Map();
  for (const block of help.split(/\n(?= {2,6}-)/)) {
    const flag = block.match(/^\s*(?:-\w, )?(--[a-z-]+)/)?.[1];
    const def = block.match(/\[default: ([^\]]+)\]/)?.[1] ?? block.match(/Default: (\S+)/)?.[1];
    if (flag && def) out.set(flag, plain(def));
  }
  return out;
}

/** Flag → default, from a README's "`--flag …` (default V" phrases. */
function statedDefaults(text) {
  const out = [];
  for (const m of text.matchAll(/`(--[a-z-]+)[^`]*`\s*\(default:? (`[^`]+`|[^\s;)]+)/g)) {
    out.push([m[1], plain(m[2]).replace(/[,.]$/, '')]);
  }
  return out;
}

const server = SERVER_BIN;

test('every flag default server/README.md states is the one lowdown-server prints', () => {
  const defaults = clapDefaults(run(server, ['serve', '--help']));
  assert.ok(defaults.size >= 8, `read ${defaults.size} defaults from --help`);
  const stated = statedDefaults(read('server/README.md'));
  assert.ok(stated.length >= 6, `found ${stated.length} stated defaults`);
  for (const [flag, value] of stated) {
    assert.ok(defaults.has(flag), `server/README.md gives ${flag} a default that --help does not`);
    assert.equal(value, defaults.get(flag), `server/README.md: ${flag}`);
  }
});

test("every default in server/README.md's Scanner flag table is the one lowdown-server scan prints", () => {
  const defaults = clapDefaults(run(server, ['scan', '--help']));
  const rows = read('server/README.md').split('\n').filter((l) => /^\| `--[a-z-]+[^`]*` \|/.test(l));
  let checked = 0;
  for (const row of rows) {
    const [flagCell, def] = row.split('|').slice(1, 3).map((c) => c.trim());
    const flag = flagCell.match(/`(--[a-z-]+)/)[1];
    if (!defaults.has(flag) || !/^[`\d]/.test(def)) continue;
    assert.equal(plain(def), defaults.get(flag), `server/README.md's table: ${flag}`);
    checked++;
  }
  assert.ok(checked >= 3, `checked ${checked} defaults`);
});

test("server/README.md's quota table is the server's defaults", () => {
  const help = run(server, ['serve', '--help']);
  const quota = new Map([...help.matchAll(/([a-z]+(?:-[a-z]+)+) \((?:default )?(\d+)/g)].map((m) => [m[1], m[2]]));
  assert.ok(quota.has('records-per-node'), 'the --quota help lists its defaults');
  const rows = {
    'interaction records': [['records-per-node'], ['records-per-key'], ['records-per-network']],
    'telemetry observations': [[], ['observations-per-key'], ['observations-per-anonymous-network', 'observations-per-network']],
    'agent registrations': [[], [], ['registrations-per-network']],
    'gateway calls': [[], ['gateway-calls-per-agent'], ['gateway-calls-per-network']],
  };
  const table = read('server/README.md').split('\n').filter((l) => l.startsWith('| '));
  const seen = new Set();
  for (const [row, columns] of Object.entries(rows)) {
    const line = table.find((l) => l.startsWith(`| ${row}`));
    assert.ok(line, `the quota table has a row for ${row}`);
    const cells = line.split('|').slice(2, 5);
    columns.forEach((names, i) => {
      const numbers = [...plain(cells[i]).matchAll(/\d+/g)].map((m) => m[0]);
      assert.deepEqual(numbers, names.map((n) => quota.get(n)), `${row}: ${names.join(', ') || '(none)'}`);
      names.forEach((n) => seen.add(n));
    });
  }
  assert.deepEqual([...quota.keys()].filter((n) => !seen.has(n)), [], 'every quota has its place in the table');
});

test("every option default the proxy's README states is the one --help prints", () => {
  const help = run(process.execPath, ['npm/lowdown-proxy/bin/lowdown-proxy.js', '--help']);
  const rows = read('npm/lowdown-proxy/README.md').split('\n').filter((l) => l.startsWith('| `--'));
  assert.ok(rows.length >= 5);
  let checked = 0;
  for (const row of rows) {
    const flag = row.match(/`(--[a-z-]+)/)[1];
    const def = row.match(/\(?default:? `([^`]+)`/)?.[1]?.replaceAll('\\|', '|');
    if (!def) continue;
    const line = help.split('\n').find((l) => l.trim().startsWith(flag));
    assert.ok(line, `--help lists ${flag}`);
    const printed = help.slice(help.indexOf(line)).match(/\(default: (.*)\)$/m)[1];
    assert.ok(printed.startsWith(def), `${flag}: README says ${def}, --help says ${printed}`);
    checked++;
  }
  assert.ok(checked >= 3, `checked ${checked} defaults`);
});

test("the hosts' READMEs state the core's delivery figures", async () => {
  const { DELIVERY } = await import(path.join(ROOT, 'npm/lowdown-proxy/src/contract.js'));
  const seconds = (ms) => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);
  const stated = [
    ['npm/lowdown-proxy/README.md', /one request at a time, (\d+ m?s) timeout/, seconds(DELIVERY.SEND_TIMEOUT_MS)],
    ['bindings-python/README.md', /sends batches with a (\d+ m?s) timeout/, seconds(DELIVERY.SEND_TIMEOUT_MS)],
    ['bindings-python/README.md', /waits at most (\d+ m?s) at exit/, seconds(DELIVERY.EXIT_BUDGET_MS)],
    ['npm/lowdown-observe/README.md', /batched: (\d+) observations at most per POST/, String(DELIVERY.BATCH_MAX)],
    ['npm/lowdown-observe/README.md', /A send is abandoned after (\d+ m?s)/, seconds(DELIVERY.SEND_TIMEOUT_MS)],
  ];
  for (const [file, pattern, want] of stated) {
    const got = read(file).replace(/\s+/g, ' ').match(pattern)?.[1];
    assert.ok(got, `${file} no longer says ${pattern}`);
    assert.equal(got, want, `${file}: ${pattern}`);
  }
});
