// The README cannot rot: its set-up block names exactly the two commands, every relative
// link points at a file, and its curl walkthrough runs against a real lowdown-server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_BIN } from '../../npm/lowdown-proxy/test/helpers/lowdown-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);

test('the set-up block has exactly the two commands a newcomer runs', () => {
  const commands = blocks[0].split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
  assert.deepEqual(commands, ['make demo', 'make test']);
});

test('every relative link in the README points at a file in the tree', () => {
  const links = [...README.matchAll(/\]\(([^)#:]+)\)/g)].map((m) => m[1]);
  assert.ok(links.length >= 5);
  for (const link of links) assert.ok(existsSync(path.join(ROOT, link)), `README links to missing ${link}`);
});

test('the curl walkthrough records an interaction and reads it back', async (t) => {
  const walkthrough = blocks.find((b) => b.includes('curl'));
  assert.ok(walkthrough, 'README has a curl block');
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
  const home = mkdtempSync(path.join(tmpdir(), 'lowdown-readme-'));
  const server = spawn(SERVER_BIN, ['--listen', `127.0.0.1:${port}`, '--db', path.join(home, 'db.sqlite')], {
    env: { ...process.env, LOWDOWN_HOME: home },
    stdio: 'ignore',
  });
  t.after(() => { server.kill('SIGTERM'); rmSync(home, { recursive: true, force: true }); });
  for (let i = 0; ; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break; } catch {}
    assert.ok(i < 200, 'lowdown-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const script = walkthrough.replaceAll('http://127.0.0.1:7077', `http://127.0.0.1:${port}`);
  const stdout = await new Promise((resolve, reject) =>
    execFile('bash', ['-euo', 'pipefail', '-c', script], (err, out, errOut) => (err ? reject(new Error(errOut || err.message)) : resolve(out))));
  const [posted, answer] = stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(posted.ok, true);
  assert.equal(posted.accepted, 1);
  assert.equal(answer.resolved_target, 'npm:some-mcp-server', 'the short name resolves to the recorded target');
  assert.equal(answer.interactions, 1);
  assert.equal(answer.success_rate, 1);
});
