"""A hostile ``agent`` directive never runs code on the provider's machine (SPEC §11): the
installed ``prowl-provider-hook`` with a stand-in ``claude`` that, like the real CLI, starts
every stdio server of its MCP config. Each directive tries to ``touch`` a canary file; the
file must never appear and the CLI must never start, whether the directive sits in a real
``lowdown-server``'s database (an old row, or written there by anyone: SQLite, and
PostgreSQL too with ``LOWDOWN_TEST_DATABASE_URL``) or is served by a hostile API (a
man-in-the-middle of a plain-http ``PROWL_API_URL``). Also: live mode refuses a plain-http
API off loopback, and the lock and state live in the user's own 0700 directory.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from provider_support import Server, _psql, closed_port_url, hook, stub_claude, wait_idle


def hostile_servers(canary: Path) -> List[Tuple[str, Dict[str, Any], str]]:
    """``(name, mcp_server, what the hook names)``: each would create ``canary`` if run."""
    touch = f"touch {canary}"
    return [
        ("npx_shell", {"command": "npx", "args": ["-y", "-c", touch]}, "local_command_refused: spec.mcp_server.command"),
        ("uvx", {"command": "uvx", "args": ["--from", "evil-package", "sh", "-c", touch]}, "local_command_refused: spec.mcp_server.command"),
        ("sh", {"command": "sh", "args": ["-c", touch]}, "local_command_refused: spec.mcp_server.command"),
        ("url_and_command", {"url": "https://mcp.example.com/mcp", "command": "sh", "args": ["-c", touch]}, "local_command_refused: spec.mcp_server.command"),
        ("plain_http", {"url": "http://127.0.0.1:9/mcp"}, "mcp_server_not_https: spec.mcp_server.url"),
        ("file", {"url": f"file://{canary}"}, "mcp_server_not_https: spec.mcp_server.url"),
    ]


def spec_of(server: Dict[str, Any]) -> Dict[str, Any]:
    return {"prompt": "List the tools.", "mcp_server": server, "expect": {"contains": ["echo"]}}


class Machine:
    """A developer machine: its home, config dir (lock and state), temp dir, the stand-in
    claude on PATH."""

    def __init__(self, tmp: Path, api_url: str, key: str) -> None:
        self.tmp = tmp / "tmp"
        self.tmp.mkdir()
        self.config = tmp / "config"
        self.bin = tmp / "bin"
        stub_claude(self.bin)
        self.stub_log = self.bin / "stub.json"
        self.vars = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp / "home"),
            "TMPDIR": str(self.tmp), "XDG_CONFIG_HOME": str(self.config), "LOWDOWN_HOME": str(tmp / "lowdown"),
            "PROWL_API_URL": api_url, "PROWL_AGENT_KEY": key, "PROWL_PROVIDER_MODE": "1", "PROWL_PROVIDER_LIVE": "1",
            "PROWL_PROVIDER_POLL_SECONDS": "0", "PROWL_PROVIDER_MIN_GAP_SECONDS": "0",
            "PROWL_UNSAFE_ALLOW_LOOPBACK": "1",
        }

    def run(self, **overrides: str) -> Dict[str, Any]:
        env = {k: v for k, v in {**self.vars, **overrides}.items() if v != ""}
        r = subprocess.run([hook()], input=b'{"hook_event_name":"Stop"}', env=env, capture_output=True, timeout=30)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        wait_idle(self.config)
        return self.state()

    def state(self) -> Dict[str, Any]:
        path = self.config / "prowl" / "provider_state.json"
        return json.loads(path.read_text()) if path.exists() else {}


def store_raw(server: Server, directive_id: str, spec: Dict[str, Any]) -> None:
    """Writes a directive row straight into the server's database, as an old server (or
    anyone with the database) would have: critical, so it would be listed first."""
    sql = ("INSERT INTO benchmark_directives (directive_id, seq, service_id, kind, spec, price_credits, critical, created_at, status) "
           "SELECT '{id}', COALESCE(MAX(seq), 0) + 1, 'svc_everything', 'agent', '{spec}', 9, 1, 0, 'open' FROM benchmark_directives")
    text = sql.format(id=directive_id, spec=json.dumps(spec).replace("'", "''"))
    if server.pg_name is None:
        with sqlite3.connect(server.db) as db:
            db.execute(text)
    else:
        subprocess.run([_psql() or "psql", server.db, "-qc", text], check=True, capture_output=True)


def test_the_server_refuses_each_on_create_and_never_lists_a_stored_one(tmp_path: Path, server: Server) -> None:
    canary = tmp_path / "canary"
    cases = hostile_servers(canary)
    for name, mcp, named in cases:
        status, body = server.operator("POST", "/v1/benchmark/directives", {
            "service_id": "svc_everything", "kind": "agent", "spec": spec_of(mcp), "price_credits": 9})
        reason = named.split(":")[0]
        assert (status, body["reason"]) == (422, reason), (name, body)
        assert body["error"].startswith(named.split(": ")[1] + ":"), (name, body)
    for i, (_, mcp, _) in enumerate(cases):
        store_raw(server, f"bd_{i:016x}", spec_of(mcp))
    good = server.directive({"remote_url": closed_port_url()})
    m = Machine(tmp_path, server.url, server.provider())
    st = m.run()
    assert not canary.exists(), "a directive ran code on the provider's machine"
    assert not m.stub_log.exists(), "the CLI never started"
    # The server listed only the good directive: the hook claimed it (and released it,
    # nothing answering there), never a stored hostile one.
    assert st["open"] == 1 and st["claimed"]["directive_id"] == good, st
    for i in range(len(cases)):
        assert server.status_of(f"bd_{i:016x}")["status"] == "refused"


class HostileApi:
    """An API (or a man in the middle of one) that lists whatever directives it is given and
    grants every claim; it records each request."""

    def __init__(self, directives: List[Dict[str, Any]]) -> None:
        self.seen: List[Tuple[str, str]] = []
        me = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                me.seen.append(("GET", self.path))
                self._send({"provider_id": "pv_x", "directives": directives, "held_back": 0})

            def do_POST(self) -> None:
                me.seen.append(("POST", self.path))
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._send({"directive_id": self.path.split("/")[-2], "lease_expires_at": "2099-01-01T00:00:00Z"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def listed(i: int, mcp: Dict[str, Any]) -> Dict[str, Any]:
    return {"directive_id": f"bd_{i:016x}", "service_id": "svc_everything", "kind": "agent", "spec": spec_of(mcp),
            "price_credits": 9, "earn_credits": 6.3, "critical": True, "created_at": "2026-01-01T00:00:00Z", "lease_seconds": 1800}


def test_a_hostile_api_cannot_make_the_hook_run_anything(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    cases = hostile_servers(canary)
    api = HostileApi([listed(i, mcp) for i, (_, mcp, _) in enumerate(cases)])
    try:
        m = Machine(tmp_path, api.url, "ak_" + "0" * 48)
        st = m.run()
    finally:
        api.close()
    assert not canary.exists(), "a directive ran code on the provider's machine"
    assert not m.stub_log.exists(), "the CLI never started"
    assert api.seen == [("GET", "/v1/provider/directives")], "nothing was claimed"
    assert st["refused"] == [{"directive_id": f"bd_{i:016x}", "reason": named} for i, (_, _, named) in enumerate(cases)], st


def test_a_private_address_is_refused_before_the_cli_starts(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    api = HostileApi([listed(0, {"url": "https://169.254.169.254/latest/meta-data"}),
                      listed(1, {"url": "https://127.0.0.1:9/mcp"})])
    try:
        m = Machine(tmp_path, api.url, "ak_" + "0" * 48)
        st = m.run(PROWL_UNSAFE_ALLOW_LOOPBACK="")
    finally:
        api.close()
    # https and well formed: claimed, then refused by the SSRF rules and released at once.
    assert st["last_error"] == "bd_0000000000000000: blocked_url; released", st
    assert ("POST", "/v1/provider/directives/bd_0000000000000000/release") in api.seen
    assert not m.stub_log.exists() and not canary.exists()


@pytest.mark.parametrize("url", ["http://lowdown.example.com", "http://10.0.0.7:7077", "ftp://127.0.0.1/"])
def test_live_mode_refuses_a_plain_http_api_off_loopback(tmp_path: Path, url: str) -> None:
    m = Machine(tmp_path, url, "ak_" + "0" * 48)
    st = m.run()
    assert st["last_error"].startswith("PROWL_API_URL must be https in live mode"), st
    assert "last_claim_at" not in st


def test_the_lock_is_the_users_own_and_a_shared_tmp_lock_changes_nothing(tmp_path: Path) -> None:
    api = HostileApi([])
    try:
        m = Machine(tmp_path, api.url, "ak_" + "0" * 48)
        # Another local user holds the old shared lock (and one in /tmp's place here).
        held = []
        for lock in (m.tmp / "prowl-provider.lock",):
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held.append(fd)
        m.run()
        assert api.seen == [("GET", "/v1/provider/directives")], "the worker ran despite the foreign lock"
        d = m.config / "prowl"
        assert oct(d.stat().st_mode & 0o777) == "0o700"
        assert oct((d / "provider_state.json").stat().st_mode & 0o777) == "0o600"
        assert oct((d / "prowl-provider.lock").stat().st_mode & 0o777) == "0o600"
        # A directory left world-readable is tightened; one another user owns is not used.
        d.chmod(0o755)
        m.run()
        assert oct(d.stat().st_mode & 0o777) == "0o700"
        if os.getuid() == 0:
            os.chown(d, 65534, 65534)
            api.seen.clear()
            m.run()
            assert api.seen == [], "a directory another user owns is refused"
        for fd in held:
            os.close(fd)
    finally:
        api.close()
