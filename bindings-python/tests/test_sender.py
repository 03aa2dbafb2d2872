"""The background sender: the caller never waits, overflow drops and counts, exit flushes
within a bound, and a forked child reports on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from typing import Callable

import httpx
import pytest

import prowl
import prowl.sender
from prowl.sender import SENDER
from servers import Collector, Upstream, dead_url


def spool_records(path) -> list:
    """The records of one spool file (JSON texts, one a line)."""
    return [line for line in path.read_text().splitlines() if line.strip()]


def test_a_telemetry_endpoint_that_never_answers_does_not_slow_the_caller(upstream: Upstream, point_prowl: Callable[[str], None]) -> None:
    blackhole = Collector(mode="hang")
    point_prowl(blackhole.url)
    try:
        client = prowl.observe(httpx.Client())
        assert client.get(upstream.url).status_code == 200
        assert blackhole.wait_requests(1, 2.0), "the sender never tried to POST"
        # The POST is now hung until its 1 s timeout: requests made meanwhile must finish
        # without it, so none of them can have seen it time out.
        for _ in range(5):
            assert client.get(upstream.url).status_code == 200
        assert prowl.stats()["failed"] == 0, "a request waited for the hung telemetry POST to time out"
        time.sleep(1.2)
        assert prowl.stats()["failed"] >= 1  # the hung POST timed out and was counted
    finally:
        SENDER.reset()
        prowl.flush(3.0)  # waits for the POST in flight to time out
        blackhole.close()
        SENDER.reset()
        prowl.configure()


def test_an_unreachable_api_is_counted_never_raised(upstream: Upstream, point_prowl: Callable[[str], None]) -> None:
    point_prowl(dead_url())
    try:
        client = prowl.observe(httpx.Client())
        assert client.get(upstream.url).status_code == 200
        assert prowl.flush(2.0)
        assert prowl.stats()["failed"] == 1 and prowl.stats()["sent"] == 0
    finally:
        SENDER.reset()
        prowl.configure()


def test_overflow_drops_and_counts(upstream: Upstream, telemetry: Collector, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prowl.sender, "MAX_QUEUE", 5)
    client = prowl.observe(httpx.Client())
    with SENDER._send_lock:  # hold the sender so the queue cannot drain meanwhile
        for _ in range(8):
            client.get(upstream.url)
    assert prowl.stats()["dropped"] == 3
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 5
    assert prowl.stats()["sent"] == 5


def _run_script(body: str, env_extra: dict, timeout: float = 20.0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_API"))}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=env, capture_output=True, timeout=timeout)


def test_what_is_queued_is_sent_at_exit(upstream: Upstream, collector: Collector) -> None:
    script = f"""
        import httpx, prowl
        client = prowl.observe(httpx.Client())
        for _ in range(3):
            client.get("{upstream.url}/ok")
        # no flush: the exit handler must send
    """
    res = _run_script(script, {"PROWL_API_URL": collector.url, "PROWL_TELEMETRY_ALLOW_PRIVATE": "1"})
    assert res.returncode == 0, res.stderr
    assert len(collector.observations()) == 3


def test_exit_flush_is_bounded_when_the_api_hangs(upstream: Upstream) -> None:
    blackhole = Collector(mode="hang")
    try:
        script = f"""
            import httpx, prowl
            client = prowl.observe(httpx.Client())
            client.get("{upstream.url}/ok")
        """
        t0 = time.monotonic()
        res = _run_script(script, {"PROWL_API_URL": blackhole.url, "PROWL_TELEMETRY_ALLOW_PRIVATE": "1"})
        elapsed = time.monotonic() - t0
        assert res.returncode == 0, res.stderr
        assert blackhole.wait_requests(1, 1.0)
        assert elapsed < 6.0, f"exit took {elapsed:.1f} s with a hung API"
    finally:
        blackhole.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_reports_its_own_calls_once(upstream: Upstream, collector: Collector) -> None:
    script = f"""
        import os, sys, httpx, prowl
        from prowl.sender import SENDER
        client = prowl.observe(httpx.Client())
        client.get("{upstream.url}/status/201")  # queued in the parent, not yet sent
        with SENDER._send_lock:
            pid = os.fork()
        if pid == 0:
            child = prowl.observe(httpx.Client())
            child.get("{upstream.url}/status/202")
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        assert status == 0, status
        client.get("{upstream.url}/status/203")
    """
    res = _run_script(script, {"PROWL_API_URL": collector.url, "PROWL_TELEMETRY_ALLOW_PRIVATE": "1"})
    assert res.returncode == 0, res.stderr
    assert sorted(o["status"] for o in collector.observations()) == [201, 202, 203]


def test_a_keep_alive_closed_by_the_server_loses_nothing(upstream: Upstream, point_prowl: Callable[[str], None]) -> None:
    closer = Collector(mode="close")
    point_prowl(closer.url)
    try:
        client = prowl.observe(httpx.Client())
        for _ in range(3):
            client.get(upstream.url)
            assert prowl.flush(2.0)
        assert len(closer.observations()) == 3
        assert prowl.stats()["failed"] == 0
    finally:
        closer.close()
        SENDER.reset()
        prowl.configure()


def test_a_429_pauses_sending_and_is_counted(upstream: Upstream, point_prowl: Callable[[str], None]) -> None:
    limiter = Collector(mode="429")
    point_prowl(limiter.url)
    try:
        client = prowl.observe(httpx.Client())
        client.get(upstream.url)
        assert prowl.flush(2.0)
        assert prowl.stats()["throttled"] == 1
        client.get(upstream.url)
        assert not prowl.flush(0.5)  # paused for Retry-After: kept queued, not sent
        assert len(limiter.requests) == 1 and prowl.stats()["pending"] == 1
    finally:
        limiter.close()
        SENDER.reset()
        prowl.configure()


@pytest.mark.parametrize("mode", ["404", "page", "huge"])
def test_an_api_url_that_is_not_the_api_counts_telemetry_failed(
    upstream: Upstream, point_prowl: Callable[[str], None], mode: str
) -> None:
    """The core reads every answer (as observe(fetch) does): only the API's own answer delivers."""
    wrong = Collector(mode=mode)
    point_prowl(wrong.url)
    try:
        client = prowl.observe(httpx.Client())
        for _ in range(3):
            client.get(upstream.url)
        assert prowl.flush(2.0)
        assert len(wrong.items("/v1/telemetry/observe")) == 3, "they were posted"
        counts = prowl.stats()
        assert (counts["sent"], counts["failed"], counts["throttled"]) == (0, 3, 0)
    finally:
        wrong.close()
        SENDER.reset()
        prowl.configure()


def test_records_over_a_quota_are_spooled_and_sent_later(lowdown_home, point_prowl: Callable[[str], None], tmp_path) -> None:
    """Against the real server's quotas: what it does not take is kept, never lost."""
    from conftest import LowdownServer

    def record(i: int) -> dict:
        return {"actor": "agent:test", "target": "npm:quota-test", "target_type": "tool", "task_type": "t", "outcome": "success", "record_id": f"pq-{i}"}

    db = tmp_path / "quota.db"
    limited = LowdownServer(args=["--quota", "records-per-network=3"], db=db)
    try:
        point_prowl(limited.url)
        for i in range(5):
            SENDER.submit_record(record(i))
        assert prowl.flush(5.0)
        assert prowl.stats()["sent"] == 3
        assert prowl.stats()["spooled"] == 2
        assert limited.get("/api/reputation/npm:quota-test")["interactions"] == 3
        kept = [json.loads(r)["record_id"] for f in sorted((lowdown_home / "spool").glob("*.jsonl")) for r in spool_records(f)]
        assert kept == ["pq-3", "pq-4"]
    finally:
        limited.close()
    SENDER.reset()
    # The next run, once the server takes them (here: a higher quota on the same database).
    open_ = LowdownServer(args=["--quota", "records-per-network=10"], db=db)
    try:
        point_prowl(open_.url)
        SENDER.submit_record(record(5))
        assert prowl.flush(5.0)
        assert open_.get("/api/reputation/npm:quota-test")["interactions"] == 6
        assert not any((lowdown_home / "spool").glob("*.jsonl*"))
    finally:
        open_.close()
        SENDER.reset()
