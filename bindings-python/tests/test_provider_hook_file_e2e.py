"""prowl_provider_hook.py end to end: the file downloaded from a real lowdown-server
(``GET /hooks/prowl_provider_hook.py``), registered with the Prowl page's ``settings.json``
block exactly as printed (the placeholder path and ``ak_...`` replaced), run by the base
interpreter (no prowl, no site-packages) as Claude Code runs a ``Stop`` hook, against the
real server-everything as the MCP remote and hostile remotes and APIs.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from prowl import prowl_provider_hook as hook
from provider_support import Everything, Recorder, Server, held, wait_idle
from test_provider_hostile import HostileApi, hostile_servers, listed

SOURCE = Path(hook.__file__)
PLACEHOLDER = "/abs/path/to/prowl_provider_hook.py"
SETTINGS = Path(__file__).parent / "fixtures" / "claude_hook" / "settings_provider_hook.jsonc"
#: In the hook's environment; none may leave the machine.
SECRETS = {"AWS_SECRET_ACCESS_KEY": "canary-aws-secret", "GITHUB_TOKEN": "canary-gh-token"}
SESSION = "session-CANARY-0001"


def download(server: Server, into: Path) -> Path:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", "/hooks/prowl_provider_hook.py")
    r = conn.getresponse()
    body = r.read()
    conn.close()
    assert (r.status, r.getheader("Content-Type", "").split(";")[0]) == (200, "text/x-python")
    assert body == SOURCE.read_bytes(), "the server serves the file the wheel ships"
    path = into / "prowl_provider_hook.py"
    path.write_bytes(body)
    path.chmod(0o755)  # the page: chmod +x
    return path


def settings(path: Path, key: str) -> Dict[str, Any]:
    """The page's block as printed (it carries `//` comments), the placeholders filled in."""
    text = SETTINGS.read_text()
    assert text.count(PLACEHOLDER) == 1 and text.count('"ak_..."') == 1
    text = text.replace(PLACEHOLDER, str(path)).replace('"ak_..."', json.dumps(key))
    return json.loads(re.sub(r"\s//[^\n]*", "", text))  # type: ignore[no-any-return]


class Machine:
    """A developer machine: home, config dir (lock and state), the base interpreter on PATH
    as ``python3`` (no prowl there), and the page's settings."""

    def __init__(self, tmp: Path, server: Server, api_url: str, key: str) -> None:
        self.config = tmp / "config"
        self.path = download(server, tmp)
        self.settings = settings(self.path, key)
        self.key = key
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "python3").symlink_to(Path(sys.base_prefix) / "bin" / "python3")
        self.vars = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp / "home"), "XDG_CONFIG_HOME": str(self.config),
                     "PROWL_API_URL": api_url, "PROWL_UNSAFE_ALLOW_LOOPBACK": "1", "PYTHONNOUSERSITE": "1",
                     "PROWL_PROVIDER_POLL_SECONDS": "0", "PROWL_PROVIDER_MIN_GAP_SECONDS": "0", **SECRETS}

    def stop(self, live: bool, session: str = SESSION, wait: bool = True, **extra: str) -> Dict[str, Any]:
        """One Stop event, run as Claude Code runs the page's hook: the command in a shell,
        the event on stdin, the settings' ``env`` over the session's, within the timeout."""
        env = {**self.vars, **self.settings["env"], **extra}
        if not live:
            env.pop("PROWL_PROVIDER_LIVE")  # the page: scout until that flag is flipped
        env = {k: v for k, v in env.items() if v != ""}
        event = {"session_id": session, "transcript_path": "/tmp/x.jsonl", "hook_event_name": "Stop", "stop_hook_active": False}
        [entry] = self.settings["hooks"]["Stop"]
        [h] = entry["hooks"]
        assert (h["type"], h["async"]) == ("command", True)
        r = subprocess.run(h["command"], shell=True, input=json.dumps(event).encode(), env=env,
                           capture_output=True, timeout=h["timeout"])
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
        if wait:
            wait_idle(self.config, 300)
        return self.state()

    def state(self) -> Dict[str, Any]:
        p = self.config / "prowl" / "provider_state.json"
        return json.loads(p.read_text()) if p.exists() else {}


def tool_names(answers: List[bytes]) -> List[str]:
    """Every tool name a remote answered with (JSON or SSE)."""
    names: List[str] = []
    for a in answers:
        for line in a.decode("utf-8", "replace").splitlines():
            line = line[5:] if line.startswith("data:") else line
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                names += [t["name"] for t in (msg.get("result") or {}).get("tools") or [] if isinstance(t, dict)]
    return names


def test_scout_then_live_from_the_pages_settings_against_server_everything(
        tmp_path: Path, server: Server, everything: Everything) -> None:
    remote = Recorder(everything.url.rsplit("/", 1)[0])
    api = Recorder(server.url)
    try:
        d = server.directive({"remote_url": remote.url + "/mcp"}, price=3, critical=True)
        m = Machine(tmp_path, server, api.url, server.provider())
        st = m.stop(live=False)
        assert st["mode"] == "scout" and st["would_claim"]["directive_id"] == d, st
        assert api.seen == [("GET", "/v1/provider/directives")], "scout only lists"
        assert remote.seen == [] and server.status_of(d)["status"] == "open"

        st = m.stop(live=True)
        assert st.get("last_error") is None, st
        assert (st["last_result"]["directive_id"], st["last_result"]["verification"]) == (d, "probe")
        done = server.status_of(d)
        assert done["status"] == "done", done
        sub = done["submission"]
        assert sub["runner_id"] == hook.RUNNER
        dims = sub["dimensions"]
        assert (dims["reachability"], dims["tool_discovery"], dims["tool_documentation"], dims["schema_quality"],
                dims["agent_guidance"]) == (10, 10, 10, 7, 10)
        # The server probed the remote itself and saw what the hook submitted.
        assert sub["observed"]["reached_level"] == 2 and sub["observed"]["tool_count"] > 0
        assert re.fullmatch(r"[0-9a-f]{64}", sub["observed"]["schema_hash"])
        status, e = server.call("GET", "/v1/provider/earnings", headers={"X-Agent-Key": m.key})
        assert (status, e["total_credits"]) == (200, 2.1), "credited 70 % of the price"
        assert api.seen[1:] == [
            ("GET", "/v1/provider/directives"), ("POST", f"/v1/provider/directives/{d}/claim"), ("POST", "/v1/provider/submit")]
        # The probe, as the Scanner's: initialize, initialized, tools/list, the session's DELETE.
        hook_probe = [json.loads(b).get("method") if b else m_ for m_, _, _, b in remote.sent[:4]]
        assert hook_probe == ["initialize", "notifications/initialized", "tools/list", "DELETE"], remote.seen
        assert all(h.get("User-Agent") == hook.RUNNER for _, _, h, _ in remote.sent[:4])
    finally:
        remote.close()
        api.close()
    # What stays on the machine, and what never leaves it.
    names = [n for n in tool_names(remote.answers) if len(n) >= 4]
    assert names, "server-everything listed its tools"
    to_api, to_remote = api.wire(), remote.wire()
    for canary in [*SECRETS.values(), SESSION, *names]:
        assert canary.encode() not in to_api, canary
    for canary in [*SECRETS.values(), SESSION, m.key]:
        assert canary.encode() not in to_remote, canary
    text = (m.config / "prowl" / "provider_state.json").read_text()
    assert m.key not in text and "CANARY" not in text, "no key, no session id in the state"
    assert oct((m.config / "prowl").stat().st_mode & 0o777) == "0o700"
    assert oct((m.config / "prowl" / "provider_state.json").stat().st_mode & 0o777) == "0o600"


def test_the_page_blocks_settings_as_printed() -> None:
    """The fixture is the Prowl page's block, comments and all: one async Stop hook with a
    5 s timeout, scout and live both switched on in its env."""
    s = json.loads(re.sub(r"\s//[^\n]*", "", SETTINGS.read_text()))
    assert s["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": PLACEHOLDER, "timeout": 5, "async": True}]}]
    assert s["env"] == {"PROWL_AGENT_KEY": "ak_...", "PROWL_PROVIDER_MODE": "1", "PROWL_PROVIDER_LIVE": "1"}


def test_hostile_directives_are_refused_by_name_and_nothing_runs(tmp_path: Path, server: Server) -> None:
    canary = tmp_path / "canary"
    cases = hostile_servers(canary)
    bad_protocol = [
        {"directive_id": "bd_p0", "service_id": "svc_everything", "kind": "protocol", "price_credits": 1, "critical": True,
         "spec": {"remote_url": "https://mcp.example.com/mcp", "command": "sh", "args": ["-c", f"touch {canary}"]}},
        {"directive_id": "bd_p1", "service_id": "svc_everything", "kind": "protocol", "price_credits": 1, "critical": True,
         "spec": {"remote_url": f"https://mcp.example.com/ ; touch {canary}"}},
    ]
    api = HostileApi([listed(i, mcp) for i, (_, mcp, _) in enumerate(cases)] + bad_protocol)
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        st = m.stop(live=True)
    finally:
        api.close()
    assert not canary.exists(), "a directive ran code on the provider's machine"
    assert api.seen == [("GET", "/v1/provider/directives")], "nothing was claimed"
    named = [{"directive_id": f"bd_{i:016x}", "reason": why} for i, (_, _, why) in enumerate(cases)]
    assert st["refused"] == named + [{"directive_id": "bd_p0", "reason": "invalid: spec.args"},
                                     {"directive_id": "bd_p1", "reason": "invalid: spec.remote_url"}], st


def test_an_agent_directive_is_not_claimed_without_a_claude_cli(tmp_path: Path, server: Server) -> None:
    api = HostileApi([listed(0, {"url": "https://mcp.example.com/mcp"})])
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        scout = m.stop(live=False, PROWL_CLAUDE_CMD="no-such-claude-here")
        live = m.stop(live=True, PROWL_CLAUDE_CMD="no-such-claude-here")
    finally:
        api.close()
    assert scout["would_claim"] is None and scout["refused"] == []
    assert "claimed" not in live and api.seen == [("GET", "/v1/provider/directives")] * 2


class HostileRemote:
    """An MCP remote that misbehaves as told: ``redirect`` (to ``target``), ``huge`` (an
    initialize answer that never ends: 64 MiB against a 1 MiB cap), ``hang`` (no answer),
    ``trickle`` (an answer's headers a byte at a time, each well within a read timeout)."""

    def __init__(self, how: str, target: str = "") -> None:
        self.seen: List[str] = []
        self.sent = 0
        me = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                me.seen.append(self.command)
                if how == "redirect":
                    self.send_response(307)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if how == "hang":
                    time.sleep(30)  # not even the status line
                    return
                if how == "trickle":  # a status line, then a header a byte every 0.2 s
                    try:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                        for _ in range(300):
                            self.wfile.write(b"x")
                            self.wfile.flush()
                            time.sleep(0.2)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                chunk = b'{"jsonrpc":"2.0","id":1,"result":{"pad":"' + b"x" * (1 << 16)
                try:
                    for _ in range(64 * 16):  # up to 64 MiB
                        self.wfile.write(chunk)
                        me.sent += len(chunk)
                except OSError:
                    pass

            do_DELETE = do_POST

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def protocol_listing(url: str) -> Dict[str, Any]:
    return {"directive_id": "bd_remote", "service_id": "svc_everything", "kind": "protocol", "price_credits": 1,
            "critical": False, "earn_credits": 0.7, "spec": {"remote_url": url}}


def test_a_hanging_remote_is_cut_off_and_released_while_claude_never_waits(tmp_path: Path, server: Server) -> None:
    remote = HostileRemote("hang")
    api = HostileApi([protocol_listing(remote.url)])
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        m.stop(live=True, wait=False)
        # The hook has returned; the detached worker still holds the lock, probing.
        assert held(m.config)
        wait_idle(m.config, 60)
        st = m.state()
    finally:
        remote.close()
        api.close()
    assert st["last_error"] == "bd_remote: timeout; released", st
    assert ("POST", "/v1/provider/directives/bd_remote/release") in api.seen
    assert not any(p.endswith("/submit") for _, p in api.seen)


def test_a_remote_that_trickles_is_cut_off_at_the_requests_deadline(tmp_path: Path, server: Server) -> None:
    remote = HostileRemote("trickle")
    api = HostileApi([protocol_listing(remote.url)])
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        st = m.stop(live=True)
    finally:
        remote.close()
        api.close()
    assert st["last_error"] == "bd_remote: timeout; released", st
    assert not any(p.endswith("/submit") for _, p in api.seen)


def test_register_makes_the_agent_a_provider_once(tmp_path: Path, server: Server) -> None:
    _, a = server.call("POST", "/v1/auth/agents/register",
                       {"name": "laptop", "model_provider": "anthropic", "model_id": "claude", "environment": "dev"})
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PROWL_API_URL": server.url, "PROWL_AGENT_KEY": a["agent_key"]}
    run = lambda e: subprocess.run([sys.executable, "-I", "-S", str(SOURCE), "register"], env=e,  # noqa: E731
                                   capture_output=True, timeout=30)
    first, again = run(env), run(env)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["provider_id"] == json.loads(again.stdout)["provider_id"]
    assert json.loads(first.stdout)["agent_id"] == a["agent_id"]
    bad = run({**env, "PROWL_AGENT_KEY": "ak_unknown"})
    assert bad.returncode == 1 and b"401" in bad.stderr
    assert run({k: v for k, v in env.items() if k != "PROWL_AGENT_KEY"}).returncode == 2


def _pki(tmp: Path, san: str) -> Tuple[Path, Path, Path]:
    """A CA, and a server certificate it signs for ``san``: ``(ca.pem, cert, key)``."""
    def ossl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    ossl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=prowl test CA")
    ossl("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=mcp")
    (tmp / "ext").write_text(f"subjectAltName={san}\n")
    ossl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "srv.pem", "-days", "2", "-extfile", "ext")
    return tmp / "ca.pem", tmp / "srv.pem", tmp / "srv.key"


class TlsRemote:
    """A small MCP remote over https (JSON answers) with the given certificate."""

    def __init__(self, cert: Path, key: str) -> None:
        import ssl

        self.methods: List[str] = []
        me = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                me.methods.append(msg["method"])
                if "id" not in msg:
                    return self._send(202)
                result = ({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "tls", "version": "1"}}
                          if msg["method"] == "initialize" else
                          {"tools": [{"name": "t", "description": "A tool served over verified TLS only.", "inputSchema": {"type": "object"}}]})
                self._send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(cert), key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("san,trusted,verified", [
    ("IP:127.0.0.1", True, True),
    ("DNS:mcp.other.example", True, False),  # a good certificate for another name
    ("IP:127.0.0.1", False, False),  # a certificate of a CA the machine does not trust
], ids=["verified", "another_name", "untrusted_ca"])
def test_tls_is_verified_against_the_urls_host(tmp_path: Path, server: Server, san: str, trusted: bool, verified: bool) -> None:
    pki = tmp_path / "pki"
    pki.mkdir()
    ca, cert, key = _pki(pki, san)
    remote = TlsRemote(cert, str(key))
    api = HostileApi([protocol_listing(remote.url)])
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        st = m.stop(live=True, **({"SSL_CERT_FILE": str(ca)} if trusted else {}))
    finally:
        remote.close()
        api.close()
    if verified:
        assert st.get("last_error") is None and remote.methods == ["initialize", "notifications/initialized", "tools/list"], (st, remote.methods)
        assert any(p.endswith("/submit") for _, p in api.seen)
    else:
        assert st["last_error"] == "bd_remote: tls; released", st
        assert remote.methods == [], "no request reached a server whose certificate failed"
        assert not any(p.endswith("/submit") for _, p in api.seen)


def test_a_huge_answer_is_read_only_to_its_cap(tmp_path: Path, server: Server) -> None:
    remote = HostileRemote("huge")
    api = HostileApi([protocol_listing(remote.url)])
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        st = m.stop(live=True)
    finally:
        remote.close()
        api.close()
    # Past the cap the answer is no answer: level 0, invalid_response, submitted as such
    # (this stand-in API takes anything); the remote never got to send its 64 MiB.
    assert st.get("last_error") is None, st
    assert remote.sent < 32 << 20, remote.sent
    assert any(p.endswith("/submit") for _, p in api.seen)


def test_a_redirect_is_not_followed(tmp_path: Path, server: Server, everything: Everything) -> None:
    inner = Recorder(everything.url.rsplit("/", 1)[0])
    remote = HostileRemote("redirect", inner.url + "/mcp")
    try:
        d = server.directive({"remote_url": remote.url})
        m = Machine(tmp_path, server, server.url, server.provider())
        st = m.stop(live=True)
    finally:
        remote.close()
        inner.close()
    assert inner.seen == [], "the redirect's target never heard from the hook (or the server)"
    # A 307 to initialize: reached by HTTP, not by an agent; the server saw the same.
    assert st.get("last_error") is None, st
    sub = server.status_of(d)["submission"]
    assert sub["observed"] == {"reached_level": 0, "tool_count": None, "schema_hash": None}
    assert sub["test_results"][0]["actual_status"] == 307


@pytest.mark.parametrize("url", ["https://169.254.169.254/latest/meta-data", "https://10.0.0.1/mcp",
                                 "https://localhost:9/mcp", "https://user:pw@mcp.example.com/mcp"])
def test_a_remote_the_ssrf_rules_refuse_is_never_contacted_and_released(tmp_path: Path, server: Server, url: str) -> None:
    api = HostileApi([protocol_listing(url)])
    try:
        m = Machine(tmp_path, server, api.url, "ak_" + "0" * 48)
        st = m.stop(live=True, PROWL_UNSAFE_ALLOW_LOOPBACK="")
    finally:
        api.close()
    assert re.fullmatch(r"bd_remote: blocked_url: (host|userinfo); released", st["last_error"]), st
    assert not any(p.endswith("/submit") for _, p in api.seen)


def test_every_resolved_address_is_checked() -> None:
    # localhost resolves (through /etc/hosts) to loopback only: refused without the unsafe flag.
    with pytest.raises(hook.Blocked):
        hook.checked_addresses("localhost", 443, False)
    assert hook.checked_addresses("127.0.0.1", 443, True) == ["127.0.0.1"]


def test_live_mode_refuses_a_plain_http_api_off_loopback(tmp_path: Path, server: Server) -> None:
    m = Machine(tmp_path, server, "http://lowdown.example.com", "ak_" + "0" * 48)
    st = m.stop(live=True)
    assert st["last_error"].startswith("PROWL_API_URL must be https in live mode"), st


def test_bad_events_and_an_unusable_state_exit_0_silently(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c"),
           "PROWL_PROVIDER_MODE": "1", "PROWL_PROVIDER_POLL_SECONDS": "3600", "PROWL_API_URL": "http://127.0.0.1:9"}
    (tmp_path / "c" / "prowl").mkdir(parents=True)
    (tmp_path / "c" / "prowl" / "provider_state.json").write_text(json.dumps({"last_poll_at": int(time.time() * 1000)}))
    for stdin in (b"", b"{not json", b"[]", b'{"session_id": 7}', b"x" * (1 << 20)):
        r = subprocess.run([sys.executable, "-I", "-S", str(SOURCE)], input=stdin, env=env, capture_output=True, timeout=10)
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    # Polled a moment ago: nothing started, nothing written.
    assert not (tmp_path / "c" / "prowl" / "prowl-provider.lock").exists()


def test_thirty_stop_events_in_a_burst_claim_once(tmp_path: Path, server: Server, everything: Everything) -> None:
    api = Recorder(server.url)
    try:
        first = server.directive({"remote_url": everything.url})
        second = server.directive({"remote_url": everything.url})
        m = Machine(tmp_path, server, api.url, server.provider())
        env = {k: v for k, v in {**m.vars, **m.settings["env"], "PROWL_PROVIDER_MIN_GAP_SECONDS": ""}.items() if v}
        command = m.settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        event = json.dumps({"session_id": SESSION, "hook_event_name": "Stop"}).encode()
        procs = [subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env) for _ in range(30)]
        for p in procs:
            out, err = p.communicate(event, timeout=30)
            assert (p.returncode, out, err) == (0, b"", b"")
        wait_idle(m.config, 300)
        claims = [p for mth, p in api.seen if mth == "POST" and p.endswith("/claim")]
        assert len(claims) == 1, api.seen
        assert [server.status_of(d)["status"] for d in (first, second)] == ["done", "open"]
        # Within the hour, later Stop events of that session claim nothing more.
        m.stop(live=True, PROWL_PROVIDER_MIN_GAP_SECONDS="")
        assert len([p for mth, p in api.seen if mth == "POST" and p.endswith("/claim")]) == 1
    finally:
        api.close()


def test_the_hourly_gap_is_per_session_under_the_machines_ceiling(tmp_path: Path, server: Server, everything: Everything) -> None:
    api = Recorder(server.url)
    try:
        ds = [server.directive({"remote_url": everything.url}) for _ in range(3)]
        m = Machine(tmp_path, server, api.url, server.provider())
        hourly = {"PROWL_PROVIDER_MIN_GAP_SECONDS": "", "PROWL_PROVIDER_MACHINE_GAP_SECONDS": "0"}

        def claims() -> int:
            return len([p for mth, p in api.seen if mth == "POST" and p.endswith("/claim")])

        m.stop(live=True, session="session-one-CANARY", **hourly)
        m.stop(live=True, session="session-one-CANARY", **hourly)
        assert claims() == 1, "one session claims once an hour"
        m.stop(live=True, session="session-two", **hourly)
        assert claims() == 2, "another session has its own hour"
        # With the machine's own gap (10 minutes by default) a third session waits.
        m.stop(live=True, session="session-three", **{**hourly, "PROWL_PROVIDER_MACHINE_GAP_SECONDS": ""})
        assert claims() == 2
        assert [server.status_of(d)["status"] for d in ds] == ["done", "done", "open"]
        assert "CANARY" not in (m.config / "prowl" / "provider_state.json").read_text(), "sessions are kept as hashes"
    finally:
        api.close()
