// What the JavaScript bindings (napi and WASM) themselves promise, beyond the golden vectors:
// state kept across calls, errors a caller can branch on, bytes in and out, misuse refused,
// and error text that never carries the caller's data. Both hosts run these same tests.

import assert from 'node:assert/strict';
import { it } from 'node:test';

const CANARY = 'CANARY_7f3a9c_SECRET';
const enc = (s) => new TextEncoder().encode(s);
const dec = (b) => new TextDecoder().decode(b);

/** Catches the error `fn` throws (failing when it throws none). */
function thrown(fn) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected an error');
}

/** Registers the API tests of one JavaScript host against its `api`. */
export function runApiTests(api) {
  it('Classifier keeps a request split across feeds', () => {
    const c = new api.Classifier();
    const request = enc('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}\n');
    assert.deepEqual(c.feed('client_to_server', request.subarray(0, 20), 1), []);
    assert.equal(c.buffered(), 20);
    assert.deepEqual(c.feed('client_to_server', Buffer.from(request.subarray(20)), 2), []);
    assert.equal(c.pending(), 1);
    const [done] = c.feed('server_to_client', enc('{"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n'), 12.5);
    assert.deepEqual([done.tool_name, done.outcome, done.latency_ms, done.id], ['echo', 'success', 10.5, '7']);
    assert.equal(c.pending(), 0);
  });

  it('Classifier.feedJson gives, as JSON text, what feed gives', () => {
    const session = [
      ['client_to_server', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}\n', 0],
      ['server_to_client', '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}\n', 3],
      ['client_to_server', '{"jsonrpc":"2.0","id":2,"method":"ping"}\n', 4],
    ];
    const [a, b] = [new api.Classifier(), new api.Classifier()];
    for (const [dir, line, at] of session) assert.deepEqual(JSON.parse(b.feedJson(dir, enc(line), at)), a.feed(dir, enc(line), at));
    assert.equal(b.feedJson('server_to_client', enc('not json\n'), 5), '[]');
  });

  it('Classifier.close fails what is still pending', () => {
    const c = new api.Classifier();
    c.feed('client_to_server', enc('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'), 0);
    const [failed] = c.close(50);
    assert.deepEqual([failed.outcome, failed.error_layer, failed.failure_type], ['failure', 'server', 'server_error']);
  });

  it('a bad direction is refused with code invalid_argument', () => {
    const err = thrown(() => new api.Classifier().feed('sideways', enc(''), 0));
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'invalid_argument');
  });

  it('core errors carry code and details naming the field', () => {
    const err = thrown(() =>
      api.validateRecords([{ target: 'npm:x', target_type: 'tool', task_type: 't', outcome: 'nope' }]));
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'unknown_value');
    assert.equal(err.details.path, 'records[0].outcome');
    assert.equal(err.details.index, 0);
    assert.match(err.message, /^records\[0\]\.outcome:/);
  });

  it('error text never echoes the rejected value', () => {
    let err = thrown(() => api.validateRecord({ target: 'npm:x', target_type: CANARY, task_type: 't', outcome: 'success' }));
    assert.equal(err.code, 'unknown_value');
    assert.ok(!err.message.includes(CANARY) && !JSON.stringify(err.details).includes(CANARY));
    err = thrown(() => api.hashToolsResult(enc(`{"tools": [${CANARY}`)));
    assert.equal(err.code, 'invalid_json');
    assert.ok(!err.message.includes(CANARY));
  });

  it('LogDiff refuses a misspelt option and a bad pattern', () => {
    assert.equal(thrown(() => new api.LogDiff({ max_line: 3 })).code, 'invalid_argument');
    assert.equal(thrown(() => new api.LogDiff({ pattern: '(' })).code, 'invalid_pattern');
    assert.doesNotThrow(() => new api.LogDiff());
    assert.doesNotThrow(() => new api.LogDiff(null));
  });

  it('LogDiff quotes redacted lines once', () => {
    const ld = new api.LogDiff({ max_lines: 5 });
    ld.watch('/var/log/app.log', 0);
    const line = enc(`ERROR login failed password=${CANARY}\n`);
    assert.equal(ld.feed('/var/log/app.log', line.length, line), 'read');
    assert.equal(ld.offset('/var/log/app.log'), line.length);
    assert.equal(ld.hasPending(), true);
    const block = ld.takeBlock('10:00:00');
    assert.ok(block.includes('[REDACTED]') && !block.includes(CANARY), block);
    assert.equal(ld.takeBlock('10:00:01') ?? null, null);
  });

  it('appendTextItem returns bytes keeping every other byte', () => {
    const out = api.appendTextItem(enc('{"id":1,  "jsonrpc":"2.0","result":{"content":[],"x":1.50}}'), 'log');
    assert.ok(out instanceof Uint8Array);
    assert.ok(dec(out).startsWith('{"id":1,  "jsonrpc":"2.0","result":{"content":[{"type":"text","text":"log"}],"x":1.50}'));
  });

  it('records flow from the classifier to validation without arguments or results', () => {
    const c = new api.Classifier();
    c.feed('client_to_server', enc(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"${CANARY}"}}}\n`), 0);
    const [ex] = c.feed('server_to_client', enc(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${CANARY}"}]}}\n`), 3);
    const record = api.buildRecord(ex, c.facts(), { target: 'npm:echo', source: 'synthetic' }, 'rec_1');
    assert.ok(!JSON.stringify(record).includes(CANARY));
    assert.equal(api.validateRecord(record).task_type, 'echo');
    assert.equal(thrown(() => api.buildRecord(ex, c.facts(), { target: 'npm:echo', source: 'made_up' })).code, 'invalid_argument');
  });

  it('telemetry keeps only the host, and rollups survive their stored form', () => {
    const policy = new api.HostPolicy('stripe.com', null);
    const obs = api.prepareObservation(`https://api.stripe.com/v1/${CANARY}?k=${CANARY}`, 'get', 200, 12, 10, 'organic', policy);
    assert.equal(obs.host, 'api.stripe.com');
    assert.ok(!JSON.stringify(obs).includes(CANARY));
    assert.equal(api.prepareObservation('http://localhost/', 'GET', 200, 1, null, 'organic', new api.HostPolicy()) ?? null, null);
    const rollup = new api.TelemetryRollup();
    rollup.add(200, 12, api.weightTier(false, true));
    const other = new api.TelemetryRollup(JSON.parse(JSON.stringify(rollup.toJSON())));
    other.merge(rollup);
    assert.equal(other.summary().observations, 2);
  });

  it('defaults are the core constants', () => {
    const d = api.defaults();
    assert.equal(d.API_URL, 'http://127.0.0.1:7077');
    assert.equal(d.NODE_ID_HEADER, 'x-lowdown-node-id');
    assert.equal(Object.keys(d).length, 7);
  });

  it('results are plain JSON objects, integers as numbers', () => {
    const s = api.summarize({ organic: { success: 5_000_000_000 } });
    assert.equal(typeof s.interactions, 'number');
    assert.equal(s.interactions, 5_000_000_000);
    assert.equal(Object.getPrototypeOf(s), Object.prototype);
    assert.deepEqual(api.acceptedEpochs(0), [0, -1]);
  });
}
