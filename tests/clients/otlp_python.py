"""MCP client spans and the duration histogram from the OpenTelemetry Python SDK, exported to
a lowdown-server with the SDK's own OTLP/HTTP exporters (protobuf or JSON), as an
instrumented agent would. Used by otlp.test.mjs.

    python otlp_python.py BASE_URL protobuf|json TARGET_MODE

TARGET_MODE is `address` (spans carry `server.address`, the target is `url:<address>`) or a
label set as `lowdown.target` on every span. Prints {"traces": [...], "metrics": [...]}: the
exporters' results, one per export.
"""

import json
import sys

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

CANARY = "CANARY_otlp_python_7c2"

base, encoding, target_mode = sys.argv[1], sys.argv[2], sys.argv[3]
if encoding == "protobuf":
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
else:
    from opentelemetry.exporter.otlp.json.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter

results = {"traces": [], "metrics": []}


class Recording(SpanExporter):
    """The SDK's exporter, its results kept."""

    def __init__(self, inner):
        self.inner = inner

    def export(self, spans):
        r = self.inner.export(spans)
        results["traces"].append(r.name)
        return r

    def shutdown(self):
        self.inner.shutdown()


class RecordingMetrics(MetricExporter):
    def __init__(self, inner):
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self.inner = inner

    def export(self, metrics_data, timeout_millis=10_000, **kwargs):
        r = self.inner.export(metrics_data, timeout_millis=timeout_millis)
        results["metrics"].append(r.name)
        return r

    def force_flush(self, timeout_millis=10_000):
        return True

    def shutdown(self, timeout_millis=30_000, **kwargs):
        self.inner.shutdown()


resource = Resource.create({"service.name": CANARY, "deployment.secret": CANARY})
traces = TracerProvider(resource=resource)
traces.add_span_processor(SimpleSpanProcessor(Recording(OTLPSpanExporter(endpoint=f"{base}/v1/traces"))))
tracer = traces.get_tracer("mcp.client.example", "1.0.0")
reader = PeriodicExportingMetricReader(
    RecordingMetrics(OTLPMetricExporter(endpoint=f"{base}/v1/metrics")), export_interval_millis=3_600_000
)
meters = MeterProvider(resource=resource, metric_readers=[reader])
duration = meters.get_meter("mcp.client.example").create_histogram("mcp.client.operation.duration", unit="s")


def where():
    if target_mode == "address":
        return {"server.address": "mcp.forecast.example.com", "server.port": 443}
    return {"lowdown.target": target_mode}


def exchange(method, tool=None, error=None):
    """One MCP request as the conventions' client span, and its histogram point."""
    attrs = {"mcp.method.name": method, "network.transport": "tcp", "mcp.protocol.version": "2025-06-18", **where()}
    name = method
    if tool:
        attrs.update({"gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool"})
        name = f"{method} {tool}"
    attrs["gen_ai.tool.call.arguments"] = json.dumps({"city": CANARY})
    with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attrs) as span:
        span.add_event("mcp.request", {"payload": CANARY})
        if error:
            span.set_attribute("error.type", error)
            if error.lstrip("-").isdigit():
                span.set_attribute("rpc.response.status_code", error)
            span.set_status(Status(StatusCode.ERROR, CANARY))
    point = {k: v for k, v in attrs.items() if k != "gen_ai.tool.call.arguments"}
    if error:
        point["error.type"] = error
    duration.record(0.05, point)


exchange("initialize")
exchange("tools/list")
for _ in range(3):
    exchange("tools/call", "get_forecast")
exchange("tools/call", "get_forecast", "tool_error")
exchange("tools/call", "get_forecast", "-32602")
exchange("notifications/initialized")
with tracer.start_as_current_span("GET /weather", kind=SpanKind.CLIENT, attributes={"http.request.method": "GET", "url.full": CANARY}):
    pass

traces.force_flush()
meters.force_flush()
traces.shutdown()
meters.shutdown()
print(json.dumps(results))
