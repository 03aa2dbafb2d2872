"""prowl-claude-hook run as Claude Code runs it: a process, hook JSON on stdin."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

from conftest import hook_command
from servers import Collector, dead_url

SAMPLES = Path(__file__).parent / "fixtures" / "claude_hook"


def _run(stdin: bytes, api_url: str, extra_env: Optional[dict] = None, timeout: float = 10) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_API"))}
    env["PROWL_API_URL"] = api_url
    env.update(extra_env or {})
    return subprocess.run(hook_command(), input=stdin, env=env, capture_output=True, timeout=timeout)


def _quiet_success(res: subprocess.CompletedProcess) -> None:
    assert res.returncode == 0
    assert res.stdout == b"" and res.stderr == b""


def test_a_successful_webfetch_is_one_observation_with_host_only(collector: Collector) -> None:
    res = _run((SAMPLES / "webfetch_success.json").read_bytes(), collector.url)
    _quiet_success(res)
    assert collector.observations() == [
        {"host": "docs.stripe.com", "method": "GET", "status": 200, "latency_ms": 1312.0, "response_bytes": 48213, "source": "organic"}
    ]
    raw = collector.raw_bytes()
    for canary in (b"CANARYQUERY", b"CANARYPROMPT", b"CANARYRESULT", b"/api/charges"):
        assert canary not in raw


def test_http_errors_keep_their_status(collector: Collector) -> None:
    _quiet_success(_run((SAMPLES / "webfetch_404.json").read_bytes(), collector.url))
    [obs] = collector.observations()
    assert (obs["host"], obs["status"], obs["response_bytes"], obs["latency_ms"]) == ("api.resend.com", 404, 162, 214.0)
    assert b"CANARYPATH" not in collector.raw_bytes()


def test_a_failed_fetch_has_null_status_and_no_error_text(collector: Collector) -> None:
    _quiet_success(_run((SAMPLES / "webfetch_failure.json").read_bytes(), collector.url))
    [obs] = collector.observations()
    assert (obs["host"], obs["status"], obs["latency_ms"]) == ("status.example-vendor.io", None, 30004.0)
    raw = collector.raw_bytes()
    assert b"CANARYERROR" not in raw and b"CANARYPATH" not in raw and b"ENOTFOUND" not in raw


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json at all",
        b"\xff\xfe\x00garbage",
        b"[1,2,3]",
        b'{"hook_event_name": "PostToolUse", "tool_name": "WebFetch"}',
        b'{"hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_input": {"url": 42}}',
        b'{"hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_input": {"url": "not a url"}}',
        (SAMPLES / "bash_tool.json").read_bytes(),
        (SAMPLES / "webfetch_private_host.json").read_bytes(),
    ],
    ids=["empty", "text", "binary", "array", "no-input", "url-not-string", "url-garbage", "other-tool", "private-host"],
)
def test_anything_else_sends_nothing_and_exits_0_quietly(stdin: bytes, collector: Collector) -> None:
    _quiet_success(_run(stdin, collector.url))
    assert collector.requests == []


def test_telemetry_off_sends_nothing(collector: Collector) -> None:
    _quiet_success(_run((SAMPLES / "webfetch_success.json").read_bytes(), collector.url, {"PROWL_TELEMETRY": "0"}))
    assert collector.requests == []


def test_an_unreachable_or_hung_api_still_exits_0_within_the_timeout() -> None:
    _quiet_success(_run((SAMPLES / "webfetch_success.json").read_bytes(), dead_url()))
    blackhole = Collector(mode="hang")
    try:
        t0 = time.monotonic()
        _quiet_success(_run((SAMPLES / "webfetch_success.json").read_bytes(), blackhole.url))
        assert time.monotonic() - t0 < 5.0
        assert blackhole.wait_requests(1, 1.0)  # it did try
    finally:
        blackhole.close()


def test_the_agent_key_is_sent_as_a_header(collector: Collector) -> None:
    _quiet_success(_run((SAMPLES / "webfetch_success.json").read_bytes(), collector.url, {"PROWL_AGENT_KEY": "ak_hook_1"}))
    [req] = collector.requests
    assert req["headers"]["x-agent-key"] == "ak_hook_1"


def test_the_allowlist_applies_to_the_hook_too(collector: Collector) -> None:
    sample = (SAMPLES / "webfetch_success.json").read_bytes()
    _quiet_success(_run(sample, collector.url, {"PROWL_TELEMETRY_ALLOWLIST": "resend.com"}))
    assert collector.requests == []
    _quiet_success(_run(sample, collector.url, {"PROWL_TELEMETRY_ALLOWLIST": "stripe.com"}))
    assert [o["host"] for o in collector.observations()] == ["docs.stripe.com"]


def test_an_oversized_payload_is_ignored_quietly(collector: Collector) -> None:
    huge = b'{"hook_event_name": "PostToolUse", "tool_name": "WebFetch", "pad": "' + b"x" * (9 * 1024 * 1024) + b'"}'
    _quiet_success(_run(huge, collector.url))
    assert collector.requests == []
