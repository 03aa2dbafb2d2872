"""``prowl-provider-hook`` end to end (SPEC §11): the installed console script, its detached
worker, a real lowdown-server (SQLite; PostgreSQL too with ``LOWDOWN_TEST_DATABASE_URL``)
behind a recording proxy, the real server-everything as the ``protocol`` target, and a
stand-in ``claude`` for ``agent`` directives.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from prowl.prowl_provider_hook import CHILD_ENV
from provider_support import (Everything, Growing, Recorder, Server, closed_port_url, hook,
                              stub_claude, wait_idle)

AGENT_SPEC = {
    "prompt": "Which tools does this MCP server offer? List their names.",
    # https on loopback (the server and hook here allow loopback); the stand-in claude
    # starts the bridge, which finds nothing listening and ends with its stdin.
    "mcp_server": {"url": "https://127.0.0.1:9/mcp"},
    "expect": {"contains": ["echo", "get-sum"]},
}
#: Set in the hook's environment; none may reach the CLI.
SECRETS = {"AWS_SECRET_ACCESS_KEY": "canary-aws", "SSH_AUTH_SOCK": "/tmp/canary-agent.sock",
           "GITHUB_TOKEN": "canary-gh", "OPENAI_API_KEY": "canary-openai", "NPM_TOKEN": "canary-npm"}


class Env:
    """One developer machine: its temp dir (the lock), config dir (the state file), PATH
    with a stand-in claude, and the hook's settings."""

    def __init__(self, tmp: Path, server: Server, recorder: Recorder) -> None:
        self.tmp = tmp / "tmp"
        self.tmp.mkdir()
        self.config = tmp / "config"
        self.bin = tmp / "bin"
        stub_claude(self.bin)
        self.stub_log = self.bin / "stub.json"
        self.key = server.provider()
        self.vars: Dict[str, str] = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(tmp / "home"),
            "TMPDIR": str(self.tmp),
            "XDG_CONFIG_HOME": str(self.config),
            "LOWDOWN_HOME": str(tmp / "lowdown"),
            "PROWL_API_URL": recorder.url,
            "PROWL_AGENT_KEY": self.key,
            "PROWL_PROVIDER_MODE": "1",
            "PROWL_PROVIDER_POLL_SECONDS": "0",
            "PROWL_PROVIDER_MIN_GAP_SECONDS": "0",
            "PROWL_UNSAFE_ALLOW_LOOPBACK": "1",
        }

    def run(self, session: str = "", **overrides: str) -> subprocess.CompletedProcess:
        (self.bin / "stub_mode").write_text(overrides.pop("STUB_MODE", "good"))
        env = {**self.vars, **overrides}
        env = {k: v for k, v in env.items() if v != ""}
        event = {"hook_event_name": "Stop", "stop_hook_active": False, **({"session_id": session} if session else {})}
        return subprocess.run([hook()], input=json.dumps(event).encode(), env=env, capture_output=True, timeout=30)

    def run_and_wait(self, session: str = "", **overrides: str) -> Dict:
        r = self.run(session, **overrides)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        wait_idle(self.config)
        return self.state()

    def state(self) -> Dict:
        return json.loads((self.config / "prowl" / "provider_state.json").read_text())


@pytest.fixture
def machine(tmp_path: Path, server: Server, recorder: Recorder) -> Env:
    return Env(tmp_path, server, recorder)


def test_without_provider_mode_the_hook_does_nothing(machine: Env, recorder: Recorder) -> None:
    r = machine.run(PROWL_PROVIDER_MODE="")
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert recorder.seen == []
    assert not (machine.config / "prowl" / "provider_state.json").exists()
    assert not (machine.tmp / "prowl-provider.lock").exists()
    assert not (machine.config / "prowl").exists()


def test_scout_records_what_it_would_claim_and_sends_nothing(machine: Env, server: Server, recorder: Recorder, everything: Everything) -> None:
    plain = server.directive({"remote_url": everything.url})
    critical = server.directive({"remote_url": everything.url}, critical=True, price=10)
    recorder.seen.clear()
    st = machine.run_and_wait()
    assert st["mode"] == "scout"
    assert st["would_claim"]["directive_id"] == critical, "critical directives first"
    assert st["would_claim"]["earn_credits"] == 7.0
    assert st["open"] == 2
    assert recorder.seen == [("GET", "/v1/provider/directives")], "scout only lists"
    for d in (plain, critical):
        assert server.status_of(d)["status"] == "open"
    text = (machine.config / "prowl" / "provider_state.json").read_text()
    assert machine.key not in text, "the agent key never reaches the state file"
    assert oct((machine.config / "prowl" / "provider_state.json").stat().st_mode & 0o777) == "0o600"


def test_live_runs_a_protocol_directive_against_server_everything(machine: Env, server: Server, recorder: Recorder, everything: Everything) -> None:
    d = server.directive({"remote_url": everything.url}, price=3)
    recorder.seen.clear()
    st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1")
    assert st.get("last_error") is None, st
    assert st["last_result"]["directive_id"] == d
    done = server.status_of(d)
    assert done["status"] == "done", done
    dims = done["submission"]["dimensions"]
    assert (dims["reachability"], dims["tool_discovery"], dims["tool_documentation"], dims["schema_quality"], dims["agent_guidance"]) == (10, 10, 10, 7, 10)
    assert done["submission"]["runner_id"].startswith("prowl-provider-hook/")
    # The hook sent what its probe observed, and the server's own probe saw the same.
    observed = done["submission"]["observed"]
    assert observed["reached_level"] == 2 and observed["tool_count"] > 0 and re.fullmatch(r"[0-9a-f]{64}", observed["schema_hash"]), observed
    assert st["last_result"]["verification"] == "probe"
    assert [m for m, _ in recorder.seen] == ["GET", "POST", "POST"]
    assert recorder.posts("/claim") and recorder.posts("/v1/provider/submit")
    status, e = server.call("GET", "/v1/provider/earnings", headers={"X-Agent-Key": machine.key})
    assert (status, e["total_credits"]) == (200, 2.1)


def test_thirty_invocations_in_a_burst_claim_once(machine: Env, server: Server, recorder: Recorder, everything: Everything) -> None:
    first = server.directive({"remote_url": everything.url})
    second = server.directive({"remote_url": everything.url})
    recorder.seen.clear()
    env = {k: v for k, v in {**machine.vars, "PROWL_PROVIDER_LIVE": "1", "PROWL_PROVIDER_MIN_GAP_SECONDS": ""}.items() if v}
    procs = [subprocess.Popen([hook()], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(30)]
    for p in procs:
        out, err = p.communicate(timeout=30)
        assert (p.returncode, out, err) == (0, b"", b"")
    wait_idle(machine.config)
    assert len(recorder.posts("/claim")) == 1, recorder.seen
    assert server.status_of(first)["status"] == "done"
    assert server.status_of(second)["status"] == "open"
    # Within the hour, later Stop events claim nothing more.
    machine.run_and_wait(PROWL_PROVIDER_LIVE="1", PROWL_PROVIDER_MIN_GAP_SECONDS="")
    assert len(recorder.posts("/claim")) == 1
    assert server.status_of(second)["status"] == "open"


def test_the_hourly_gap_is_per_session_under_the_machines_ceiling(machine: Env, server: Server, recorder: Recorder, everything: Everything) -> None:
    ds = [server.directive({"remote_url": everything.url}) for _ in range(3)]
    hourly = {"PROWL_PROVIDER_LIVE": "1", "PROWL_PROVIDER_MIN_GAP_SECONDS": "", "PROWL_PROVIDER_MACHINE_GAP_SECONDS": "0"}
    machine.run_and_wait("session-one-CANARY", **hourly)
    machine.run_and_wait("session-one-CANARY", **hourly)
    assert len(recorder.posts("/claim")) == 1, "one session claims once an hour"
    machine.run_and_wait("session-two", **hourly)
    assert len(recorder.posts("/claim")) == 2, "another session has its own hour"
    # With the machine's own gap (10 minutes by default) a third session waits.
    machine.run_and_wait("session-three", **{**hourly, "PROWL_PROVIDER_MACHINE_GAP_SECONDS": ""})
    assert len(recorder.posts("/claim")) == 2
    assert [server.status_of(d)["status"] for d in ds] == ["done", "done", "open"]
    assert "CANARY" not in (machine.config / "prowl" / "provider_state.json").read_text(), "sessions are kept as hashes"


def test_a_remote_that_trickles_its_headers_is_cut_off_and_released(machine: Env, server: Server) -> None:
    from test_provider_hook_file_e2e import HostileRemote

    remote = HostileRemote("trickle")
    try:
        d = server.directive({"remote_url": remote.url})
        st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1")
    finally:
        remote.close()
    # Each byte comes well within the read timeout; the request's own deadline ends it.
    assert st["last_error"] == f"{d}: timeout; released", st
    assert server.status_of(d)["status"] == "open"


def test_a_result_the_servers_probe_contradicts_is_refused_and_released(machine: Env, server: Server) -> None:
    growing = Growing()
    try:
        d = server.directive({"remote_url": growing.url})
        st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1")
    finally:
        growing.close()
    assert growing.initializes == 2, "the hook probed, then the server did"
    assert "contradicts_probe: tool_count (submitted 1, the server saw 2)" in st["last_error"], st
    assert st["last_error"].endswith("; released"), st
    after = server.status_of(d)
    assert (after["status"], after["lease"], after["submissions"]) == ("open", None, [])
    status, e = server.call("GET", "/v1/provider/earnings", headers={"X-Agent-Key": machine.key})
    assert (status, e["total_credits"]) == (200, 0)


def test_an_agent_directive_runs_through_claude_with_only_its_server(machine: Env, server: Server) -> None:
    d = server.directive(AGENT_SPEC, kind="agent", price=2)
    st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1", ANTHROPIC_API_KEY="sk-ant-test", **SECRETS)
    assert st.get("last_error") is None, st
    # One machine's answer counts only once a provider of another network agrees: the
    # result waits, the directive stays open for them, and the credit is held.
    assert (st["last_result"]["verification"], st["last_result"]["credited_credits"]) == ("pending", 0)
    done = server.status_of(d)
    assert (done["status"], done["lease"], done["submission"]) == ("open", None, None)
    [sub] = done["submissions"]
    assert sub["status"] == "pending"
    assert sub["dimensions"] == {"expectations": 10}
    assert sub["recorded_score"] == 100
    status, e = server.call("GET", "/v1/provider/earnings", headers={"X-Agent-Key": machine.key})
    assert (status, e["total_credits"], e["awaiting_agreement"]) == (200, 0, 1)
    ran = json.loads(machine.stub_log.read_text())
    assert ran["prompt"] == AGENT_SPEC["prompt"], "the prompt goes on stdin"
    argv: List[str] = ran["argv"]
    for flag in ("--print", "--strict-mcp-config", "--disable-slash-commands", "--no-session-persistence"):
        assert flag in argv
    assert argv[argv.index("--output-format") + 1] == "json"
    assert argv[argv.index("--setting-sources") + 1] == "", "none of the user's settings files"
    assert argv[argv.index("--tools") + 1] == "", "no built-in tools"
    assert argv[argv.index("--allowedTools") + 1] == "mcp__prowl_bench"
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert argv[argv.index("--max-budget-usd") + 1] == "0.25"
    # Claude's one MCP server is Lowdown's own bridge to the directive's URL.
    bridge = {"type": "stdio", "command": sys.executable, "env": {},
              "args": ["-m", "prowl.provider.bridge", "--unsafe-allow-loopback", "--", AGENT_SPEC["mcp_server"]["url"]]}
    assert ran["config"] == {"mcpServers": {"prowl_bench": bridge}}
    # Only what the CLI needs of the environment: no secrets, no agent key.
    assert set(ran["env"]) <= set(CHILD_ENV) | {"TMPDIR", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"}, ran["env_keys"]
    assert ran["env"]["ANTHROPIC_API_KEY"] == "sk-ant-test" and ran["env"]["HOME"] == machine.vars["HOME"]
    assert ran["env"]["TMPDIR"] == ran["cwd"]
    leaked = [v for v in [*SECRETS.values(), machine.key] if v in json.dumps(ran["env"])]
    assert leaked == []
    assert not Path(ran["cwd"]).exists(), "the run's directory is removed"
    assert ran["nice"] == min(19, os.nice(0) + 10), "idle-time work runs at nice 10, never beside the developer"
    # The answer itself never leaves the machine.
    assert "among others" not in json.dumps(done)


def test_an_answer_missing_a_string_is_submitted_as_failed(machine: Env, server: Server) -> None:
    d = server.directive(AGENT_SPEC, kind="agent")
    st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1", STUB_MODE="partial")
    assert st.get("last_error") is None, st
    [sub] = server.status_of(d)["submissions"]
    assert sub["dimensions"] == {"expectations": 5}
    assert [t["passed"] for t in sub["test_results"]] == [True, False]


@pytest.mark.parametrize("case", ["unreadable", "crash", "hang", "no_cli", "blocked_url"])
def test_agent_failures_release_the_directive_at_once(machine: Env, server: Server, recorder: Recorder, case: str) -> None:
    spec = dict(AGENT_SPEC)
    overrides = {"PROWL_PROVIDER_LIVE": "1", "STUB_MODE": case, "PROWL_PROVIDER_RUN_TIMEOUT_SECONDS": "2"}
    if case == "no_cli":
        # A CLI that is on PATH but cannot start (a broken install): listed as runnable,
        # it fails once claimed.
        (machine.bin / "claude").write_text("#!/nonexistent/interpreter\n")
    if case == "blocked_url":
        # https and accepted by this loopback-allowing server, refused by the hook without
        # the unsafe flag before the CLI starts.
        overrides["PROWL_UNSAFE_ALLOW_LOOPBACK"] = ""
    d = server.directive(spec, kind="agent")
    recorder.seen.clear()
    st = machine.run_and_wait(**overrides)
    assert d in st["last_error"] and "released" in st["last_error"], st
    after = server.status_of(d)
    assert (after["status"], after["lease"], after["submission"]) == ("open", None, None)
    assert recorder.posts("/claim") and recorder.posts("/release"), recorder.seen
    assert not recorder.posts("/v1/provider/submit")
    if case == "blocked_url":
        assert "blocked_url" in st["last_error"] and not machine.stub_log.exists(), st
    if case == "hang":
        pid = json.loads(machine.stub_log.read_text())["pid"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_remote_that_does_not_answer_is_released(machine: Env, server: Server, recorder: Recorder) -> None:
    d = server.directive({"remote_url": closed_port_url()})
    st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1")
    assert "conn_refused" in st["last_error"] and "released" in st["last_error"], st
    assert server.status_of(d)["status"] == "open"


def test_a_loopback_remote_is_refused_without_the_unsafe_flag(machine: Env, server: Server, recorder: Recorder, everything: Everything) -> None:
    d = server.directive({"remote_url": everything.url})
    st = machine.run_and_wait(PROWL_PROVIDER_LIVE="1", PROWL_UNSAFE_ALLOW_LOOPBACK="")
    assert "released" in st["last_error"], st
    assert server.status_of(d)["status"] == "open"
    assert not recorder.posts("/v1/provider/submit")


def test_register_makes_the_agent_a_provider_once(tmp_path: Path, server: Server) -> None:
    _, a = server.call("POST", "/v1/auth/agents/register",
                       {"name": "laptop", "model_provider": "anthropic", "model_id": "claude", "environment": "dev"})
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LOWDOWN_HOME": str(tmp_path / "l"),
           "PROWL_API_URL": server.url, "PROWL_AGENT_KEY": a["agent_key"]}
    first = subprocess.run([hook(), "register"], env=env, capture_output=True, timeout=30)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([hook(), "register"], env=env, capture_output=True, timeout=30)
    assert json.loads(first.stdout)["provider_id"] == json.loads(again.stdout)["provider_id"]
    assert json.loads(first.stdout)["agent_id"] == a["agent_id"]
    bad = subprocess.run([hook(), "register"], env={**env, "PROWL_AGENT_KEY": "ak_unknown"}, capture_output=True, timeout=30)
    assert bad.returncode == 1 and b"401" in bad.stderr


def test_the_readme_settings_block_is_the_hook_as_documented() -> None:
    readme = Path(__file__).resolve().parents[1] / "README.md"
    [block] = re.findall(r"^```jsonc\n(.*?)^```", readme.read_text(), flags=re.S | re.M)
    settings = json.loads(re.sub(r"\s//[^\n]*", "", block))
    [entry] = settings["hooks"]["Stop"]
    assert entry["hooks"] == [{"type": "command", "command": "prowl-provider-hook", "timeout": 5, "async": True}]
    assert Path(hook()).name == "prowl-provider-hook"
    assert (settings["env"]["PROWL_PROVIDER_MODE"], settings["env"]["PROWL_PROVIDER_LIVE"]) == ("1", "1")
