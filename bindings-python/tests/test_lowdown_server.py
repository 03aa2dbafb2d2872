"""End to end against a real lowdown-server: what prowl sends is accepted and shows up in
the reputation answer (the telemetry block for hosts, interactions for LangChain tools)."""

from __future__ import annotations

import os
import subprocess
import urllib.parse
from pathlib import Path

import httpx
import pytest

import prowl
from conftest import LowdownServer, hook_command
from servers import Upstream

SAMPLES = Path(__file__).parent / "fixtures" / "claude_hook"


def _reputation(server: LowdownServer, target: str) -> dict:
    return server.get("/api/reputation/" + urllib.parse.quote(target, safe=""))


def test_three_lines_make_a_real_client_report_to_lowdown(upstream: Upstream, to_lowdown: LowdownServer) -> None:
    client = prowl.observe(httpx.Client())
    for path in ("/ok", "/status/503", "/status/404"):
        client.get(upstream.url + path)
    assert prowl.flush(3.0)
    stats = prowl.stats()
    assert stats["sent"] == 3 and stats["failed"] == 0, stats
    tel = _reputation(to_lowdown, "127.0.0.1")["telemetry"]
    assert tel["subject"] == {"kind": "host", "name": "127.0.0.1"}
    assert tel["observations"] == 3
    assert tel["status_codes"] == {"200": 1, "503": 1, "404": 1}
    assert (tel["status_classes"]["success"], tel["status_classes"]["failure"], tel["status_classes"]["rejected"]) == (1, 1, 1)


@pytest.mark.anyio
async def test_async_client_reports_to_lowdown(upstream: Upstream, to_lowdown: LowdownServer) -> None:
    async with prowl.observe(httpx.AsyncClient(proxy=upstream.url)) as client:
        await client.get("http://async-e2e.example.com/v1")
    assert prowl.flush(3.0)
    assert prowl.stats()["sent"] == 1
    tel = _reputation(to_lowdown, "async-e2e.example.com")["telemetry"]
    assert (tel["observations"], tel["status_codes"]) == (1, {"200": 1})


def test_langchain_tool_runs_become_interactions(to_lowdown: LowdownServer) -> None:
    from langchain_core.tools import tool

    from prowl.langchain import ProwlCallbackHandler

    @tool
    def e2e_lookup_tool(q: str) -> str:
        """Look something up."""
        if q == "fail":
            raise RuntimeError("nope")
        return "found"

    handler = ProwlCallbackHandler()
    for q in ("a", "b", "c"):
        e2e_lookup_tool.invoke({"q": q}, config={"callbacks": [handler]})
    with pytest.raises(RuntimeError):
        e2e_lookup_tool.invoke({"q": "fail"}, config={"callbacks": [handler]})
    assert prowl.flush(3.0)
    assert prowl.stats()["sent"] == 4 and prowl.stats()["invalid"] == 0
    rep = _reputation(to_lowdown, "e2e_lookup_tool")
    assert rep["interactions"] == 4
    assert rep["success_rate"] == 0.75


def test_the_claude_hook_reports_to_lowdown(to_lowdown: LowdownServer) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_API"))}
    env["PROWL_API_URL"] = to_lowdown.url
    res = subprocess.run(hook_command(), input=(SAMPLES / "webfetch_success.json").read_bytes(), env=env, capture_output=True, timeout=10)
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")
    tel = _reputation(to_lowdown, "docs.stripe.com")["telemetry"]
    assert (tel["observations"], tel["status_codes"], tel["latency_p50_ms"] > 0) == (1, {"200": 1}, True)


def test_the_stored_deployment_is_where_prowl_reports(
    upstream: Upstream, lowdown_server: LowdownServer, clean_env: pytest.MonkeyPatch, lowdown_home: Path
) -> None:
    """``lowdown-proxy config set api-url`` (the proxy's command, as a user runs it) stores a
    deployment every host of the user then reports to; the environment still wins."""
    root = Path(__file__).resolve().parents[2]
    proxy = root / "npm" / "lowdown-proxy" / "bin" / "lowdown-proxy.js"
    env = {**os.environ, "LOWDOWN_HOME": str(lowdown_home)}
    subprocess.run(["node", str(proxy), "config", "set", "api-url", lowdown_server.url], env=env, check=True, capture_output=True)
    clean_env.setenv("PROWL_TELEMETRY_ALLOW_PRIVATE", "1")
    assert prowl.configure().api_url == lowdown_server.url
    client = prowl.observe(httpx.Client(proxy=upstream.url))
    try:
        client.get("http://stored-deployment.example.com/v1")
        assert prowl.flush(3.0)
    finally:
        prowl.unobserve()
    tel = _reputation(lowdown_server, "stored-deployment.example.com")["telemetry"]
    assert tel["observations"] == 1
    clean_env.setenv("PROWL_API_URL", "http://127.0.0.1:9")
    assert prowl.configure().api_url == "http://127.0.0.1:9"
    (lowdown_home / "config.json").write_text("{broken")
    clean_env.delenv("PROWL_API_URL")
    assert prowl.configure().api_url == "http://127.0.0.1:7077", "a corrupt file counts as none"
