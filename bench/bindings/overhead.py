"""Per-call cost of the same four calls through the pyo3 binding (``prowl._native``), to set
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
    req, resp, tools = FX["request"].encode(), FX["response"].encode(), FX["tools_list"].encode()
    policy = _native.HostPolicy(None, None)
    c = _native.Classifier()

    def feed() -> None:
        c.feed("client_to_server", req, 1.0)
        c.feed("server_to_client", resp, 2.0)

    out = {
        "redact": per_call(lambda: _native.redact(FX["redact"])),
        "host_verdict": per_call(lambda: _native.host_verdict(FX["host"], policy)),
        "classifier_feed": per_call(feed) / 2,
        "hash_tools_result": per_call(lambda: _native.hash_tools_result(tools)),
    }
    print(json.dumps({"pyo3": out}))


if __name__ == "__main__":
    main()
