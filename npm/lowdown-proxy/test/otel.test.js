// The proxy as an MCP instrumentation (issue 27): a real session (the SDK client and
// server-everything) through the proxy with OpenTelemetry export on, received by a real
// OTLP/HTTP endpoint that decodes with the OpenTelemetry SDK's protobuf root; names, attribute
// keys and values are the constants of @opentelemetry/semantic-conventions (incubating), the
// bucket boundaries the ones the conventions advise for mcp.client.operation.duration. A
// collector that refuses or hangs leaves the relay byte-exact and the exit within its budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_NETWORK_TRANSPORT,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  MCP_METHOD_NAME_VALUE_INITIALIZE,
  MCP_METHOD_NAME_VALUE_TOOLS_CALL,
  MCP_METHOD_NAME_VALUE_TOOLS_LIST,
  METRIC_MCP_CLIENT_OPERATION_DURATION,
  NETWORK_TRANSPORT_VALUE_PIPE,
} from '@opentelemetry/semantic-conventions/incubating';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { PROXY, EVERYTHING, SDK_SERVER, tempDir, run, alive } from './helpers/run.js';
import { startApi, eventually } from './helpers/api.js';
import { everythingSession, connect, CANARY } from './helpers/scenario.js';
import { startReceiver, proto } from './helpers/otlp.js';

const node = process.execPath;
const TARGET = 'npm:@modelcontextprotocol/server-everything';
const SPAN_KIND_CLIENT = proto.trace.v1.Span.SpanKind.SPAN_KIND_CLIENT;
const STATUS_CODE_ERROR = proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR;
const STATUS_CODE_UNSET = proto.trace.v1.Status.StatusCode.STATUS_CODE_UNSET;
const CUMULATIVE = proto.metrics.v1.AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE;
/**
 * The explicit bucket boundaries the conventions advise for mcp.client.operation.duration
 * (docs/gen-ai/mcp.md; @opentelemetry/semantic-conventions ships names, not advice).
 */
const ADVISED_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** The environment of a proxy exporting to `url`, the user's OTel settings plus the switch. */
function otelEnv(t, url, extra = {}) {
  return {
    ...process.env,
    LOWDOWN_HOME: tempDir(t),
    LOWDOWN_OTEL: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20otel-token',
    OTEL_SERVICE_NAME: 'agent-under-test',
    ...extra,
  };
}

/** Waits until the process `pid` has exited. */
const exited = (pid) => eventually(() => !alive(pid), 'the proxy to exit', 10000);

/** What the client saw of a call, as the span's error.type must say it. */
function expectedErrorType(outcome) {
  if (outcome.error) return String(outcome.error.code);
  return outcome.result.isError ? 'tool_error' : undefined;
}

for (const protocol of ['http/protobuf', 'http/json']) {
  test(`a server-everything session exports MCP client spans and the duration histogram (${protocol})`, async (t) => {
    const receiver = await startReceiver(t);
    const extra = { OTEL_EXPORTER_OTLP_PROTOCOL: protocol };
    if (protocol === 'http/protobuf') extra.LOWDOWN_API_URL = (await startApi(t)).url;
    else extra.LOWDOWN_RECORD = '0'; // export works without records too
    const env = otelEnv(t, receiver.url, extra);
    // With --watch-log the spans are built on the relay thread and exported from the
    // recording thread; without it both happen there.
    const watch = protocol === 'http/json' ? ['--watch-log', path.join(env.LOWDOWN_HOME, 'app.log')] : [];
    const before = BigInt(Date.now()) * 1_000_000n;
    const { out, pid } = await everythingSession(node, [PROXY, '--target', TARGET, ...watch, '--', node, EVERYTHING, 'stdio'], env);
    await exited(pid);
    const after = BigInt(Date.now()) * 1_000_000n;
    // Flushed when the session ended, within its exit budget: nothing arrives later.
    const spans = receiver.spans();
    const contentType = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
    for (const r of receiver.requests) {
      assert.equal(r.headers['content-type'], contentType);
      assert.equal(r.headers.authorization, 'Bearer otel-token', 'OTEL_EXPORTER_OTLP_HEADERS, percent-decoded');
      assert.ok(['/v1/traces', '/v1/metrics'].includes(r.path), r.path);
    }

    assert.equal(spans.length, 12, `one span per client request: ${spans.map((s) => s.name)}`);
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 12, 'each exchange its own trace');
    for (const s of spans) {
      assert.equal(s.kind, SPAN_KIND_CLIENT);
      assert.match(s.traceId, /^[0-9a-f]{32}$/);
      assert.match(s.spanId, /^[0-9a-f]{16}$/);
      assert.equal(s.resource[ATTR_SERVICE_NAME], 'agent-under-test');
      assert.equal(s.scope.name, 'lowdown-proxy');
      assert.equal(s.attributes[ATTR_NETWORK_TRANSPORT], NETWORK_TRANSPORT_VALUE_PIPE);
      assert.equal(s.attributes['lowdown.target'], TARGET);
      assert.ok(s.attributes[ATTR_JSONRPC_REQUEST_ID] !== undefined);
      assert.ok(s.start >= before && s.end >= s.start && s.end <= after, 'times are the exchange\'s');
      assert.equal(s.statusMessage, '', 'no error text in the status');
      // error.type iff the operation failed, and then the status is ERROR
      assert.equal(s.status, s.attributes[ATTR_ERROR_TYPE] === undefined ? STATUS_CODE_UNSET : STATUS_CODE_ERROR, s.name);
      const method = s.attributes[ATTR_MCP_METHOD_NAME];
      const tool = s.attributes[ATTR_GEN_AI_TOOL_NAME];
      if (method === MCP_METHOD_NAME_VALUE_TOOLS_CALL) {
        assert.equal(s.name, `${method} ${tool}`);
        assert.equal(s.attributes[ATTR_GEN_AI_OPERATION_NAME], GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL);
      } else {
        assert.equal(s.name, method);
        assert.equal(tool, undefined);
        assert.equal(s.attributes[ATTR_GEN_AI_OPERATION_NAME], undefined, 'execute_tool only for tool calls');
      }
    }
    const byName = (name) => spans.filter((s) => s.name === name);
    const one = (name) => {
      const found = byName(name);
      assert.equal(found.length, 1, `one ${name}`);
      return found[0];
    };
    assert.equal(one(MCP_METHOD_NAME_VALUE_INITIALIZE).attributes[ATTR_ERROR_TYPE], undefined);
    const sum = one('tools/call get-sum');
    assert.equal(sum.attributes[ATTR_ERROR_TYPE], undefined);
    assert.equal(sum.attributes[ATTR_MCP_PROTOCOL_VERSION], one(MCP_METHOD_NAME_VALUE_INITIALIZE).attributes[ATTR_MCP_PROTOCOL_VERSION] ?? sum.attributes[ATTR_MCP_PROTOCOL_VERSION]);
    assert.ok(sum.attributes[ATTR_MCP_PROTOCOL_VERSION], 'mcp.protocol.version');
    assert.equal(sum.attributes['lowdown.server.name'], out.serverVersion.name, "the server's self-reported name");
    assert.equal(sum.attributes['lowdown.server.version'], out.serverVersion.version, "and version");
    assert.equal(sum.attributes['lowdown.outcome'], 'success');
    assert.ok(one(MCP_METHOD_NAME_VALUE_TOOLS_LIST));

    // Failures: error.type as the conventions say, Lowdown's layer beside it.
    const unknown = one('tools/call no-such-tool');
    assert.equal(unknown.attributes[ATTR_ERROR_TYPE], expectedErrorType(out.unknownTool));
    assert.equal(unknown.attributes['lowdown.error_layer'], 'request', "a rejection: the caller's fault");
    const echoes = byName('tools/call echo');
    const bad = echoes.find((s) => s.attributes[ATTR_ERROR_TYPE] !== undefined);
    assert.equal(bad.attributes[ATTR_ERROR_TYPE], expectedErrorType(out.invalidArgs));
    assert.equal(bad.attributes['lowdown.error_layer'], 'request');
    assert.equal(echoes.filter((s) => s.attributes[ATTR_ERROR_TYPE] === undefined).length, 1);
    const method = one('lowdown/no-such-method');
    assert.equal(method.attributes[ATTR_ERROR_TYPE], String(out.unknownMethod.error.code));
    assert.equal(method.attributes[ATTR_RPC_RESPONSE_STATUS_CODE], String(out.unknownMethod.error.code));
    assert.equal(method.attributes['lowdown.error_layer'], 'request');
    const longRuns = byName('tools/call trigger-long-running-operation').map((s) => s.attributes[ATTR_ERROR_TYPE] ?? 'ok').sort();
    assert.deepEqual(longRuns, ['cancelled', 'ok']);
    for (const m of ['roots/list', 'sampling/createMessage', 'elicitation/create']) assert.equal(byName(m).length, 0, `${m} is the server's request`);

    // The histogram: cumulative, in seconds, the advised buckets, one point per attribute set.
    const metrics = receiver.lastMetrics();
    assert.equal(metrics.length, 1);
    const [m] = metrics;
    assert.equal(m.name, METRIC_MCP_CLIENT_OPERATION_DURATION);
    assert.equal(m.unit, 's');
    assert.equal(m.temporality, CUMULATIVE);
    assert.equal(m.resource[ATTR_SERVICE_NAME], 'agent-under-test');
    assert.equal(m.points.reduce((n, p) => n + p.count, 0), 12);
    for (const p of m.points) {
      assert.deepEqual(p.explicitBounds, ADVISED_BUCKETS);
      assert.equal(p.bucketCounts.length, ADVISED_BUCKETS.length + 1);
      assert.equal(p.bucketCounts.reduce((a, b) => a + b, 0), p.count);
      assert.equal(p.attributes[ATTR_JSONRPC_REQUEST_ID], undefined, 'no per-request attribute on a metric');
      assert.ok(p.sum >= 0 && p.time >= p.start);
    }
    const sumPoint = m.points.find((p) => p.attributes[ATTR_GEN_AI_TOOL_NAME] === 'get-sum');
    assert.equal(sumPoint.count, 1);
    assert.equal(sumPoint.attributes[ATTR_MCP_METHOD_NAME], MCP_METHOD_NAME_VALUE_TOOLS_CALL);
    const seconds = Number(sum.end - sum.start) / 1e9;
    const bucket = ADVISED_BUCKETS.findIndex((b) => seconds <= b);
    assert.equal(sumPoint.bucketCounts[bucket === -1 ? ADVISED_BUCKETS.length : bucket], 1, 'the duration is in its bucket');

    // Never arguments, results, roots, sampling text or error messages.
    const all = receiver.bytes().toString('latin1');
    for (const c of Object.values(CANARY)) assert.ok(!all.includes(c), `${c} exported`);
    assert.ok(!all.includes('Unknown tool') && !all.includes('not found'), 'no error text exported');
  });
}

test('LOWDOWN_OTEL unset: nothing is exported, whatever OTEL_* says', async (t) => {
  const receiver = await startReceiver(t);
  const env = otelEnv(t, receiver.url, { LOWDOWN_RECORD: '0' });
  delete env.LOWDOWN_OTEL;
  env.OTEL_TRACES_EXPORTER = 'otlp';
  const c = await connect(node, [PROXY, '--', node, SDK_SERVER], env);
  await c.client.callTool({ name: 'echo', arguments: { message: 'x' } });
  const pid = c.transport.pid;
  await c.client.close();
  await exited(pid);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(receiver.requests.length, 0);
});

/** A raw server-everything session, chunk by chunk with pauses (so an export is due mid-session). */
const RAW = [
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n',
  '{"jsonrpc":"2.0","id":"2","method":"tools/list"}\n{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"raw \u2603 ☃"}}}\n',
  '{"jsonrpc":"2.0","id":4,"method":"ping"}\n',
  '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}\n',
  'garbage\n',
];

for (const mode of /** @type {const} */ (['hang', 'refuse'])) {
  test(`a collector that ${mode === 'hang' ? 'hangs' : 'refuses (500)'} leaves the relay byte-exact and the exit within its budget`, async (t) => {
    const receiver = await startReceiver(t, mode);
    const env = otelEnv(t, receiver.url, { LOWDOWN_RECORD: '0' });
    const a = await run(node, [EVERYTHING, 'stdio'], { chunks: RAW, gapMs: 300, env });
    let endedAt = 0;
    const b = await run(node, [PROXY, '--', node, EVERYTHING, 'stdio'], {
      chunks: RAW,
      gapMs: 300,
      env,
      onSpawn: (child) => child.stdout.on('end', () => (endedAt = performance.now())),
    });
    const exitedAt = performance.now();
    assert.ok(receiver.requests.length >= 1, 'the collector was asked during the session');
    // Every line byte-identical (the server answers concurrent requests in any order).
    const lines = (buf) => buf.toString('latin1').split('\n').sort();
    assert.equal(b.stdout.length, a.stdout.length);
    assert.deepEqual(lines(b.stdout), lines(a.stdout));
    assert.equal(b.code, a.code);
    assert.equal(b.stderr, a.stderr, 'the proxy says nothing on stderr about the collector');
    // A hanging request would take the default 10 s timeout; the exit waits the budget only.
    assert.ok(exitedAt - endedAt < 1500, `exit ${Math.round(exitedAt - endedAt)} ms after the output ended`);
  });
}

test("the README's OpenTelemetry example works as documented", async (t) => {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('LOWDOWN_OTEL=1'));
  assert.ok(block, 'the example is in the README');
  const words = block.replace(/\\\n/g, ' ').trim().split(/\s+/);
  const receiver = await startReceiver(t);
  const env = { ...process.env, LOWDOWN_HOME: tempDir(t), LOWDOWN_RECORD: '0' };
  let i = 0;
  for (; /^[A-Z_]+=/.test(words[i]); i += 1) {
    const [k, v] = words[i].split('=');
    // The documented endpoint is the collector's default address; here it is the receiver's.
    env[k] = k === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? receiver.url : v;
  }
  assert.deepEqual(words.slice(i), ['npx', 'lowdown-proxy', '--', 'npx', '-y', '@modelcontextprotocol/server-everything']);
  const c = await connect(node, [PROXY, '--', node, EVERYTHING, 'stdio'], env);
  await c.client.callTool({ name: 'echo', arguments: { message: 'readme' } });
  const pid = c.transport.pid;
  await c.client.close();
  await exited(pid);
  assert.ok(receiver.spans().some((s) => s.name === 'tools/call echo'), JSON.stringify(receiver.spans().map((s) => s.name)));
});
