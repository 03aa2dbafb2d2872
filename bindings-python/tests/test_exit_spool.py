"""What prowl does when the API is not there for it (SPEC §3, §4): a process never waits on
a hanging or slow API at exit, the interaction records it could not deliver go to the spool
shared with every Lowdown host, and the next run delivers them, each counted once. Telemetry
stays within the server's hourly budget, and a telemetry refusal never holds up records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable, Dict, List

import httpx

import prowl
from prowl.sender import SENDER
from conftest import LowdownServer
from servers import Collector, Upstream

# Three LangChain tool runs (real langchain-core), reported by prowl's callback handler.
SCRIPT = textwrap.dedent(
    """
    from langchain_core.tools import tool
    from prowl.langchain import ProwlCallbackHandler

    @tool
    def add(a: int, b: int) -> int:
        \"\"\"Adds two numbers.\"\"\"
        return a + b

    handler = ProwlCallbackHandler(actor="agent:exit-test")
    for i in range(3):
        add.invoke({"a": i, "b": 1}, config={"callbacks": [handler]})
    print("ran", flush=True)
    """
)


def run_agent(api_url: str, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_"))}
    env.update(PROWL_API_URL=api_url, LOWDOWN_HOME=str(home))
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60)


def spooled(home: Path) -> List[Dict]:
    files = sorted((home / "spool").glob("*.jsonl"))
    return [json.loads(r) for f in files for r in f.read_text().splitlines() if r.strip()]


def test_a_hanging_api_never_holds_exit_and_the_records_wait_in_the_spool(tmp_path: Path) -> None:
    api = Collector(mode="hang")
    try:
        done = run_agent(api.url, tmp_path)
        assert done.returncode == 0 and "ran" in done.stdout, done.stderr
        assert api.wait_requests(1, 0.1), "prowl never tried the API"
        records = spooled(tmp_path)
        assert [r["task_type"] for r in records] == ["add", "add", "add"]
        assert {r["actor"] for r in records} == {"agent:exit-test"}
    finally:
        api.close()


def test_a_slow_api_answers_after_the_process_is_gone(tmp_path: Path) -> None:
    api = Collector(mode="slow")
    try:
        done = run_agent(api.url, tmp_path)  # times out (fails) if prowl waited for the answer
        exited = time.monotonic()
        api.release.set()
        assert done.returncode == 0, done.stderr
        assert not api.answered or api.answered[0] > exited, "the process waited for the API's answer"
        assert len(spooled(tmp_path)) == 3
    finally:
        api.close()


def test_the_next_run_delivers_the_spool_once(tmp_path: Path, lowdown_server: LowdownServer) -> None:
    hang = Collector(mode="hang")
    try:
        run_agent(hang.url, tmp_path)
    finally:
        hang.close()
    first = spooled(tmp_path)
    assert len(first) == 3
    # A second process with the API up: its own three runs and the three left by the first.
    run_agent(lowdown_server.url, tmp_path)
    run_agent(lowdown_server.url, tmp_path)  # nothing left to deliver twice
    target = first[0]["target"]
    answer = httpx.get(f"{lowdown_server.url}/api/reputation/{target}").json()
    assert answer["interactions"] == 9, answer
    assert spooled(tmp_path) == []


def test_telemetry_keeps_to_the_hourly_budget_and_never_holds_up_records(
    upstream: Upstream, point_prowl: Callable[[str], None]
) -> None:
    # A server of its own: this test spends the caller's hourly budget there.
    to_lowdown = LowdownServer()
    point_prowl(to_lowdown.url)
    try:
        _spend_the_budget(upstream, to_lowdown)
    finally:
        prowl.unobserve()
        SENDER.reset()
        to_lowdown.close()


def _spend_the_budget(upstream: Upstream, to_lowdown: LowdownServer) -> None:
    client = prowl.observe(httpx.Client())
    for _ in range(100):
        assert client.get(upstream.url + "/ok").status_code == 200
    prowl.flush(3.0)
    host = httpx.get(f"{to_lowdown.url}/api/reputation/127.0.0.1").json()
    assert host["telemetry"]["observations"] == 60, "an anonymous client sends 60 an hour"
    assert SENDER.pending() == 40 and prowl.stats()["throttled"] == 0, prowl.stats()
    # Telemetry is over its budget; an interaction record still goes at once.
    SENDER.submit_record({"target": "npm:budget-test", "target_type": "tool", "task_type": "t", "outcome": "success", "request_kind": "tool"})
    prowl.flush(3.0)
    answer = httpx.get(f"{to_lowdown.url}/api/reputation/npm:budget-test").json()
    assert answer["interactions"] == 1, answer
