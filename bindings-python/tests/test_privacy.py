"""Only the host leaves the machine: canaries in every other part of a request or response
must never appear in any byte the collector receives; blocked hosts are never sent."""

from __future__ import annotations

import httpx
import pytest

import prowl
from prowl.sender import SENDER
from servers import Collector, Upstream

CANARIES = {
    "path": "CANARYPATH7f3a",
    "query": "CANARYQUERY91bc",
    "fragment": "CANARYFRAG22de",
    "header": "CANARYHEADER55aa",
    "user": "CANARYUSER0e0e",
    "password": "CANARYPASS1f1f",
    "body": "CANARYBODY8c8c",
}


def _assert_no_canary(raw: bytes) -> None:
    for where, canary in CANARIES.items():
        assert canary.encode() not in raw, f"{where} canary leaked to the collector"
        assert canary.lower().encode() not in raw.lower(), f"{where} canary leaked (case changed)"


def test_paths_queries_headers_bodies_and_credentials_never_leave(upstream: Upstream, telemetry: Collector) -> None:
    c = CANARIES
    client = prowl.observe(httpx.Client(proxy=upstream.url))
    url = f"http://{c['user']}:{c['password']}@api.example.com/{c['path']}/x?token={c['query']}#{c['fragment']}"
    resp = client.post(url, headers={"X-Secret": c["header"], "Authorization": f"Bearer {c['header']}"}, content=c["body"])
    assert resp.status_code == 201
    local = prowl.observe(httpx.Client())
    local.post(f"{upstream.url}/{c['path']}?q={c['query']}", json={"secret": c["body"]}, headers={"X-Secret": c["header"]})
    assert prowl.flush(2.0)
    obs = telemetry.observations()
    assert sorted(o["host"] for o in obs) == ["127.0.0.1", "api.example.com"]
    for o in obs:  # the observation's shape is exactly SPEC §4's, nothing more
        assert set(o) <= {"host", "method", "status", "latency_ms", "response_bytes", "source"}
    raw = telemetry.raw_bytes()
    assert b"api.example.com" in raw  # the check below is looking at real traffic
    _assert_no_canary(raw)


def test_private_and_local_hosts_are_never_sent_by_default(upstream: Upstream, telemetry_private_blocked: Collector) -> None:
    client = prowl.observe(httpx.Client(proxy=upstream.url))
    hosts = [
        "localhost",
        "db.internal",
        "printer.local",
        "intranet",
        "10.1.2.3",
        "192.168.0.9",
        "169.254.169.254",
        "metadata.google.internal",
        "[fd00::1]",
    ]
    for h in hosts:
        client.get(f"http://{h}/")
    prowl.observe(httpx.Client()).get(upstream.url)  # 127.0.0.1, the real upstream
    client.get("http://public.example.net/")
    assert prowl.flush(2.0)
    assert [o["host"] for o in telemetry_private_blocked.observations()] == ["public.example.net"]
    assert prowl.stats()["blocked"] == len(hosts) + 1
    bodies = b"".join(r["body"] for r in telemetry_private_blocked.requests).lower()
    assert b"public.example.net" in bodies
    for h in hosts + ["127.0.0.1"]:
        assert h.strip("[]").encode() not in bodies


def test_allowlist_restricts_reports_to_listed_hosts_and_subdomains(
    upstream: Upstream, collector: Collector, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("PROWL_API_URL", collector.url)
    clean_env.setenv("PROWL_TELEMETRY_ALLOWLIST", "stripe.com,resend.com")
    prowl.configure()
    SENDER.reset()
    try:
        client = prowl.observe(httpx.Client(proxy=upstream.url))
        for host in ("api.stripe.com", "stripe.com", "resend.com", "notstripe.com", "evil.org", "stripe.com.evil.org"):
            client.get(f"http://{host}/v1")
        assert prowl.flush(2.0)
        assert sorted(o["host"] for o in collector.observations()) == ["api.stripe.com", "resend.com", "stripe.com"]
        assert b"evil.org" not in collector.raw_bytes()
    finally:
        prowl.configure()
        SENDER.reset()


def test_agent_key_goes_in_the_header_only(upstream: Upstream, telemetry: Collector, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROWL_AGENT_KEY", "ak_test_key_123")
    prowl.configure()
    prowl.observe(httpx.Client()).get(upstream.url)
    assert prowl.flush(2.0)
    [req] = telemetry.requests
    assert req["headers"]["x-agent-key"] == "ak_test_key_123"
    assert b"ak_test_key_123" not in req["body"]
