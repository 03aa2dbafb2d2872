// server/scripts/pg-start.sh with the real PostgreSQL, in a cluster of its own: a port that
// something else holds must not stop the test suites (the next free port is used, and the
// URL printed names it), and a server that cannot start must say why.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PGROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'lowdown-pg-start-'));
// The cluster's own root and no inherited PGPORT: a PGPORT exported for another cluster
// would make the later starts find that one instead of this test's.
const { PGPORT: _inherited, ...parent } = process.env;
const env = { ...parent, PGROOT };
const script = (name) => spawnSync('bash', [path.join(ROOT, 'server/scripts', name)], { env, encoding: 'utf8', timeout: 120_000 });

after(() => {
  script('pg-stop.sh');
  fs.rmSync(PGROOT, { recursive: true, force: true });
});

test('a port something else holds: the cluster starts on the next one and later starts find it', async () => {
  const holder = net.createServer();
  await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const taken = holder.address().port;
  try {
    const first = spawnSync('bash', [path.join(ROOT, 'server/scripts/pg-start.sh')],
      { env: { ...env, PGPORT: String(taken) }, encoding: 'utf8', timeout: 120_000 });
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stderr, new RegExp(`127\\.0\\.0\\.1:${taken} is taken; trying the next port`));
    const port = Number(first.stdout.trim().match(/^postgres:\/\/postgres@127\.0\.0\.1:(\d+)\/lowdown_test$/)[1]);
    assert.ok(port > taken && port <= taken + 7, `started on ${port}`);

    const again = script('pg-start.sh');
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.stdout, first.stdout, 'the second start names the same server');
    assert.match(again.stderr, /already answers/);
  } finally {
    holder.close();
  }
});

test('a server that cannot start: pg-start fails and prints the reason from the server log', () => {
  assert.equal(script('pg-stop.sh').status, 0);
  fs.appendFileSync(path.join(PGROOT, 'data/postgresql.conf'), "shared_buffers = '12 parsecs'\n");
  const r = script('pg-start.sh');
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, '', 'no URL for a server that is not running');
  assert.match(r.stderr, /PostgreSQL did not start; the end of .*postgres\.log:/);
  assert.match(r.stderr, /invalid value for parameter "shared_buffers"/);
});
