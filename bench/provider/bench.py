"""Provider mode's two numbers (SPEC §11): how long the ``Stop`` hook keeps Claude Code
waiting, and how long a ``protocol`` directive takes to score.

* **hook return time** — the installed ``prowl-provider-hook`` run as Claude Code runs it
  (a fresh process, hook JSON on stdin), wall time from spawn to exit, in four states:
  provider mode off; on but not due (an idle Stop event inside the poll interval: one small
  file read); due (takes the lock and starts the detached worker; the worker is waited for
  between samples, so every sample really spawns one). Beside them, the floor every Python
  hook pays: the interpreter starting (``python -c pass``) and ``import prowl``.
* **protocol scoring** — ``prowl_provider_hook.run_protocol`` with the core deciding
  (``prowl.provider.core.CORE``) against the real server-everything over loopback (probe over real sockets plus scoring), and the core's part alone: the
  recorded server-everything probe (tests/recordings) replayed through the binding's
  ``Probe`` to its conformance score, no network.

Run: ``make bench-provider`` (or ``.venv/bin/python bench/provider/bench.py [--quick]``).
Prints a table; writes JSON to ``target/bench-provider.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bindings-python" / "tests"))
QUICK = "--quick" in sys.argv
HOOK_RUNS = 60 if QUICK else 300
PROBE_RUNS = 10 if QUICK else 50
REPLAY_RUNS = 300 if QUICK else 3000


def pct(values: List[float], p: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, int(round(p / 100.0 * len(s))) - 1))]


def stats(ms: List[float]) -> Dict[str, float]:
    return {"n": len(ms), "p50": pct(ms, 50), "p99": pct(ms, 99), "max": max(ms)}


def timed_runs(argv: List[str], env: Dict[str, str], n: int, between: Callable[[], None] = lambda: None) -> List[float]:
    out = []
    for _ in range(n):
        between()
        t = time.perf_counter()
        subprocess.run(argv, env=env, input=b'{"session_id":"7c1d4b2e-3f8a-4c55-9e0d-2b6f1a9c8e47","hook_event_name":"Stop","stop_hook_active":false}', stdout=subprocess.DEVNULL, check=True)
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def hook_times() -> Dict[str, Any]:
    from provider_support import hook, wait_idle

    work = Path(tempfile.mkdtemp(prefix="prowl-provider-bench-"))
    tmp = work / "tmp"
    tmp.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_"))}
    base.update({"TMPDIR": str(tmp), "XDG_CONFIG_HOME": str(work / "config"), "HOME": str(work),
                 "LOWDOWN_HOME": str(work / "lowdown"), "PROWL_AGENT_KEY": "ak_bench",
                 # A closed port: the worker's one API call fails at once.
                 "PROWL_API_URL": "http://127.0.0.1:9"})
    py = sys.executable
    on = {**base, "PROWL_PROVIDER_MODE": "1"}
    state_file = work / "config" / "prowl" / "provider_state.json"
    results = {
        "python -c pass (floor)": stats(timed_runs([py, "-c", "pass"], base, HOOK_RUNS)),
        "python -c 'import prowl' (floor)": stats(timed_runs([py, "-c", "import prowl"], base, HOOK_RUNS)),
        "hook, provider mode off": stats(timed_runs([hook()], base, HOOK_RUNS)),
    }

    def not_due() -> None:
        state_file.parent.mkdir(parents=True, exist_ok=True)
        state_file.write_text(json.dumps({"last_poll_at": int(time.time() * 1000)}))

    results["hook, on, not due (idle Stop)"] = stats(timed_runs([hook()], {**on, "PROWL_PROVIDER_POLL_SECONDS": "3600"}, HOOK_RUNS, not_due))
    results["hook, on, due (lock + detached spawn)"] = stats(
        timed_runs([hook()], {**on, "PROWL_PROVIDER_POLL_SECONDS": "0"}, HOOK_RUNS, lambda: wait_idle(work / "config")))
    wait_idle(work / "config")
    return results


def protocol_times() -> Dict[str, Any]:
    from prowl import _native
    from prowl import prowl_provider_hook as hook
    from prowl.provider.core import CORE
    from provider_support import Everything

    e = Everything()
    try:
        hook.run_protocol(e.url, True, CORE)  # warm up node's JIT and the connection path
        live = []
        for _ in range(PROBE_RUNS):
            t = time.perf_counter()
            c = hook.run_protocol(e.url, True, CORE)
            live.append((time.perf_counter() - t) * 1000.0)
    finally:
        e.close()
    recording = json.loads((ROOT / "tests" / "recordings" / "probe-everything-http.json").read_text())["replies"]

    def replay() -> Dict[str, Any]:
        replies = iter(recording)
        probe = _native.Probe("0")
        step = probe.start()
        while "done" not in step:
            r = next(replies)
            reader = None
            if step["answer"] is not None and 200 <= r["status"] < 300:
                reader = _native.AnswerReader(r["content_type"], *step["answer"])
                reader.feed(r["body"].encode())
            step = probe.on_response(r["status"], r["session_id"], False, r["elapsed_ms"], reader)
        return step["done"]

    def but_latency(d: Dict[str, float]) -> Dict[str, float]:
        return {k: v for k, v in d.items() if k != "latency"}

    assert but_latency(replay()["dimensions"]) == but_latency(c["dimensions"]), "the recording and the live server disagree"
    replayed = []
    for _ in range(REPLAY_RUNS):
        t = time.perf_counter()
        replay()
        replayed.append((time.perf_counter() - t) * 1000.0)
    return {"run_protocol against server-everything (ms)": stats(live),
            "core probe + score of the recorded exchange (ms)": stats(replayed),
            "overall_score": c["overall_score"]}


def main() -> None:
    results = {"hook": hook_times(), "protocol": protocol_times()}
    print(f"provider bench ({sys.implementation.name} {sys.version.split()[0]}; wall ms; load average {os.getloadavg()[0]:.1f})")
    print("| hook return time | n | p50 | p99 | max |")
    print("|---|---:|---:|---:|---:|")
    for k, v in results["hook"].items():
        print(f"| {k} | {v['n']} | {v['p50']:.1f} | {v['p99']:.1f} | {v['max']:.1f} |")
    print("\n| protocol directive | n | p50 | p99 | max |")
    print("|---|---:|---:|---:|---:|")
    for k, v in results["protocol"].items():
        if isinstance(v, dict):
            print(f"| {k} | {v['n']} | {v['p50']:.3f} | {v['p99']:.3f} | {v['max']:.3f} |")
    out = ROOT / "target" / "bench-provider.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
