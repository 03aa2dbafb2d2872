"""The background sender: the caller never waits, overflow drops and counts, exit flushes
within a bound, and a forked child reports on its own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import httpx
import pytest

import prowl
import prowl.sender
from prowl.sender import SENDER
from servers import Collector, Upstream, dead_url


def test_a_telemetry_endpoint_that_never_answers_does_not_slow_the_caller(upstream: Upstream, clean_env: pytest.MonkeyPatch) -> None:
    blackhole = Collector(mode="hang")
    clean_env.setenv("PROWL_API_URL", blackhole.url)
    clean_env.setenv("PROWL_TELEMETRY_ALLOW_PRIVATE", "1")
    prowl.configure()
    SENDER.reset()
    try:
        client = prowl.observe(httpx.Client())
        slowest = 0.0
        end = time.monotonic() + 1.5  # spans several sweeps and a whole 1 s POST timeout
        n = 0
        while time.monotonic() < end:
            t0 = time.perf_counter()
            assert client.get(upstream.url).status_code == 200
            slowest = max(slowest, time.perf_counter() - t0)
            n += 1
        assert blackhole.wait_requests(1, 2.0), "the sender never tried to POST"
        assert slowest < 0.5, f"a request took {slowest:.3f} s while telemetry hung (waiting on it would take ~1 s)"
        time.sleep(1.2)
        assert prowl.stats()["failed"] >= 1  # the hung POST timed out and was counted
    finally:
        SENDER.reset()
        prowl.flush(3.0)  # waits for the POST in flight to time out
        blackhole.close()
        SENDER.reset()
        prowl.configure()


def test_an_unreachable_api_is_counted_never_raised(upstream: Upstream, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("PROWL_API_URL", dead_url())
    clean_env.setenv("PROWL_TELEMETRY_ALLOW_PRIVATE", "1")
    prowl.configure()
    SENDER.reset()
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


def _point(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROWL_API_URL", url)
    monkeypatch.setenv("PROWL_TELEMETRY_ALLOW_PRIVATE", "1")
    prowl.configure()
    SENDER.reset()


def test_a_keep_alive_closed_by_the_server_loses_nothing(upstream: Upstream, clean_env: pytest.MonkeyPatch) -> None:
    closer = Collector(mode="close")
    _point(closer.url, clean_env)
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


def test_a_429_pauses_sending_and_is_counted(upstream: Upstream, clean_env: pytest.MonkeyPatch) -> None:
    limiter = Collector(mode="429")
    _point(limiter.url, clean_env)
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
