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
  instrumentation does per request and waiting on the server or on other processes is
  not. Median over blocks. A client sends at most the server's hourly telemetry budget
  (60 observations anonymously, SPEC §4), so prowl's cost is measured twice:
  - *within the budget*: blocks of 50 requests, prowl's budget started afresh before each
    (outside the timing), every observation prepared by the core and POSTed; the bench
    checks that each block's 50 were sent;
  - *past the budget*: blocks of 1,000 once the hour's budget is spent, where a call only
    queues its measurement (dropped and counted once the queue holds 10,000).

And the LangChain handler's cost per tool run (block method, flush included).

And whole sessions (``session.py``: a new interpreter making 200 httpx requests and 200
LangChain tool runs, then exiting): plain, and prowl reporting to a real lowdown-server
that works or to an API that accepts connections and never answers. Each is timed from
spawn to exit and from the end of its work to exit (what prowl adds at exit is bounded by
its exit budget: records left are spooled, observations dropped).
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
BLOCKS = 6 if QUICK else 20  # per variant, cost past the budget
BLOCK_SIZE = 300 if QUICK else 1000
BUDGET_BLOCKS = 40 if QUICK else 200  # per variant, cost within the budget
BUDGET_BLOCK_SIZE = 50  # under the anonymous budget of 60 an hour
WARMUP = 100
SESSIONS = 5 if QUICK else 15
SESSION_CALLS = 200
SERVER_BIN = ROOT / "target" / "debug" / "lowdown-server"


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


def _blocks(names: List[str], block: Callable[[str], float], blocks: int = BLOCKS) -> Dict[str, float]:
    """Median over ``blocks`` of the per-item time of each variant's block (order rotating)."""
    samples: Dict[str, List[float]] = {k: [] for k in names}
    for name in names:
        block(name)  # warm-up
    for i in range(blocks):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(block(name))
    return _median_us(samples)


def _fresh_budget(name: str) -> None:
    """Before a within-budget block: prowl starts a new hour (a benchmark hook)."""
    if name == "prowl":
        from prowl.sender import SENDER

        SENDER.reset()


def _check_sent(name: str, size: int, unsent: List[int]) -> None:
    if name == "prowl":
        from prowl.sender import SENDER

        unsent.append(size - SENDER.counts["sent"])


def cost_sync(size: int, blocks: int, within_budget: bool, unsent: List[int]) -> Dict[str, float]:
    v = Variants("http://bench.example.com", False, in_memory)

    def block(name: str) -> float:
        get, flush = v.clients[name].get, v.flush[name]
        if within_budget:
            _fresh_budget(name)
        t0 = time.process_time()
        for _ in range(size):
            get("/x")
        flush()
        spent = time.process_time() - t0
        if within_budget:
            _check_sent(name, size, unsent)
        return spent / size

    return _blocks(list(v.clients), block, blocks)


def cost_async(size: int, blocks: int, within_budget: bool, unsent: List[int]) -> Dict[str, float]:
    async def run() -> Dict[str, float]:
        v = Variants("http://bench.example.com", True, in_memory)
        names = list(v.clients)
        samples: Dict[str, List[float]] = {k: [] for k in names}

        async def block(name: str) -> float:
            get, flush = v.clients[name].get, v.flush[name]
            if within_budget:
                _fresh_budget(name)
            t0 = time.process_time()
            for _ in range(size):
                await get("/x")
            flush()
            spent = time.process_time() - t0
            if within_budget:
                _check_sent(name, size, unsent)
            return spent / size

        for name in names:
            await block(name)
        for i in range(blocks):
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


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_api(home: Path) -> "tuple[subprocess.Popen, str]":
    """A real lowdown-server (it stores the private test host: its test-only flag)."""
    port = _free_port()
    proc = subprocess.Popen(
        [str(SERVER_BIN), "serve", "--listen", f"127.0.0.1:{port}", "--db", str(home / "api.db"),
         "--unsafe-allow-private-hosts"],
        env={**os.environ, "LOWDOWN_HOME": str(home)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(url + "/healthz").status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("lowdown-server did not start")


def _hanging_api() -> "tuple[Any, str]":
    """An API that accepts connections and reads, and never answers."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: List[Any] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"


def preflight_against_a_server() -> Dict[str, float]:
    """[`preflight`] against a real lowdown-server of its own."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="prowl-bench-"))
    api, api_url = _start_api(tmp)
    try:
        return preflight(api_url)
    finally:
        api.terminate()
        api.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def sessions(target_url: str) -> Dict[str, Dict[str, float]]:
    """Median ms from spawn to exit and from the end of the work to exit, per variant."""
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="prowl-bench-"))
    api, api_url = _start_api(tmp)
    hanging, hanging_url = _hanging_api()
    runs: Dict[str, List["tuple[float, float]"]] = {"plain": [], "working API": [], "hanging API": []}
    try:
        for i in range(SESSIONS):
            for name, variant, url in (("plain", "plain", api_url), ("working API", "prowl", api_url),
                                       ("hanging API", "prowl", hanging_url)):
                env = {**os.environ, "PROWL_API_URL": url, "PROWL_TELEMETRY_ALLOW_PRIVATE": "1",
                       "LOWDOWN_HOME": str(tmp / f"home-{name}-{i}")}  # no spool from an earlier run
                t0 = time.monotonic()
                proc = subprocess.Popen([sys.executable, str(HERE / "session.py"), target_url, str(SESSION_CALLS), variant],
                                        stdout=subprocess.PIPE, env=env)
                done = float(proc.stdout.readline())  # type: ignore[union-attr]
                proc.wait(60)
                t1 = time.monotonic()
                runs[name].append(((t1 - t0) * 1000, (t1 - done) * 1000))
    finally:
        api.terminate()
        api.wait(10)
        hanging.close()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return {k: {"session": statistics.median(t for t, _ in v), "exit": statistics.median(e for _, e in v)}
            for k, v in runs.items()}


PREFLIGHT_RUNS = 15


def preflight(api_url: str) -> Dict[str, float]:
    """Median ms a PreToolUse hook process takes for one MCP tool call, as Claude Code waits
    for it: an empty hook beside the preflight drop-in with its answer cached, the drop-in
    asking the API each time, and the wheel's ``prowl-claude-hook preflight`` (cached)."""
    import tempfile

    hook = ROOT / "bindings-python" / "python" / "prowl" / "prowl_preflight_hook.py"
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "mcp__weather__get_forecast",
                          "tool_input": {"city": "Lisbon"}}).encode()
    script = Path(sys.executable).with_name("prowl-claude-hook")
    variants = {
        "empty hook": ([sys.executable, "-I", "-c", "import sys; sys.stdin.buffer.read()"], {}),
        "drop-in, cached": ([sys.executable, "-I", str(hook)], {}),
        "drop-in, asking the API": ([sys.executable, "-I", str(hook)], {"PROWL_PREFLIGHT_CACHE_SECONDS": "0"}),
        "prowl-claude-hook preflight, cached": ([str(script), "preflight"], {}),
    }
    runs: Dict[str, List[float]] = {k: [] for k in variants}
    with tempfile.TemporaryDirectory(prefix="prowl-preflight-") as home:
        for _ in range(PREFLIGHT_RUNS):
            for name, (cmd, extra) in variants.items():
                env = {**os.environ, "PROWL_API_URL": api_url, "LOWDOWN_HOME": home, **extra}
                t0 = time.monotonic()
                subprocess.run(cmd, input=payload, env=env, capture_output=True, timeout=30, check=True)
                runs[name].append((time.monotonic() - t0) * 1000)
    return {k: statistics.median(v) for k, v in runs.items()}


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
    unsent: List[int] = []
    try:
        results: Dict[str, Any] = {
            "latency sync": latency_sync(url),
            "latency async": latency_async(url),
            "cost sync, within budget": cost_sync(BUDGET_BLOCK_SIZE, BUDGET_BLOCKS, True, unsent),
            "cost async, within budget": cost_async(BUDGET_BLOCK_SIZE, BUDGET_BLOCKS, True, unsent),
            "cost sync, past budget": cost_sync(BLOCK_SIZE, BLOCKS, False, unsent),
            "cost async, past budget": cost_async(BLOCK_SIZE, BLOCKS, False, unsent),
            "langchain latency": latency_langchain(),
            "langchain cost": cost_langchain(),
        }
        prowl.flush(5.0)
        results["prowl_stats"] = prowl.stats()
        results["sessions"] = sessions(url)
        results["preflight"] = preflight_against_a_server()
        results["within budget, observations not sent"] = sum(unsent)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(5)

    print(f"prowl bench ({sys.implementation.name} {sys.version.split()[0]}; µs per request; "
          f"latency: median of {LATENCY_REQUESTS} interleaved requests to a local server; "
          f"cost: CPU time of all threads, background work flushed in the block, median of "
          f"{BUDGET_BLOCKS} blocks of {BUDGET_BLOCK_SIZE} within the hourly budget (each observation sent) "
          f"and of {BLOCKS} blocks of {BLOCK_SIZE} past it)")
    print("| | plain httpx | prowl.observe | OpenTelemetry | prowl added | OTel added | prowl / OTel |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in ("latency sync", "latency async", "cost sync, within budget", "cost async, within budget",
                "cost sync, past budget", "cost async, past budget"):
        print(_row(key, results[key]))
    print(f"within budget: {len(unsent)} prowl blocks, {sum(unsent)} observations not sent "
          "(0 means every measured observation was prepared and POSTed)")
    print("\n| LangChain tool run | no callbacks | no-op handler | prowl handler | prowl added | over a no-op handler |")
    print("|---|---:|---:|---:|---:|---:|")
    for key in ("langchain latency", "langchain cost"):
        lc = results[key]
        lc["prowl added"] = lc["prowl handler"] - lc["no callbacks"]
        lc["prowl vs no-op handler"] = lc["prowl handler"] - lc["no-op handler"]
        print(f"| {key.split()[1]} | {lc['no callbacks']:.1f} | {lc['no-op handler']:.1f} | {lc['prowl handler']:.1f} "
              f"| {lc['prowl added']:.1f} | **{lc['prowl vs no-op handler']:.1f}** |")
    print(f"prowl sender: {results['prowl_stats']}")
    ss = results["sessions"]
    print(f"\nWhole sessions ({SESSION_CALLS} httpx requests + {SESSION_CALLS} LangChain tool runs in a new "
          f"interpreter, median of {SESSIONS}, ms)")
    print("| | plain | prowl, working API | prowl, hanging API | hanging / working |")
    print("|---|---:|---:|---:|---:|")
    print(f"| spawn to exit | {ss['plain']['session']:.0f} | {ss['working API']['session']:.0f} "
          f"| {ss['hanging API']['session']:.0f} | **{ss['hanging API']['session'] / ss['working API']['session']:.2f}×** (aim ≤ 1.2×) |")
    print(f"| work done to exit | {ss['plain']['exit']:.0f} | {ss['working API']['exit']:.0f} "
          f"| {ss['hanging API']['exit']:.0f} | **+{ss['hanging API']['exit'] - ss['working API']['exit']:.0f} ms** (aim ≤ 100 ms) |")
    pf = results["preflight"]
    print(f"\nPreflight hook (one PreToolUse for an MCP tool, a new process as Claude Code runs it, "
          f"median of {PREFLIGHT_RUNS}, ms; answer from a real lowdown-server on loopback)")
    print("| empty hook | drop-in, cached | drop-in, asking the API | prowl-claude-hook preflight, cached | added by the drop-in, cached |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {pf['empty hook']:.1f} | {pf['drop-in, cached']:.1f} | {pf['drop-in, asking the API']:.1f} "
          f"| {pf['prowl-claude-hook preflight, cached']:.1f} | **+{pf['drop-in, cached'] - pf['empty hook']:.1f}** |")
    out = ROOT / "target" / "bench-prowl.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
