// What the JavaScript binding (lowdown-core, napi and WebAssembly builds alike) promises beyond
// the golden vectors: a session's records as JSON lines with the host's ids, state kept across
// feeds, errors a caller can branch on, bytes in and out, misuse refused, and error text that
// never carries the caller's data. Both builds run these same tests.

import assert from 'node:assert/strict';
import { it } from 'node:test';

const CANARY = 'CANARY_7f3a9c_SECRET';
const enc = (s) => new TextEncoder().encode(s);
const dec = (b) => new TextDecoder().decode(b);
const lines = (text) => (text === '' ? [] : text.split('\n').map((l) => JSON.parse(l)));

/** Catches the error `fn` throws (failing when it throws none). */
function thrown(fn) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected an error');
}

const CALL = (id, name) => enc(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"q":"${CANARY}"}}}\n`);
const RESULT = (id, extra = '') => enc(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${CANARY}"}]${extra}}}\n`);

/** Registers the API tests of one JavaScript build against its `api`. */
export function runApiTests(api) {
  it('Recorder returns finished records as JSON lines, ids from the prefix, never arguments or results', () => {
    const r = new api.Recorder(JSON.stringify({ target: 'npm:echo', actor: 'agent:t', node_id: 'ld_0123456789ab' }), 'sess1');
    assert.equal(r.feed('client_to_server', CALL(1, 'echo'), 10), '');
    const text = r.feed('server_to_client', RESULT(1), 22.5);
    assert.ok(!text.includes(CANARY), text);
    const [rec] = lines(text);
    assert.deepEqual([rec.record_id, rec.target, rec.actor, rec.task_type, rec.outcome, rec.latency_ms, rec.node_id],
      ['sess1-0', 'npm:echo', 'agent:t', 'echo', 'success', 12.5, 'ld_0123456789ab']);
  });

  it('Recorder keeps a request split across feeds; at close, who ended the session decides', () => {
    for (const [reason, outcome] of [['server_ended', 'failure'], ['client_ended', 'cancelled']]) {
      const r = new api.Recorder(null, 'p');
      const call = CALL(7, 'slow');
      assert.equal(r.feed('client_to_server', call.subarray(0, 20), 1), '');
      assert.equal(r.feed('client_to_server', Buffer.from(call.subarray(20)), 2), '');
      const [rec] = lines(r.close(50, reason));
      assert.deepEqual([rec.task_type, rec.outcome, rec.target, rec.actor], ['slow', outcome, '', 'anonymous']);
      assert.equal(rec.record_id, 'p-0');
    }
    assert.equal(thrown(() => new api.Recorder(null, 'q').close(1, 'whoever')).code, 'invalid_argument');
  });

  it('Recorder.flags says when a tools/call result can carry the --watch-log block', () => {
    const r = new api.Recorder(null, 'f');
    r.feed('client_to_server', CALL(1, 'a'), 0);
    r.feed('server_to_client', RESULT(1), 1);
    assert.equal(r.flags(), 1);
    r.feed('client_to_server', enc('{"jsonrpc":"2.0","id":2,"method":"ping"}\n'), 2);
    r.feed('server_to_client', enc('{"jsonrpc":"2.0","id":2,"result":{}}\n'), 3);
    assert.equal(r.flags(), 0);
  });

  it('a bad direction or context is refused with code invalid_argument, without echoing it', () => {
    const r = new api.Recorder(null, 'x');
    const err = thrown(() => r.feed(`sideways ${CANARY}`, enc(''), 0));
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'invalid_argument');
    assert.ok(!err.message.includes(CANARY));
    assert.equal(thrown(() => new api.Recorder('{"taget":"x"}', 'x')).code, 'invalid_argument');
    assert.equal(thrown(() => new api.Recorder('{"source":"elsewhere"}', 'x')).code, 'invalid_argument');
    assert.equal(thrown(() => new api.Recorder('not json', 'x')).code, 'invalid_argument');
  });

  it('LogDiff refuses a bad pattern with code invalid_pattern and quotes new matching lines', () => {
    assert.equal(thrown(() => new api.LogDiff(JSON.stringify({ pattern: '(' }))).code, 'invalid_pattern');
    const ld = new api.LogDiff(null);
    ld.watch('/var/log/app.log', 0);
    assert.equal(ld.feed('/var/log/app.log', 30, enc(`ok\nfatal: token=${CANARY}\n`)), 'read');
    assert.equal(ld.hasPending(), true);
    const block = ld.takeBlock('10:00:00');
    assert.match(block, /\/var\/log\/app\.log: 1 new line/);
    assert.ok(!block.includes(CANARY), 'the secret is redacted before it is quoted');
    assert.deepEqual(ld.paths(), ['/var/log/app.log']);
  });

  it('appendTextItem takes and gives bytes', () => {
    const out = api.appendTextItem(enc('{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'), 'hi');
    assert.ok(out instanceof Uint8Array);
    assert.equal(JSON.parse(dec(out)).result.content[0].text, 'hi');
    assert.equal(api.appendTextItem(enc('{"jsonrpc":"2.0","id":1,"error":{"code":1}}'), 'hi'), null);
  });

  it('prepareObservation keeps the host only, and refuses a bad source', () => {
    const policy = new api.HostPolicy(null, null);
    const obs = JSON.parse(api.prepareObservation(`https://api.example.com/v1/${CANARY}?k=${CANARY}`, 'get', 200, 12, 5, 'organic', policy));
    assert.equal(obs.host, 'api.example.com');
    assert.ok(!JSON.stringify(obs).includes(CANARY));
    assert.equal(api.prepareObservation('http://10.0.0.1/x', 'GET', 200, 1, null, 'organic', policy), null);
    assert.equal(thrown(() => api.prepareObservation('https://a.example/', 'GET', 200, 1, null, 'nope', policy)).code, 'invalid_argument');
  });

  it('expandPath reads variables from JSON', () => {
    assert.equal(api.expandPath('$LOGS/app.log', JSON.stringify({ LOGS: '/srv' }), null), '/srv/app.log');
    assert.equal(thrown(() => api.expandPath('x', '[', null)).code, 'invalid_argument');
  });
}
