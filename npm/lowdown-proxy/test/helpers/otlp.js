// A real OTLP/HTTP endpoint for the proxy's OpenTelemetry export: protobuf bodies are decoded
// with the OpenTelemetry JS SDK's own generated protobuf root (@opentelemetry/otlp-transformer,
// built from opentelemetry-proto), JSON bodies are read as the OTLP JSON mapping says (ids
// in hex, 64-bit integers as strings). Both come out in one shape for the assertions.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** The SDK's protobuf root: `opentelemetry.proto.*`. */
export const proto = createRequire(require.resolve('@opentelemetry/otlp-transformer'))('./generated/root.js').opentelemetry.proto;

const TraceRequest = proto.collector.trace.v1.ExportTraceServiceRequest;
const MetricsRequest = proto.collector.metrics.v1.ExportMetricsServiceRequest;

/** protobufjs' toObject options that give the OTLP JSON mapping's shapes (but ids in base64). */
const AS_JSON = { longs: String, enums: Number, bytes: String, defaults: false, arrays: true };

/** @param {{key: string, value: Record<string, unknown>}[]} [attrs] */
const attrMap = (attrs = []) => Object.fromEntries(attrs.map((a) => [a.key, a.value.stringValue ?? a.value.boolValue ?? a.value.intValue ?? a.value.doubleValue]));
/** @param {string} b64 */
const hex = (b64) => Buffer.from(b64, 'base64').toString('hex');

/**
 * One export request as plain data.
 * @param {'traces'|'metrics'} signal
 * @param {string} contentType
 * @param {Buffer} body
 */
export function decode(signal, contentType, body) {
  const isProto = contentType === 'application/x-protobuf';
  if (!isProto && contentType !== 'application/json') throw new Error(`unexpected content-type ${contentType}`);
  const Req = signal === 'traces' ? TraceRequest : MetricsRequest;
  // Protobuf: decoded strictly by the SDK's generated code (unknown or mistyped fields fail).
  const obj = isProto ? Req.toObject(Req.decode(body), AS_JSON) : JSON.parse(body.toString('utf8'));
  if (signal === 'traces') {
    return obj.resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((s) => ({
          resource: attrMap(rs.resource?.attributes),
          scope: ss.scope,
          name: s.name,
          kind: s.kind,
          traceId: isProto ? hex(s.traceId) : s.traceId,
          spanId: isProto ? hex(s.spanId) : s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          start: BigInt(s.startTimeUnixNano),
          end: BigInt(s.endTimeUnixNano),
          attributes: attrMap(s.attributes),
          status: s.status?.code ?? 0,
          statusMessage: s.status?.message ?? '',
        })),
      ),
    );
  }
  return obj.resourceMetrics.flatMap((rm) =>
    rm.scopeMetrics.flatMap((sm) =>
      sm.metrics.map((m) => ({
        resource: attrMap(rm.resource?.attributes),
        name: m.name,
        unit: m.unit,
        temporality: m.histogram?.aggregationTemporality,
        points: (m.histogram?.dataPoints ?? []).map((p) => ({
          attributes: attrMap(p.attributes),
          count: Number(p.count),
          sum: p.sum,
          bucketCounts: p.bucketCounts.map(Number),
          explicitBounds: p.explicitBounds,
          start: BigInt(p.startTimeUnixNano),
          time: BigInt(p.timeUnixNano),
        })),
      })),
    ),
  );
}

/**
 * An OTLP/HTTP receiver on a free port: `mode` `ok` answers 200, `refuse` 500, `hang` never.
 * @param {import('node:test').TestContext} t
 * @param {'ok'|'refuse'|'hang'} [mode]
 */
export async function startReceiver(t, mode = 'ok') {
  /** @type {{path: string, headers: http.IncomingHttpHeaders, body: Buffer, at: number}[]} */
  const requests = [];
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: performance.now() });
      if (mode === 'hang') return;
      res.writeHead(mode === 'ok' ? 200 : 500, { 'content-type': req.headers['content-type'] ?? 'application/json' }).end();
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', () => r(undefined)));
  t.after(() => {
    srv.closeAllConnections();
    srv.close();
  });
  const address = /** @type {import('node:net').AddressInfo} */ (srv.address());
  const signalOf = (p) => (p === '/v1/traces' ? 'traces' : p === '/v1/metrics' ? 'metrics' : null);
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    /** Every span received, decoded. */
    spans: () => requests.filter((r) => signalOf(r.path) === 'traces').flatMap((r) => decode('traces', String(r.headers['content-type']), r.body)),
    /** The last metrics export received, decoded (cumulative: it holds the totals). */
    lastMetrics: () => {
      const m = requests.filter((r) => signalOf(r.path) === 'metrics').at(-1);
      return m ? decode('metrics', String(m.headers['content-type']), m.body) : [];
    },
    bytes: () => Buffer.concat(requests.map((r) => r.body)),
  };
}
