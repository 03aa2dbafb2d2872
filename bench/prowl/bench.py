"""prowl's overhead, side by side with plain httpx and OpenTelemetry, in one run.

Three clients alike but for instrumentation: plain httpx, ``prowl.observe``, and
``opentelemetry-instrumentation-httpx`` with an SDK ``TracerProvider`` and a
``BatchSpanProcessor`` (to an in-memory exporter). Sync and async. Two measurements:

* **latency** — against a local HTTP server (its own process), the variants interleaved
  request by request; the median per-request time is what a typical call waits.
* **cost** — against an in-memory transport, in blocks of requests, the variants taking
  turns; each block ends by flushing that variant's background work inside the timing
  (``prowl.flush()``, the span processor's ``force_flush()``), and the block is timed in
  CPU time of the whole process (every thread), so the figure is all the work the
  instrumentation does per request, sending included, and waiting on the server or on
  other processes is not. Median over blocks.

And the LangChain handler's cost per tool run (block method, flush included).
Prowl's observations are really prepared by the core and POSTed (to the local server).

Run: ``make bench-prowl`` (or ``.venv/bin/python bench/prowl/bench.py [--quick]``).
Prints a table; writes JSON to ``target/bench-prowl.json``.
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
from typing import Any, Callable, Dict, List, Optional

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
QUICK = "--quick" in sys.argv
LATENCY_REQUESTS = 500 if QUICK else 3000  # per variant, interleaved
BLOCKS = 6 if QUICK else 20  # per variant, cost method
BLOCK_SIZE = 300 if QUICK else 1000
WARMUP = 100


class _Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A two-byte response body, readable sync or async, streamed (not pre-read by httpx)."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield b"ok"

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield b"ok"


def in_memory() -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(200, stream=_Body()))


def start_sink() -> "tuple[subprocess.Popen, str]":
    proc = subprocess.Popen([sys.executable, str(HERE / "sink.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    port = int(proc.stdout.readline())  # type: ignore[union-attr]
    return proc, f"http://127.0.0.1:{port}"


class Variants:
    """plain / prowl / otel clients, each with a ``flush`` for its background work."""

    def __init__(self, url: str, is_async: bool, transport: Optional[Callable[[], httpx.MockTransport]] = None) -> None:
        import prowl
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        cls = httpx.AsyncClient if is_async else httpx.Client

        def make() -> Any:  # OpenTelemetry patches the transport instance: one each
            return cls(base_url=url) if transport is None else cls(base_url=url, transport=transport())

        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter))
        otel = make()
        HTTPXClientInstrumentor.instrument_client(otel, tracer_provider=self.provider)
        self.clients: Dict[str, Any] = {"plain": make(), "prowl": prowl.observe(make()), "otel": otel}

        def otel_flush() -> None:
            self.provider.force_flush()
            self.exporter.clear()

        self.flush: Dict[str, Callable[[], object]] = {
            "plain": lambda: None,
            "prowl": lambda: prowl.flush(10.0),
            "otel": otel_flush,
        }


def _median_us(samples: Dict[str, List[float]]) -> Dict[str, float]:
    return {k: statistics.median(v) * 1e6 for k, v in samples.items()}


def latency_sync(url: str) -> Dict[str, float]:
    v = Variants(url, False)
    names = list(v.clients)
    samples: Dict[str, List[float]] = {k: [] for k in names}
    perf = time.perf_counter
    for i in range(LATENCY_REQUESTS + WARMUP):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            get = v.clients[name].get
            t0 = perf()
            get("/x")
            if i >= WARMUP:
                samples[name].append(perf() - t0)
    return _median_us(samples)


def latency_async(url: str) -> Dict[str, float]:
    async def run() -> Dict[str, float]:
        v = Variants(url, True)
        names = list(v.clients)
        samples: Dict[str, List[float]] = {k: [] for k in names}
        perf = time.perf_counter
        for i in range(LATENCY_REQUESTS + WARMUP):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                get = v.clients[name].get
                t0 = perf()
                await get("/x")
                if i >= WARMUP:
                    samples[name].append(perf() - t0)
        return _median_us(samples)

    return asyncio.run(run())


def _blocks(names: List[str], block: Callable[[str], float]) -> Dict[str, float]:
    """Median over BLOCKS of the per-item time of each variant's block (order rotating)."""
    samples: Dict[str, List[float]] = {k: [] for k in names}
    for name in names:
        block(name)  # warm-up
    for i in range(BLOCKS):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(block(name))
    return _median_us(samples)


def cost_sync() -> Dict[str, float]:
    v = Variants("http://bench.example.com", False, in_memory)

    def block(name: str) -> float:
        get, flush = v.clients[name].get, v.flush[name]
        t0 = time.process_time()
        for _ in range(BLOCK_SIZE):
            get("/x")
        flush()
        return (time.process_time() - t0) / BLOCK_SIZE

    return _blocks(list(v.clients), block)


def cost_async() -> Dict[str, float]:
    async def run() -> Dict[str, float]:
        v = Variants("http://bench.example.com", True, in_memory)
        names = list(v.clients)
        samples: Dict[str, List[float]] = {k: [] for k in names}

        async def block(name: str) -> float:
            get, flush = v.clients[name].get, v.flush[name]
            t0 = time.process_time()
            for _ in range(BLOCK_SIZE):
                await get("/x")
            flush()
            return (time.process_time() - t0) / BLOCK_SIZE

        for name in names:
            await block(name)
        for i in range(BLOCKS):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                samples[name].append(await block(name))
        return _median_us(samples)

    return asyncio.run(run())


def langchain_variants() -> Dict[str, Callable[[], object]]:
    """One tool run each: no callbacks, a no-op inline handler, and the prowl handler."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tools import tool

    from prowl.langchain import ProwlCallbackHandler

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Noop(BaseCallbackHandler):
        run_inline = True

    args = {"a": 1, "b": 2}
    noop, handler = {"callbacks": [Noop()]}, {"callbacks": [ProwlCallbackHandler()]}
    return {
        "no callbacks": lambda: add.invoke(args),
        "no-op handler": lambda: add.invoke(args, config=noop),
        "prowl handler": lambda: add.invoke(args, config=handler),
    }


def latency_langchain() -> Dict[str, float]:
    """Median time of one tool run, the variants interleaved run by run."""
    runs = langchain_variants()
    names = list(runs)
    samples: Dict[str, List[float]] = {k: [] for k in names}
    perf = time.perf_counter
    for i in range(LATENCY_REQUESTS + WARMUP):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            run = runs[name]
            t0 = perf()
            run()
            if i >= WARMUP:
                samples[name].append(perf() - t0)
    return _median_us(samples)


def cost_langchain() -> Dict[str, float]:
    """CPU per tool run, in blocks, the prowl handler's records flushed in its block."""
    import prowl

    runs = langchain_variants()

    def block(name: str) -> float:
        run = runs[name]
        t0 = time.process_time()
        for _ in range(BLOCK_SIZE):
            run()
        if name == "prowl handler":
            prowl.flush(10.0)
        return (time.process_time() - t0) / BLOCK_SIZE

    return _blocks(list(runs), block)


def _row(label: str, r: Dict[str, float]) -> str:
    pa, oa = r["prowl"] - r["plain"], r["otel"] - r["plain"]
    r["prowl added"], r["otel added"] = pa, oa
    r["prowl/otel"] = pa / oa if oa > 0 else float("nan")
    return f"| {label} | {r['plain']:.1f} | {r['prowl']:.1f} | {r['otel']:.1f} | **{pa:.1f}** | {oa:.1f} | {r['prowl/otel']:.3f} |"


def main() -> None:
    proc, url = start_sink()
    os.environ["PROWL_API_URL"] = url
    os.environ["PROWL_TELEMETRY_ALLOW_PRIVATE"] = "1"  # so reports of 127.0.0.1 are really built and sent
    os.environ.pop("PROWL_TELEMETRY", None)
    import prowl

    prowl.configure()
    try:
        results: Dict[str, Any] = {
            "latency sync": latency_sync(url),
            "latency async": latency_async(url),
            "cost sync": cost_sync(),
            "cost async": cost_async(),
            "langchain latency": latency_langchain(),
            "langchain cost": cost_langchain(),
        }
        prowl.flush(5.0)
        results["prowl_stats"] = prowl.stats()
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(5)

    print(f"prowl bench ({sys.implementation.name} {sys.version.split()[0]}; µs per request; "
          f"latency: median of {LATENCY_REQUESTS} interleaved requests to a local server; "
          f"cost: median of {BLOCKS} blocks of {BLOCK_SIZE} in-memory requests, CPU time of all threads, background work flushed in the block)")
    print("| | plain httpx | prowl.observe | OpenTelemetry | prowl added | OTel added | prowl / OTel |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in ("latency sync", "latency async", "cost sync", "cost async"):
        print(_row(key, results[key]))
    print("\n| LangChain tool run | no callbacks | no-op handler | prowl handler | prowl added | over a no-op handler |")
    print("|---|---:|---:|---:|---:|---:|")
    for key in ("langchain latency", "langchain cost"):
        lc = results[key]
        lc["prowl added"] = lc["prowl handler"] - lc["no callbacks"]
        lc["prowl vs no-op handler"] = lc["prowl handler"] - lc["no-op handler"]
        print(f"| {key.split()[1]} | {lc['no callbacks']:.1f} | {lc['no-op handler']:.1f} | {lc['prowl handler']:.1f} "
              f"| {lc['prowl added']:.1f} | **{lc['prowl vs no-op handler']:.1f}** |")
    print(f"prowl sender: {results['prowl_stats']}")
    out = ROOT / "target" / "bench-prowl.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
