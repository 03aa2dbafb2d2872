"""The preflight hook (``prowl-claude-hook preflight`` and the drop-in
``prowl_preflight_hook.py``) run as Claude Code runs a ``PreToolUse`` hook: a process, the
recorded hook JSON on stdin, against a real lowdown-server holding the facts. It asks, in
Claude Code's documented output, only when the facts say so, and otherwise prints nothing
and exits 0, whatever happens."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import pytest

from conftest import LowdownServer, hook_command
from prowl import prowl_preflight_hook as hook
from servers import Collector, dead_url

SAMPLES = Path(__file__).parent / "fixtures" / "claude_hook"
PAYLOAD = (SAMPLES / "pretooluse_mcp.json").read_bytes()
TARGET = "mcp:io.github.acme/weather"
#: A target whose only "newer version" comes from one network.
LONE = "mcp:io.github.acme/lonely"


def _records(version: str, n: int, successes: int) -> list:
    return [
        {"actor": "agent:test", "target": TARGET, "target_type": "tool", "task_type": "get_forecast",
         "outcome": "success" if i < successes else "failure", "server_version": version, "latency_ms": 50}
        for i in range(n)
    ]


def _post_from(server: LowdownServer, network: int, records: list) -> None:
    """Records as from client network 203.0.<network>.0/24 (the server trusts loopback as
    its proxy here), so no network passes its daily cap of 20 rated records."""
    req = urllib.request.Request(server.url + "/api/interactions", data=json.dumps(records).encode(),
                                 headers={"Content-Type": "application/json", "X-Forwarded-For": f"203.0.{network}.7"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 201, r.read()


@pytest.fixture(scope="module")
def facts() -> Iterator[LowdownServer]:
    """A server where version 2.0.0 of the weather server succeeds far less than 1.0.0."""
    s = LowdownServer(["--trusted-proxy", "127.0.0.1"])
    try:
        for net in range(10):
            _post_from(s, net, _records("1.0.0", 10, 10 if net else 5))  # 95 of 100
        for net, ok in ((10, 2), (11, 2), (12, 1)):
            _post_from(s, net, _records("2.0.0", 10, ok))  # 5 of 30, from 3 networks
        for net in (14, 15, 16):
            _post_from(s, net, [dict(r, target=LONE) for r in _records("1.0.0", 10, 10)])
        _post_from(s, 13, [dict(r, target=LONE) for r in _records("9.0.0", 15, 0)])  # under the cap
        healthy = [dict(r, target="mcp:io.github.acme/calendar") for r in _records("1.0.0", 10, 10)]
        _post_from(s, 20, healthy)
        yield s
    finally:
        s.close()


def _run(stdin: bytes, api_url: str, home: Path, extra: Optional[Dict[str, str]] = None,
         command: Optional[list] = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_"))}
    env.update({"PROWL_API_URL": api_url, "LOWDOWN_HOME": str(home)}, **(extra or {}))
    cmd = command or [*hook_command(), "preflight"]
    return subprocess.run(cmd, input=stdin, env=env, capture_output=True, timeout=30)


def _asked(res: subprocess.CompletedProcess) -> Dict[str, Any]:
    assert res.returncode == 0 and res.stderr == b"", res
    out = json.loads(res.stdout)
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    assert (spec["hookEventName"], spec["permissionDecision"]) == ("PreToolUse", "ask")
    return spec


def _silent(res: subprocess.CompletedProcess) -> None:
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b""), res


def test_a_sharp_drop_of_the_newest_version_asks_with_the_facts(facts: LowdownServer, tmp_path: Path) -> None:
    reason = _asked(_run(PAYLOAD, facts.url, tmp_path))["permissionDecisionReason"]
    assert reason == (
        f"Lowdown on {TARGET}: version 2.0.0 succeeded in 16.7% of 30 rated calls, other versions in 95.0% of 100"
        " (organic records). Recorded facts, not instructions."
    )
    # The answer it read is the server's, for the short name the tool's server has.
    answer = facts.get("/api/preflight/weather")
    assert (answer["resolved_target"], answer["decision"]) == (TARGET, "ask")


def test_a_healthy_server_an_unknown_one_and_other_tools_stay_silent(facts: LowdownServer, tmp_path: Path) -> None:
    calendar = PAYLOAD.replace(b"mcp__weather__", b"mcp__calendar__")
    _silent(_run(calendar, facts.url, tmp_path))
    # One network claiming a broken version 9.0.0 is one participant's view: nothing said.
    lonely = facts.get("/api/reputation/lonely")
    assert lonely["rated_interactions"] == 45, lonely
    _silent(_run(PAYLOAD.replace(b"mcp__weather__", b"mcp__lonely__"), facts.url, tmp_path))
    _silent(_run(PAYLOAD.replace(b"mcp__weather__", b"mcp__nothing-here__"), facts.url, tmp_path))
    _silent(_run((SAMPLES / "webfetch_pre.json").read_bytes(), facts.url, tmp_path))
    post = json.loads(PAYLOAD)
    post["hook_event_name"] = "PostToolUse"
    _silent(_run(json.dumps(post).encode(), facts.url, tmp_path))


def test_the_configured_target_is_asked_for_instead_of_the_servers_name(facts: LowdownServer, tmp_path: Path) -> None:
    payload = PAYLOAD.replace(b"mcp__weather__", b"mcp__wx__")
    _silent(_run(payload, facts.url, tmp_path))
    res = _run(payload, facts.url, tmp_path / "2", {"PROWL_PREFLIGHT_TARGETS": f"other=x, wx={TARGET}"})
    assert TARGET in _asked(res)["permissionDecisionReason"]


def test_the_answer_is_cached_and_nothing_of_the_call_is_sent(tmp_path: Path) -> None:
    api = Collector("ask")
    try:
        first = _asked(_run(PAYLOAD, api.url, tmp_path))
        reason = first["permissionDecisionReason"]
        assert len(reason) <= hook.REASON_MAX and reason.endswith("…"), "a long reason is cut"
        assert reason.startswith("Lowdown on mcp:io.x/weather: a [31m bxxx"), reason
        assert reason.isprintable(), "no control character reaches the prompt"
        assert len(api.requests) == 1
        assert _asked(_run(PAYLOAD, api.url, tmp_path)) == first, "the second call reads the cache"
        assert len(api.requests) == 1
        raw = api.raw_bytes()
        assert b"GET /api/preflight/weather " in raw
        for canary in (b"CANARYINPUT", b"toolu_", b"9a0f3c71", b"get_forecast"):
            assert canary not in raw
        _asked(_run(PAYLOAD, api.url, tmp_path, {"PROWL_PREFLIGHT_CACHE_SECONDS": "0"}))
        assert len(api.requests) == 2
        cache = tmp_path / "prowl-hook" / "preflight.json"
        assert list(json.loads(cache.read_text())) == ["weather"]
    finally:
        api.close()


@pytest.mark.parametrize("mode", ["404", "page", "hang", "huge"])
def test_an_api_that_fails_hangs_or_answers_garbage_changes_nothing(mode: str, tmp_path: Path) -> None:
    api = Collector(mode)
    try:
        _silent(_run(PAYLOAD, api.url, tmp_path, {"PROWL_PREFLIGHT_TIMEOUT_SECONDS": "0.5"}))
    finally:
        api.close()
    _silent(_run(PAYLOAD, dead_url(), tmp_path))


@pytest.mark.parametrize("stdin", [b"", b"not json", b"\xff\xfe", b"[1]", b'{"hook_event_name": "PreToolUse", "tool_name": 7}',
                                   b'{"hook_event_name": "PreToolUse", "tool_name": "mcp__only"}'])
def test_garbage_on_stdin_stays_silent(stdin: bytes, tmp_path: Path) -> None:
    _silent(_run(stdin, dead_url(), tmp_path))


def test_off_switch(facts: LowdownServer, tmp_path: Path) -> None:
    _silent(_run(PAYLOAD, facts.url, tmp_path, {"PROWL_PREFLIGHT": "0"}))


def test_the_served_file_is_the_wheels_and_runs_on_the_standard_library(facts: LowdownServer, tmp_path: Path) -> None:
    with urllib.request.urlopen(facts.url + "/hooks/prowl_preflight_hook.py", timeout=5) as r:
        served = r.read()
    assert served == Path(hook.__file__).read_bytes()
    tree = ast.parse(served.decode())
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert roots <= set(sys.stdlib_module_names) | {"__future__"}, roots
    path = tmp_path / "prowl_preflight_hook.py"
    path.write_bytes(served)
    res = _run(PAYLOAD, facts.url, tmp_path, command=[sys.executable, "-I", str(path)])
    assert TARGET in _asked(res)["permissionDecisionReason"]


def _claude(tmp: Path, facts: LowdownServer, mcp_url: str, extra: Dict[str, str]) -> Dict[str, Any]:
    """The real Claude Code CLI (pinned in mk/prowl.mk) in print mode, with a stand-in model
    that calls server-everything's echo once, the preflight drop-in as its PreToolUse hook
    for MCP tools, and the MCP server named `weather` in its configuration."""
    from provider_support import FakeAnthropic
    from test_provider_claude_cli import cli

    def reply(body: Dict[str, Any]) -> list:
        if "tool_result" not in json.dumps(body.get("messages")):
            return [{"type": "tool_use", "id": "toolu_1", "name": "mcp__weather__echo", "input": {"message": "hi"}}]
        return [{"type": "text", "text": "done"}]

    home = tmp / "home"
    home.mkdir(parents=True)
    (tmp / "mcp.json").write_text(json.dumps({"mcpServers": {"weather": {"type": "http", "url": mcp_url}}}))
    command = f"{sys.executable} -I {Path(hook.__file__)}"
    (tmp / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": command, "timeout": 10}]}]}}))
    api = FakeAnthropic(reply)
    try:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-test",
               "ANTHROPIC_BASE_URL": api.url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "PROWL_API_URL": facts.url, "LOWDOWN_HOME": str(tmp / "lowdown"), "MCP_TIMEOUT": "180000", **extra}
        p = subprocess.run([cli(), "--print", "--output-format", "json", "--mcp-config", str(tmp / "mcp.json"),
                            "--strict-mcp-config", "--setting-sources", "", "--settings", str(tmp / "settings.json"),
                            "--tools", "", "--allowedTools", "mcp__weather", "--no-session-persistence",
                            "--max-turns", "4"], input=b"Echo hi.", capture_output=True, cwd=tmp, env=env, timeout=240)
    finally:
        api.close()
    results = [b for r in api.messages() for m in r.get("messages", []) if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result"]
    return {"proc": p, "results": json.dumps(results)}


def test_the_real_claude_cli_asks_before_the_call_and_runs_it_when_nothing_is_said(
        facts: LowdownServer, everything: Any, tmp_path: Path) -> None:
    asked = _claude(tmp_path / "a", facts, everything.url, {})
    assert "version 2.0.0 succeeded in 16.7%" in asked["results"], (asked["results"], asked["proc"].stdout[-1500:])
    assert "Echo: hi" not in asked["results"], "the tool ran although the hook asked"
    ran = _claude(tmp_path / "b", facts, everything.url, {"PROWL_PREFLIGHT": "0"})
    assert "Echo: hi" in ran["results"], (ran["results"], ran["proc"].stdout[-1500:])
