"""The hook's in-process ``protocol`` run (SPEC §11, probe rules of §8): the core's probe
driven over real sockets against the real server-everything and against fixtures that
misbehave as broken servers do (a redirect, an SSE stream left open, silence), with the
Scanner's SSRF rules refusing before any byte is sent."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, List

import pytest

from prowl import prowl_provider_hook as hook
from prowl.provider.core import CORE
from provider_support import Everything

class Counting:
    """Accepts connections, counts them, never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.accepted:
            c.close()


@pytest.fixture
def counting() -> Iterator[Counting]:
    c = Counting()
    yield c
    c.close()


INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "fixture", "version": "1.0.0"}}


def fixture_server(mode: str, redirect_to: str = "") -> ThreadingHTTPServer:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if mode == "redirect":
                self.send_response(307)
                self.send_header("Location", redirect_to)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if "id" not in body:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            result = INIT if body["method"] == "initialize" else {"tools": [{"name": "t", "description": "A fixture tool that does one thing.", "inputSchema": {"type": "object"}}]}
            event = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()  # no length: the stream stays open after the answer
            self.wfile.write(f"event: message\ndata: {event}\n\n".encode())
            self.wfile.flush()
            time.sleep(30)

    s = ThreadingHTTPServer(("127.0.0.1", 0), H)
    s.daemon_threads = True
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s


def test_server_everything_is_probed_and_scored(everything: Everything) -> None:
    c = hook.run_protocol(everything.url, True, CORE)
    d = c["dimensions"]
    assert (d["reachability"], d["tool_discovery"], d["tool_documentation"], d["schema_quality"], d["agent_guidance"]) == (10, 10, 10, 7, 10)
    assert [t["test_case_id"] for t in c["test_results"]] == ["initialize", "tools_list", "tools_complete", "tool_names"]
    assert all(t["passed"] for t in c["test_results"])
    assert "Echoes back" not in json.dumps(c), "no tool text in the result"
    # What the submission carries for the server to check against its own probe.
    o = c["observed"]
    assert (o["reached_level"], len(o["schema_hash"])) == (2, 64) and o["tool_count"] > 0, o


def test_loopback_is_refused_without_the_flag_before_any_byte(counting: Counting) -> None:
    for url in (f"http://127.0.0.1:{counting.port}/mcp", f"https://127.0.0.1:{counting.port}/mcp", "https://10.0.0.7/mcp",
                "https://localhost/mcp", "https://user:pw@mcp.example.com/mcp"):
        with pytest.raises(hook.Blocked):
            hook.run_protocol(url, False, CORE)
    time.sleep(0.2)
    assert counting.accepted == []


def test_every_resolved_address_is_checked_and_the_checked_one_is_reached(counting: Counting, monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo
    table = {"mixed.vendor-fixture.com": ["93.184.215.14", "127.0.0.1"], "local.vendor-fixture.com": ["127.0.0.1"]}

    def fake(host: str, *args: Any, **kw: Any) -> Any:
        if host in table:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, 0)) for ip in table[host]]
        return real(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with pytest.raises(hook.Blocked):
        hook.run_protocol(f"https://mixed.vendor-fixture.com:{counting.port}/mcp", False, CORE)
    time.sleep(0.2)
    assert counting.accepted == [], "a name with one refused address is refused whole"
    # With loopback allowed, the name (unknown to real DNS) is reached at the address checked
    # (with the probe's own timeout: a shorter one fails on a loaded machine, not the probe).
    s = fixture_server("sse")
    try:
        c = hook.run_protocol(f"http://local.vendor-fixture.com:{s.server_address[1]}/mcp", True, CORE)
    finally:
        s.shutdown()
    assert c["dimensions"]["reachability"] == 10


def test_a_redirect_is_reported_not_followed(counting: Counting) -> None:
    s = fixture_server("redirect", f"http://127.0.0.1:{counting.port}/elsewhere")
    try:
        c = hook.run_protocol(f"http://127.0.0.1:{s.server_address[1]}/mcp", True, CORE)
    finally:
        s.shutdown()
    first = c["test_results"][0]
    assert (first["passed"], first["actual_status"]) == (False, 307)
    assert c["overall_score"] == 0
    time.sleep(0.2)
    assert counting.accepted == []


def test_reading_stops_at_the_answer_of_an_open_sse_stream() -> None:
    # The probe's own 10 s per request, shorter than the 30 s the fixture keeps each stream
    # open: a shorter timeout only makes a loaded machine fail, not a reader that waits.
    s = fixture_server("sse")
    try:
        c = hook.run_protocol(f"http://127.0.0.1:{s.server_address[1]}/mcp", True, CORE)
    finally:
        s.shutdown()
    # Had the reader waited for the stream to end, every request would have timed out.
    assert c["dimensions"]["reachability"] == 10
    assert c["dimensions"]["tool_discovery"] == 10


def test_silence_is_a_failed_fetch(counting: Counting, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook, "REQUEST_TIMEOUT_S", 0.5)
    with pytest.raises(hook.FetchFailed, match="timeout"):
        hook.run_protocol(f"http://127.0.0.1:{counting.port}/mcp", True, CORE)
