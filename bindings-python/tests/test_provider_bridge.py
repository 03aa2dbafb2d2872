"""The stdio bridge Claude is given for an ``agent`` directive (``python -m
prowl.provider.bridge``): MCP over stdio in, Streamable HTTP out, with the probe's client
rules. Run as a process against the real server-everything, and against fixtures that
redirect, sit on a private address, or answer too much."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List

import pytest

from prowl import prowl_provider_hook as hook
from prowl.provider.core import CORE
from provider_support import Everything
from test_provider_probe import Counting, fixture_server


@pytest.fixture
def counting() -> Iterator[Counting]:
    c = Counting()
    yield c
    c.close()


def relay(url: str, messages: List[Dict[str, Any]], loopback: bool = True) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "prowl.provider.bridge", *(["--unsafe-allow-loopback"] if loopback else []), "--", url]
    data = "".join(json.dumps(m) + "\n" for m in messages).encode()
    return subprocess.run(args, input=data, capture_output=True, timeout=60)


def answers(r: subprocess.CompletedProcess) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in r.stdout.splitlines()]


INIT = {"jsonrpc": "2.0", "id": "claude-0", "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2"}}}


def test_claude_reaches_server_everything_through_the_bridge(everything: Everything) -> None:
    r = relay(everything.url, [
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "via the bridge"}}},
    ])
    assert r.returncode == 0, r.stderr
    init, tools, call = answers(r)
    assert init["id"] == "claude-0" and init["result"]["serverInfo"]["name"], init
    assert tools["id"] == 1 and "echo" in [t["name"] for t in tools["result"]["tools"]]
    assert call["id"] == 2 and "via the bridge" in json.dumps(call["result"]), call


def test_a_redirect_is_an_error_and_never_followed(counting: Counting) -> None:
    s = fixture_server("redirect", f"http://127.0.0.1:{counting.port}/elsewhere")
    try:
        r = relay(f"http://127.0.0.1:{s.server_address[1]}/mcp", [INIT])
    finally:
        s.shutdown()
    [a] = answers(r)
    assert a["id"] == "claude-0" and "HTTP 307 (redirects are not followed)" in a["error"]["message"], a
    time.sleep(0.2)
    assert counting.accepted == [], "the redirect target was never contacted"


@pytest.mark.parametrize("url", ["https://10.0.0.7/mcp", "https://169.254.169.254/mcp", "https://[fd00::1]/mcp",
                                 "https://localhost/mcp", "http://mcp.example.com/mcp", "file:///etc/passwd"])
def test_a_refused_url_ends_the_bridge_before_any_byte(url: str) -> None:
    r = relay(url, [INIT])
    assert r.returncode == 2 and r.stdout == b"" and b"refused" in r.stderr, r


def test_loopback_needs_the_test_flag(counting: Counting) -> None:
    r = relay(f"http://127.0.0.1:{counting.port}/mcp", [INIT], loopback=False)
    assert r.returncode == 2 and b"blocked_url" in r.stderr, r
    time.sleep(0.2)
    assert counting.accepted == []


def test_every_resolved_address_is_checked_and_the_checked_one_is_pinned(monkeypatch: pytest.MonkeyPatch, everything: Everything) -> None:
    import socket

    real = socket.getaddrinfo
    answers_of = {"rebind.vendor-fixture.com": [["127.0.0.1"], ["10.0.0.7"]], "mixed.vendor-fixture.com": [["93.184.215.14", "10.0.0.7"]]}

    def fake(host: str, *args: Any, **kw: Any) -> Any:
        if host in answers_of:
            ips = answers_of[host].pop(0) if len(answers_of[host]) > 1 else answers_of[host][0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, 0)) for ip in ips]
        return real(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with pytest.raises(hook.Blocked):
        hook.BridgeRemote("https://mixed.vendor-fixture.com/mcp", False, CORE)
    # Resolved once (to loopback, allowed here); a later answer of 10.0.0.7 is never used.
    port = everything.url.split(":")[2].split("/")[0]
    remote = hook.BridgeRemote(f"http://rebind.vendor-fixture.com:{port}/mcp", True, CORE)
    out = io.BytesIO()
    hook.serve_bridge(remote, io.BytesIO((json.dumps(INIT) + "\n").encode()), out)
    assert json.loads(out.getvalue())["result"]["serverInfo"], out.getvalue()


def test_an_answer_over_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Big(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {"pad": "x" * 5000}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    s = ThreadingHTTPServer(("127.0.0.1", 0), Big)
    s.daemon_threads = True
    import threading

    threading.Thread(target=s.serve_forever, daemon=True).start()
    monkeypatch.setattr(hook, "BRIDGE_CAP", 1000)
    try:
        out = io.BytesIO()
        hook.serve_bridge(hook.BridgeRemote(f"http://127.0.0.1:{s.server_address[1]}/mcp", True, CORE),
                     io.BytesIO((json.dumps(INIT) + "\n").encode()), out)
    finally:
        s.shutdown()
    a = json.loads(out.getvalue())
    assert "too_large" in a["error"]["message"] and "pad" not in json.dumps(a), a
