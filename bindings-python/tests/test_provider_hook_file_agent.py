"""prowl_provider_hook.py with ``agent`` directives: the downloaded file, run from the Prowl
page's settings.json block, runs a stand-in ``claude`` (the real CLI needs a paid model)
with exactly the package's flags and environment rules, its one MCP server being the file
itself as a stdio bridge; and the bridge, run for real against server-everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from prowl import prowl_provider_hook as hook
from provider_support import Everything, Server, stub_claude
from test_provider_hook_file_e2e import SECRETS, Machine

AGENT_SPEC = {
    "prompt": "Which tools does this MCP server offer? List their names.",
    # https on loopback (the server and the hook here allow loopback); the stand-in claude
    # starts the bridge, which finds nothing listening and ends with its stdin.
    "mcp_server": {"url": "https://127.0.0.1:9/mcp"},
    "expect": {"contains": ["echo", "get-sum"]},
}


def machine(tmp_path: Path, api: Server, mode: str = "good") -> Machine:
    m = Machine(tmp_path, api, api.url, api.provider())
    stub_claude(tmp_path / "bin")
    (tmp_path / "bin" / "stub_mode").write_text(mode)
    return m


def test_an_agent_directive_runs_claude_with_only_the_bridge(tmp_path: Path, server: Server) -> None:
    d = server.directive(AGENT_SPEC, kind="agent", price=2)
    m = machine(tmp_path, server)
    st = m.stop(live=True, ANTHROPIC_API_KEY="sk-ant-test")
    assert st.get("last_error") is None, st
    # One network's answer waits for another's: pending, the credit held.
    assert (st["last_result"]["verification"], st["last_result"]["credited_credits"]) == ("pending", 0)
    [sub] = server.status_of(d)["submissions"]
    assert (sub["status"], sub["dimensions"], sub["recorded_score"]) == ("pending", {"expectations": 10}, 100)
    assert sub["runner_id"] == hook.RUNNER
    ran = json.loads((tmp_path / "bin" / "stub.json").read_text())
    assert ran["prompt"] == AGENT_SPEC["prompt"], "the prompt goes on stdin"
    argv: List[str] = ran["argv"]
    cfg = argv.index("--mcp-config")
    assert argv[cfg + 2:] == [*hook.CLAUDE_FLAGS, "--max-budget-usd", "0.25"]
    # Claude's one MCP server is this very file, as a bridge to the directive's URL, run
    # by the interpreter the hook ran under with -I -S.
    python = ran["config"]["mcpServers"]["prowl_bench"]["command"]
    assert Path(python).resolve() == (Path(sys.base_prefix) / "bin" / "python3").resolve()
    assert ran["config"] == {"mcpServers": {"prowl_bench": {
        "type": "stdio", "command": python, "env": {},
        "args": ["-I", "-S", str(m.path), "bridge", "--unsafe-allow-loopback", "--", AGENT_SPEC["mcp_server"]["url"]]}}}
    assert set(ran["env"]) <= set(hook.CHILD_ENV) | {"TMPDIR", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"}, ran["env_keys"]
    assert ran["env"]["ANTHROPIC_API_KEY"] == "sk-ant-test" and ran["env"]["TMPDIR"] == ran["cwd"]
    assert [v for v in [*SECRETS.values(), m.key] if v in json.dumps(ran["env"])] == []
    assert not Path(ran["cwd"]).exists(), "the run's directory is removed"
    assert ran["nice"] == min(19, os.nice(0) + 10), "idle-time work runs at nice 10"
    assert "among others" not in json.dumps(server.status_of(d)), "the answer never leaves the machine"


def test_an_answer_missing_a_string_is_submitted_as_partial(tmp_path: Path, server: Server) -> None:
    d = server.directive(AGENT_SPEC, kind="agent")
    st = machine(tmp_path, server, "partial").stop(live=True)
    assert st.get("last_error") is None, st
    [sub] = server.status_of(d)["submissions"]
    assert sub["dimensions"] == {"expectations": 5}
    assert [t["passed"] for t in sub["test_results"]] == [True, False]


@pytest.mark.parametrize("case", ["unreadable", "crash", "hang", "no_cli", "blocked_url"])
def test_agent_failures_release_the_directive_at_once(tmp_path: Path, server: Server, case: str) -> None:
    m = machine(tmp_path, server, case)
    extra = {"PROWL_PROVIDER_RUN_TIMEOUT_SECONDS": "2"}
    if case == "no_cli":
        (tmp_path / "bin" / "claude").write_text("#!/nonexistent/interpreter\n")
    if case == "blocked_url":
        extra["PROWL_UNSAFE_ALLOW_LOOPBACK"] = ""
    d = server.directive(AGENT_SPEC, kind="agent")
    st = m.stop(live=True, **extra)
    want = {"unreadable": "unreadable_output", "crash": "crashed", "hang": "timeout", "no_cli": "no_claude_cli",
            "blocked_url": "blocked_url"}[case]
    assert st["last_error"] == f"{d}: {want}; released", st
    after = server.status_of(d)
    assert (after["status"], after["lease"], after["submission"], after["submissions"]) == ("open", None, None, [])
    log = tmp_path / "bin" / "stub.json"
    if case == "blocked_url":
        assert not log.exists(), "the CLI never started"
    if case == "hang":
        with pytest.raises(ProcessLookupError):
            os.kill(json.loads(log.read_text())["pid"], 0)


def test_without_a_claude_cli_agent_directives_are_not_claimed(tmp_path: Path, server: Server) -> None:
    d = server.directive(AGENT_SPEC, kind="agent")
    m = Machine(tmp_path, server, server.url, server.provider())
    st = m.stop(live=True, PROWL_CLAUDE_CMD="no-such-claude-here")
    assert "claimed" not in st and st["refused"] == [] and st["open"] == 1, st
    assert server.status_of(d)["status"] == "open"


def _bridge(argv: List[str], messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    stdin = b"".join(json.dumps(x).encode() + b"\n" for x in messages)
    r = subprocess.run(argv, input=stdin, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


CONVERSATION = [
    {"jsonrpc": "2.0", "id": "first", "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "claude", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}},
    {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi there"}}},
]


def test_the_bridge_relays_claudes_requests_as_the_packages_bridge_does(everything: Everything) -> None:
    base = str(Path(sys.base_prefix) / "bin" / "python3")
    mine = _bridge([base, "-I", "-S", str(hook.__file__), "bridge", "--unsafe-allow-loopback", "--", everything.url],
                   CONVERSATION)
    theirs = _bridge([sys.executable, "-m", "prowl.provider.bridge", "--unsafe-allow-loopback", "--", everything.url],
                     CONVERSATION)
    assert [a["id"] for a in mine] == ["first", 7, 8], "answers under Claude's own ids, nothing else"
    assert mine[0]["result"]["serverInfo"]["name"] == theirs[0]["result"]["serverInfo"]["name"]
    assert mine[1] == theirs[1] and any(t["name"] == "echo" for t in mine[1]["result"]["tools"])
    assert mine[2] == theirs[2] and "hi there" in json.dumps(mine[2])


@pytest.mark.parametrize("url", ["https://169.254.169.254/mcp", "https://localhost/mcp", "http://mcp.example.com/mcp"])
def test_the_bridge_refuses_a_url_the_rules_refuse(url: str) -> None:
    r = subprocess.run([sys.executable, "-I", "-S", str(hook.__file__), "bridge", "--", url], input=b"", capture_output=True, timeout=30)
    assert r.returncode == 2 and b"refused" in r.stderr and r.stdout == b""
