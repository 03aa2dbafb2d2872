"""``prowl-provider daemon`` end to end (SPEC §11): the installed console script against a
real lowdown-server (SQLite; PostgreSQL too with ``LOWDOWN_TEST_DATABASE_URL``), the real
server-everything for ``protocol`` directives and the stand-in ``claude`` for ``agent``
ones; stopped with SIGTERM as systemd stops it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from provider_support import Everything, Recorder, Server, stub_claude

AGENT_SPEC = {
    "prompt": "Which tools does this MCP server offer? List their names.",
    "mcp_server": {"url": "https://127.0.0.1:9/mcp"},
    "expect": {"contains": ["echo", "get-sum"]},
}


def _script() -> str:
    path = Path(sys.executable).with_name("prowl-provider")
    assert path.exists(), f"console script missing: {path} (is prowl installed in this venv?)"
    return str(path)


class Daemon:
    """One service machine: its config dir, a stand-in claude on PATH, and the daemon."""

    def __init__(self, tmp: Path, server: Server, recorder: Recorder, **env: str) -> None:
        self.config = tmp / "config"
        self.bin = tmp / "bin"
        stub_claude(self.bin)
        (self.bin / "stub_mode").write_text(env.pop("STUB_MODE", "good"))
        self.key = server.provider()
        self.vars = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(tmp / "home"),
            "XDG_CONFIG_HOME": str(self.config),
            "LOWDOWN_HOME": str(tmp / "lowdown"),
            "PROWL_API_URL": recorder.url,
            "PROWL_AGENT_KEY": self.key,
            "PROWL_PROVIDER_POLL_SECONDS": "0.1",
            "PROWL_PROVIDER_MIN_GAP_SECONDS": "0",
            "PROWL_UNSAFE_ALLOW_LOOPBACK": "1",
            **env,
        }
        self.err = tmp / "daemon.err"
        self.proc: "subprocess.Popen[bytes] | None" = None

    def start(self) -> "Daemon":
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen([_script(), "daemon"], env=self.vars, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=err)
        return self

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30)

    def state(self) -> Dict[str, Any]:
        try:
            return json.loads((self.config / "prowl" / "provider_state.json").read_text())
        except (OSError, ValueError):
            return {}

    def log(self) -> str:
        return self.err.read_text()


def _until(cond: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def test_a_live_daemon_runs_every_open_directive_then_stops_on_sigterm(
    tmp_path: Path, server: Server, recorder: Recorder, everything: Everything
) -> None:
    first = server.directive({"remote_url": everything.url})
    second = server.directive({"remote_url": everything.url})
    d = Daemon(tmp_path, server, recorder, PROWL_PROVIDER_LIVE="1").start()
    try:
        _until(lambda: all(server.status_of(x)["status"] == "done" for x in (first, second)), "both claimed and done")
        _until(lambda: d.state().get("last_result", {}).get("directive_id") in (first, second), "a result in the state")
    finally:
        status = d.stop()
    assert status == 0
    assert len(recorder.posts("/v1/provider/submit")) == 2
    log = d.log()
    assert "started (live" in log and log.rstrip().endswith("prowl-provider: stopped"), log
    assert "submitted" in log
    assert d.key not in log, "the key is never logged"


def test_sigterm_during_a_directive_ends_the_run_and_releases_it(
    tmp_path: Path, server: Server, recorder: Recorder
) -> None:
    directive = server.directive(AGENT_SPEC, kind="agent")
    d = Daemon(tmp_path, server, recorder, PROWL_PROVIDER_LIVE="1", STUB_MODE="hang").start()
    stub_log = d.bin / "stub.json"
    try:
        _until(stub_log.exists, "the claude CLI running the directive")
        _until(lambda: server.status_of(directive)["status"] == "claimed", "the lease")
    finally:
        status = d.stop()
    assert status == 0
    pid = json.loads(stub_log.read_text())["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert server.status_of(directive)["status"] == "open", "released, back in the queue"
    assert d.state()["last_error"] == f"{directive}: stopped; released"
    assert recorder.posts("/v1/provider/submit") == []


def test_a_scout_daemon_only_lists(tmp_path: Path, server: Server, recorder: Recorder, everything: Everything) -> None:
    directive = server.directive({"remote_url": everything.url})
    d = Daemon(tmp_path, server, recorder).start()
    try:
        _until(lambda: (d.state().get("would_claim") or {}).get("directive_id") == directive, "what it would claim")
        _until(lambda: len(recorder.seen) >= 2, "a second pass")
    finally:
        assert d.stop() == 0
    assert set(recorder.seen) == {("GET", "/v1/provider/directives")}
    assert server.status_of(directive)["status"] == "open"
    assert "would claim" in d.log()


def test_it_waits_while_a_hook_holds_the_single_flight_lock(
    tmp_path: Path, server: Server, recorder: Recorder, everything: Everything
) -> None:
    directive = server.directive({"remote_url": everything.url})
    d = Daemon(tmp_path, server, recorder, PROWL_PROVIDER_LIVE="1")
    lock_dir = d.config / "prowl"
    lock_dir.mkdir(parents=True, mode=0o700)
    fd = os.open(lock_dir / "prowl-provider.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    d.start()
    try:
        _until(lambda: d.log().count("another run holds the lock") >= 2, "waiting passes")
        assert recorder.seen == [] and server.status_of(directive)["status"] == "open"
        os.close(fd)
        _until(lambda: server.status_of(directive)["status"] != "open", "the pass after the lock is free")
    finally:
        assert d.stop() == 0


def test_without_an_agent_key_it_says_so_and_exits_2(tmp_path: Path, server: Server, recorder: Recorder) -> None:
    d = Daemon(tmp_path, server, recorder)
    del d.vars["PROWL_AGENT_KEY"]
    d.start()
    assert d.proc is not None and d.proc.wait(timeout=30) == 2
    assert "PROWL_AGENT_KEY is not set" in d.log()
    assert recorder.seen == []
