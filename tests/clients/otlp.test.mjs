// OpenTelemetry in (issue 27): real OTel SDKs from the registries, nobody here wrote them,
// export MCP client spans and the `mcp.client.operation.duration` histogram to a real
// lowdown-server over OTLP/HTTP, as an instrumented agent does:
//
// - the Python SDK (`opentelemetry-sdk` 1.45.2) with `opentelemetry-exporter-otlp-proto-http`
//   (protobuf) and `opentelemetry-exporter-otlp-json-http` (JSON), in otlp_python.py;
// - the JS SDK (`@opentelemetry/sdk-trace`, `@opentelemetry/sdk-metrics` 3.1) with
//   `@opentelemetry/exporter-trace-otlp-http` (JSON) and `-proto` (protobuf), and the
//   metrics exporters of both.
//
// Checked in the answers: a tool call is a tool interaction, `tool_error` a failure that
// counts, -32602 a rejection, other methods protocol requests, notifications and non-MCP
// spans no records; the histogram adds nothing (no double counting); canaries in every
// attribute, event and status message not mapped appear nowhere, in answers or database.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { startLowdownServer } from '../../npm/lowdown-proxy/test/helpers/lowdown-server.js';

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PYTHON = process.env.PY ?? path.join(ROOT, '.venv/bin/python');
const CANARY_JS = 'CANARY_otlp_node_3b9';
const CANARY_PY = 'CANARY_otlp_python_7c2';

let server;
before(async () => {
  server = await startLowdownServer('lowdown-otlp-');
});
after(async () => {
  await server?.stop();
});

async function reputation(target) {
  const res = await fetch(`${server.url}/api/reputation/${target}`);
  assert.equal(res.status, 200);
  const text = await res.text();
  for (const canary of [CANARY_JS, CANARY_PY]) assert.ok(!text.includes(canary), `${canary} in an answer`);
  return JSON.parse(text);
}

/** What the session of the exporters below sent: 5 tool calls (3 successes, a tool error,
 * a -32602 rejection) and 2 protocol requests; a notification and an HTTP span refused. */
function assertSession(r) {
  assert.equal(r.interactions, 5, JSON.stringify(r));
  assert.equal(r.rated_interactions, 4);
  assert.equal(r.success_rate, 0.75);
  assert.equal(r.rejected_requests, 1);
  assert.equal(r.protocol_requests, 2);
  assert.deepEqual(r.failure_breakdown, { tool_error: 1 });
  assert.equal(r.by_source.organic, 5);
}

/** The JS SDK, its exporters wrapped only to keep their results. */
async function nodeSession(Trace, Metric, where) {
  const results = { traces: [], metrics: [] };
  const keep = (exporter, into) => ({
    export: (items, done) => exporter.export(items, (r) => { into.push(r.code); done(r); }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.(),
    selectAggregationTemporality: exporter.selectAggregationTemporality?.bind(exporter),
    selectAggregation: exporter.selectAggregation?.bind(exporter),
  });
  const resource = resourceFromAttributes({ 'service.name': CANARY_JS, 'host.name': CANARY_JS });
  const traces = new TracerProvider({
    resource,
    spanProcessors: [new SimpleSpanProcessor({ exporter: keep(new Trace({ url: `${server.url}/v1/traces` }), results.traces) })],
  });
  const reader = new PeriodicExportingMetricReader({
    exporter: keep(new Metric({ url: `${server.url}/v1/metrics` }), results.metrics),
    exportIntervalMillis: 3_600_000,
  });
  const meters = new MeterProvider({ resource, readers: [reader] });
  const tracer = traces.getTracer('mcp.client.example', '1.0.0');
  const duration = meters.getMeter('mcp.client.example').createHistogram('mcp.client.operation.duration', { unit: 's' });
  const exchange = (method, tool, error) => {
    const attributes = { 'mcp.method.name': method, 'network.transport': 'tcp', ...where };
    if (tool) Object.assign(attributes, { 'gen_ai.tool.name': tool, 'gen_ai.operation.name': 'execute_tool' });
    const span = tracer.startSpan(tool ? `${method} ${tool}` : method, {
      kind: SpanKind.CLIENT,
      attributes: { ...attributes, 'gen_ai.tool.call.arguments': JSON.stringify({ q: CANARY_JS }) },
    });
    span.addEvent('mcp.request', { payload: CANARY_JS });
    if (error) {
      span.setAttribute('error.type', error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: CANARY_JS });
      attributes['error.type'] = error;
    }
    span.end();
    duration.record(0.05, attributes);
  };
  exchange('initialize');
  exchange('tools/list');
  for (let i = 0; i < 3; i++) exchange('tools/call', 'search_docs');
  exchange('tools/call', 'search_docs', 'tool_error');
  exchange('tools/call', 'search_docs', '-32602');
  exchange('notifications/initialized');
  tracer.startSpan('GET /docs', { kind: SpanKind.CLIENT, attributes: { 'url.full': CANARY_JS } }).end();
  await traces.forceFlush();
  await meters.forceFlush();
  await traces.shutdown();
  await meters.shutdown();
  return results;
}

for (const [name, Trace, Metric, where, target] of [
  ['JSON', JsonTraceExporter, JsonMetricExporter, { 'server.address': 'mcp.docs.example.com' }, 'url:mcp.docs.example.com'],
  ['protobuf', ProtoTraceExporter, ProtoMetricExporter, { 'lowdown.target': 'npm:@acme/docs-mcp' }, 'npm:@acme/docs-mcp'],
]) {
  test(`the JS SDK's OTLP/HTTP ${name} exporters: spans become records, the histogram adds nothing`, async () => {
    const results = await nodeSession(Trace, Metric, where);
    // Every export answered success (a partial success is a success to the SDK).
    assert.ok(results.traces.length >= 1 && results.traces.every((c) => c === 0), JSON.stringify(results));
    assert.ok(results.metrics.length >= 1 && results.metrics.every((c) => c === 0), JSON.stringify(results));
    assertSession(await reputation(target));
  });
}

for (const [encoding, mode, target] of [
  ['protobuf', 'address', 'url:mcp.forecast.example.com'],
  ['json', 'pypi:forecast-mcp', 'pypi:forecast-mcp'],
]) {
  test(`the Python SDK's OTLP/HTTP ${encoding} exporters: spans become records, the histogram adds nothing`, async () => {
    const { stdout } = await run(PYTHON, [path.join(HERE, 'otlp_python.py'), server.url, encoding, mode], { timeout: 120_000 });
    const results = JSON.parse(stdout);
    assert.ok(results.traces.length >= 1 && results.traces.every((r) => r === 'SUCCESS'), stdout);
    assert.ok(results.metrics.length >= 1 && results.metrics.every((r) => r === 'SUCCESS'), stdout);
    const r = await reputation(target);
    assertSession(r);
  });
}

test('no canary from any SDK reached the database', () => {
  for (const file of [server.db, `${server.db}-wal`]) {
    if (!fs.existsSync(file)) continue;
    const bytes = fs.readFileSync(file);
    for (const canary of [CANARY_JS, CANARY_PY]) assert.equal(bytes.indexOf(canary), -1, `${canary} in ${file}`);
  }
});
