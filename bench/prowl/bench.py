"""Added latency per request: plain httpx vs ``prowl.observe`` vs OpenTelemetry's httpx
instrumentation (SDK tracer + BatchSpanProcessor to an in-memory exporter), sync and async,
measured side by side against one local server; and the LangChain handler's cost per tool run.

Variants are interleaved request by request so drift hits them all alike; each figure is
the median per-request time. Against the local server (a separate process) the numbers
include the loopback round trip; against an in-memory ``httpx.MockTransport`` they isolate
the instrumentation's own cost. Prowl's observations really are prepared by the core and
sent (to the local server) by its background sender during the run.

Run: ``make bench-prowl`` (or ``.venv/bin/python bench/prowl/bench.py [--quick]``).
Writes a table to stdout and JSON to ``target/bench-prowl.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
QUICK = "--quick" in sys.argv
REQUESTS = 500 if QUICK else 3000  # per variant, against the local server
IN_MEMORY = 2000 if QUICK else 20000  # per variant, against an in-memory transport
WARMUP = 100
ROUNDS = 5 if QUICK else 15
TOOL_RUNS = 500 if QUICK else 3000


def start_sink() -> "tuple[subprocess.Popen, str]":
    proc = subprocess.Popen([sys.executable, str(HERE / "sink.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    port = int(proc.stdout.readline())  # type: ignore[union-attr]
    return proc, f"http://127.0.0.1:{port}"


class _Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A two-byte response body, readable sync or async, not pre-read by httpx."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield b"ok"

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield b"ok"


def otel_provider():  # type: ignore[no-untyped-def]
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider, exporter


def make_clients(url: str, is_async: bool, transport: Optional[Callable[[], object]] = None) -> Dict[str, object]:
    """Three clients alike but for instrumentation: plain, prowl-observed, OpenTelemetry.
    ``transport`` makes one transport per client (OpenTelemetry patches the instance)."""
    import prowl
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    cls = httpx.AsyncClient if is_async else httpx.Client
    def kw() -> Dict[str, object]:
        return {"base_url": url} if transport is None else {"base_url": url, "transport": transport()}

    plain = cls(**kw())
    observed = prowl.observe(cls(**kw()))
    otel = cls(**kw())
    provider, _ = otel_provider()
    HTTPXClientInstrumentor.instrument_client(otel, tracer_provider=provider)
    return {"plain": plain, "prowl": observed, "otel": otel}


def _summary(samples: Dict[str, List[float]]) -> Dict[str, float]:
    """Median per-request time of each variant, in µs."""
    return {k: statistics.median(v) * 1e6 for k, v in samples.items()}


def _interleaved(variants: Dict[str, Callable[[], object]], n: int) -> Dict[str, float]:
    """Median time of each variant, run in turn (order rotating) ``n`` times after a warm-up."""
    names = list(variants)
    samples: Dict[str, List[float]] = {k: [] for k in names}
    perf = time.perf_counter
    for i in range(n + WARMUP):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            f = variants[name]
            t0 = perf()
            f()
            dt = perf() - t0
            if i >= WARMUP:
                samples[name].append(dt)
    return _summary(samples)


def bench_sync(url: str, transport: Optional[Callable[[], object]] = None, n: int = REQUESTS) -> Dict[str, float]:
    """Per-request times, the variants interleaved request by request."""
    clients = make_clients(url, False, transport)
    return _interleaved({k: (lambda get=c.get: get("/x")) for k, c in clients.items()}, n)  # type: ignore[attr-defined]


def bench_async(url: str, transport: Optional[Callable[[], object]] = None, n: int = REQUESTS) -> Dict[str, float]:
    async def run() -> Dict[str, float]:
        clients = make_clients(url, True, transport)
        gets = {k: c.get for k, c in clients.items()}  # type: ignore[attr-defined]
        samples: Dict[str, List[float]] = {k: [] for k in clients}
        perf = time.perf_counter
        names = list(gets)
        for i in range(n + WARMUP):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                get = gets[name]
                t0 = perf()
                await get("/x")
                dt = perf() - t0
                if i >= WARMUP:
                    samples[name].append(dt)
        return _summary(samples)

    return asyncio.run(run())


def bench_langchain(n: int = TOOL_RUNS) -> Dict[str, float]:
    """Per tool run: no callbacks, a no-op inline handler, and the prowl handler."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tools import tool

    from prowl.langchain import ProwlCallbackHandler

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Noop(BaseCallbackHandler):
        run_inline = True

    noop, handler = Noop(), ProwlCallbackHandler()
    args = {"a": 1, "b": 2}
    variants: Dict[str, Callable[[], object]] = {
        "no callbacks": lambda: add.invoke(args),
        "no-op handler": lambda: add.invoke(args, config={"callbacks": [noop]}),
        "prowl handler": lambda: add.invoke(args, config={"callbacks": [handler]}),
    }
    return _interleaved(variants, n)


def main() -> None:
    proc, url = start_sink()
    os.environ["PROWL_API_URL"] = url
    os.environ["PROWL_TELEMETRY_ALLOW_PRIVATE"] = "1"  # so prowl's reports of 127.0.0.1 are really built and sent
    os.environ.pop("PROWL_TELEMETRY", None)
    import prowl

    prowl.configure()
    try:
        def mem() -> httpx.MockTransport:
            # A streamed body (as from the network) so every variant reads it the same way.
            return httpx.MockTransport(lambda request: httpx.Response(200, stream=_Body()))

        results = {
            "sync": bench_sync(url),
            "async": bench_async(url),
            "sync in-memory": bench_sync("http://bench.example.com", mem, IN_MEMORY),
            "async in-memory": bench_async("http://bench.example.com", mem, IN_MEMORY),
            "langchain": bench_langchain(),
        }
        prowl.flush(5.0)
        results["prowl_stats"] = prowl.stats()  # type: ignore[assignment]
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(5)

    print(f"prowl bench: median µs per request, variants interleaved request by request "
          f"({REQUESTS} per variant against a local server, {IN_MEMORY} against an in-memory transport)")
    print(f"{'':16} {'plain':>9} {'prowl':>9} {'otel':>9} {'prowl added':>12} {'otel added':>11} {'prowl/otel':>11}")
    for mode in ("sync", "async", "sync in-memory", "async in-memory"):
        r = results[mode]
        pa, oa = r["prowl"] - r["plain"], r["otel"] - r["plain"]
        ratio = pa / oa if oa > 0 else float("nan")
        results[mode]["prowl_added"], results[mode]["otel_added"], results[mode]["ratio"] = pa, oa, ratio
        print(f"{mode:16} {r['plain']:9.1f} {r['prowl']:9.1f} {r['otel']:9.1f} {pa:12.2f} {oa:11.2f} {ratio:11.3f}")
    lc = results["langchain"]
    print(f"langchain tool run (µs): no callbacks {lc['no callbacks']:.1f}, no-op handler {lc['no-op handler']:.1f}, "
          f"prowl handler {lc['prowl handler']:.1f} -> prowl handler added {lc['prowl handler'] - lc['no callbacks']:.2f} "
          f"(vs no-op handler {lc['prowl handler'] - lc['no-op handler']:.2f})")
    print(f"prowl sender: {results['prowl_stats']}")
    out = ROOT / "target" / "bench-prowl.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
