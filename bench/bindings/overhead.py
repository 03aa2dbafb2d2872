"""Per-call cost of the calls prowl makes through the pyo3 binding (``prowl._native``), to set
beside the Rust baseline (overhead.rs) and napi/WASM (overhead.mjs). Prints
``{"pyo3": {op: ns_per_call}}``. Needs ``make build`` first (a release ``maturin develop``)."""

import json
import time
from pathlib import Path

from prowl import _native

FX = json.loads((Path(__file__).parent / "fixtures.json").read_text())


def per_call(f) -> float:
    """Nanoseconds per call of ``f``, after a warm-up, over about 0.3 s."""
    for _ in range(1000):
        f()
    n = 1000
    while True:
        start = time.perf_counter_ns()
        for _ in range(n):
            f()
        spent = time.perf_counter_ns() - start
        if spent > 3e8:
            return spent / n
        n *= 4


def main() -> None:
    policy = _native.HostPolicy(None, None)
    record = json.loads(FX["record"])
    out = {
        # prowl builds observations and validates LangChain records (a dict in, the typed
        # record out); it records no MCP sessions, so has no Recorder.
        "prepare_observation": per_call(
            lambda: _native.prepare_observation(FX["url"], "GET", 200, 12.5, 512, "organic", policy)
        ),
        "validate_records": per_call(lambda: _native.validate_records(record)),
    }
    print(json.dumps({"pyo3": out}))


if __name__ == "__main__":
    main()
