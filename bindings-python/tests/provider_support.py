"""Real parts for the provider-hook tests: a lowdown-server with a catalog and an operator
token (SQLite, or PostgreSQL when ``LOWDOWN_TEST_DATABASE_URL`` is set), a recording proxy
in front of it, the real ``@modelcontextprotocol/server-everything`` over streamable HTTP,
a stand-in ``claude`` (the real CLI needs a paid model), and a stand-in Anthropic API for
the runs of the real CLI.
"""

from __future__ import annotations

import glob
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from servers import free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]


TOKEN = "operator-token-0123456789abcdef"
SERVICE_ID = "svc_everything"
CATALOG = """
[[service]]
slug = "everything"
service_id = "svc_everything"
upstream = "https://everything.vendor-fixture.com"
hosts = ["everything.vendor-fixture.com"]
sampling_rate = 0.0
"""


def _psql() -> Optional[str]:
    found = shutil.which("psql")
    if found:
        return found
    for p in sorted(glob.glob("/usr/lib/postgresql/*/bin/psql")):
        return p
    return None


def engines() -> List[str]:
    """SQLite always; PostgreSQL too when the test database is given."""
    return ["sqlite", "postgres"] if os.environ.get("LOWDOWN_TEST_DATABASE_URL") else ["sqlite"]


def _database(engine: str, home: str) -> Tuple[str, Optional[str]]:
    """The server's ``--db`` and, for PostgreSQL, the database to drop afterwards."""
    if engine == "sqlite":
        return str(Path(home) / "provider.db"), None
    admin = os.environ["LOWDOWN_TEST_DATABASE_URL"]
    name = "prowl_provider_" + os.urandom(6).hex()
    psql = _psql()
    assert psql, "LOWDOWN_TEST_DATABASE_URL is set but no psql was found"
    subprocess.run([psql, admin, "-qc", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return admin.rsplit("/", 1)[0] + "/" + name, name


class Server:
    """lowdown-server with the catalog above, ``LOWDOWN_ADMIN_TOKEN`` and loopback allowed
    (the protocol targets of these tests are on 127.0.0.1)."""

    def __init__(self, engine: str = "sqlite") -> None:
        self.home = tempfile.mkdtemp(prefix="prowl-provider-server-")
        Path(self.home, "services.toml").write_text(CATALOG)
        self.db, self.pg_name = _database(engine, self.home)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc, self.log = start_server(
            ["--listen", f"127.0.0.1:{self.port}", "--db", self.db,
             "--catalog", str(Path(self.home, "services.toml")), "serve", "--unsafe-allow-loopback"],
            self.home, self.port, dict(LOWDOWN_HOME=self.home, LOWDOWN_ADMIN_TOKEN=TOKEN),
        )

    def call(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        raw = r.read()
        conn.close()
        return r.status, json.loads(raw) if raw else None

    def operator(self, method: str, path: str, body: Any = None) -> Tuple[int, Any]:
        return self.call(method, path, body, {"Authorization": f"Bearer {TOKEN}"})

    def directive(self, spec: Dict[str, Any], kind: str = "protocol", price: int = 1, critical: bool = False) -> str:
        status, d = self.operator("POST", "/v1/benchmark/directives",
                                  {"service_id": SERVICE_ID, "kind": kind, "spec": spec, "price_credits": price, "critical": critical})
        assert status == 201, d
        return d["directive_id"]

    def status_of(self, directive_id: str) -> Dict[str, Any]:
        status, d = self.operator("GET", f"/v1/benchmark/directives/{directive_id}")
        assert status == 200, d
        return d

    def provider(self) -> str:
        """A new agent registered as a provider; its key."""
        status, a = self.call("POST", "/v1/auth/agents/register",
                              {"name": "dev-laptop", "model_provider": "anthropic", "model_id": "claude", "environment": "test"})
        assert status == 201, a
        status, p = self.call("POST", "/v1/provider/register", headers={"X-Agent-Key": a["agent_key"]})
        assert status == 201, p
        return a["agent_key"]

    def close(self) -> None:
        stop_server(self.proc, self.log)
        if self.pg_name:
            admin = os.environ["LOWDOWN_TEST_DATABASE_URL"]
            subprocess.run([_psql() or "psql", admin, "-qc", f"DROP DATABASE IF EXISTS {self.pg_name} WITH (FORCE)"], capture_output=True)
        shutil.rmtree(self.home, ignore_errors=True)


class Recorder:
    """A reverse proxy that records every request (``seen``: method and path; ``sent``: with
    headers and body) and every answer body, forwarding both unchanged: what crossed the
    wire, seen from outside."""

    def __init__(self, upstream: str) -> None:
        self.seen: List[Tuple[str, str]] = []
        self.sent: List[Tuple[str, str, Dict[str, str], bytes]] = []
        self.answers: List[bytes] = []
        target = urlsplit(upstream)
        rec = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                rec.seen.append((self.command, self.path))
                rec.sent.append((self.command, self.path, dict(self.headers.items()), body))
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                r = conn.getresponse()
                data = r.read()
                rec.answers.append(data)
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_DELETE = _forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def posts(self, suffix: str) -> List[str]:
        return [p for m, p in self.seen if m == "POST" and p.endswith(suffix)]

    def wire(self) -> bytes:
        """Every request as it was sent: method, path, headers and body."""
        return b"\n".join(m.encode() + b" " + p.encode() + b"\n" + json.dumps(h).encode() + b"\n" + b
                          for m, p, h, b in self.sent)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def everything_entry() -> Path:
    for d in ("node_modules", "npm/node_modules"):
        p = ROOT / d / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
        if p.exists():
            return p
    raise AssertionError("server-everything is not installed: run `npm ci` at the repository root")


class Everything:
    """The real server-everything in its streamable-HTTP mode on a free port.

    It is told a port picked free a moment before, which another socket can take in between;
    it prints its ready line even when its listen failed. So a start counts only once the
    port answers as server-everything does, and a lost race starts it again on another port
    (as the server tests' fixture does)."""

    def __init__(self) -> None:
        for _ in range(5):
            if self._start():
                self.url = f"http://127.0.0.1:{self.port}/mcp"
                return
        raise RuntimeError("server-everything printed its ready line five times but never listened")

    def _start(self) -> bool:
        self.port = free_port()
        self.proc = subprocess.Popen(["node", str(everything_entry()), "streamableHttp"],
                                     env=dict(os.environ, PORT=str(self.port)),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # It announces itself on stderr; a thread keeps draining so the pipe never fills.
        ready = threading.Event()

        def drain(stream: Any) -> None:
            for line in stream:
                if b"listening on port" in line:
                    ready.set()

        threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True).start()
        if not ready.wait(60):
            self.close()
            raise RuntimeError("server-everything did not start")
        # Its answer to a GET without a session, which only a listening server-everything gives.
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            conn.request("GET", "/mcp")
            r = conn.getresponse()
            listening = r.status == 400 and b"No valid session ID" in r.read()
            conn.close()
        except (OSError, http.client.HTTPException):
            listening = False
        if not listening:
            self.close()
        return listening

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Growing:
    """An MCP remote (streamable HTTP, JSON answers) that lists one more tool after each
    ``initialize``: two probes of it, a minute or a millisecond apart, never agree."""

    def __init__(self) -> None:
        self.initializes = 0
        me = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, body: Optional[Dict[str, Any]] = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Mcp-Session-Id", "sess-growing")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_DELETE(self) -> None:
                self._send(200)

            def do_POST(self) -> None:
                msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if "id" not in msg:
                    return self._send(202)
                if msg["method"] == "initialize":
                    me.initializes += 1
                    result: Dict[str, Any] = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                              "serverInfo": {"name": "growing", "version": "1.0.0"}}
                else:
                    result = {"tools": [{"name": f"tool_{i}", "description": "A fixture tool that grows in number.",
                                         "inputSchema": {"type": "object"}} for i in range(me.initializes)]}
                self._send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


STUB = r'''#!{python}
"""A stand-in for the claude CLI: records how it was run (stub.json beside it) and, as the
real CLI does, starts every stdio MCP server of its --mcp-config (then closes its stdin),
then behaves as the file stub_mode beside it says (the hook passes it no variable of ours)."""
import json, os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
log = os.path.join(here, "stub.json")
mode = open(os.path.join(here, "stub_mode")).read().strip() if os.path.exists(os.path.join(here, "stub_mode")) else "good"
argv = sys.argv[1:]
prompt = sys.stdin.read()
config = json.load(open(argv[argv.index("--mcp-config") + 1]))
with open(log, "w") as f:
    json.dump({{"argv": argv, "prompt": prompt, "config": config, "cwd": os.getcwd(), "pid": os.getpid(),
               "nice": os.nice(0), "env": dict(os.environ), "env_keys": sorted(os.environ)}}, f)
for server in config.get("mcpServers", {{}}).values():
    if "command" in server:
        try:
            p = subprocess.Popen([server["command"], *server.get("args", [])], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env={{**os.environ, **server.get("env", {{}})}})
            p.stdin.close()
            p.wait(60)
        except Exception:
            pass
if mode == "good":
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False,
                      "result": "The server offers echo and get-sum, among others."}}))
elif mode == "partial":
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": "Only echo."}}))
elif mode == "unreadable":
    print("I could not produce JSON today")
elif mode == "crash":
    sys.exit(3)
elif mode == "hang":
    time.sleep(3600)
'''


def stub_claude(bin_dir: Path) -> Path:
    """Writes the stand-in as ``bin_dir/claude``; it records its run in ``bin_dir/stub.json``
    and behaves as ``bin_dir/stub_mode`` says (``good`` when absent)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "claude"
    path.write_text(STUB.format(python=sys.executable))
    path.chmod(0o755)
    return path


def hook() -> str:
    """The installed ``prowl-provider-hook`` console script."""
    script = Path(sys.executable).with_name("prowl-provider-hook")
    assert script.exists(), f"console script missing: {script} (is prowl installed in this venv?)"
    return str(script)


def held(config: Path) -> bool:
    """Whether a worker holds ``prowl-provider.lock`` (in ``config``/prowl)."""
    import fcntl

    lock = config / "prowl" / "prowl-provider.lock"
    if not lock.exists():
        return False
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def wait_idle(config: Path, timeout: float = 120.0) -> None:
    """Waits until no worker holds ``prowl-provider.lock`` (in ``config``/prowl)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not held(config):
            return
        time.sleep(0.05)
    raise AssertionError("the provider worker never finished")


class FakeAnthropic:
    """A stand-in for the Anthropic Messages API (``ANTHROPIC_BASE_URL``), so the real
    ``claude`` CLI runs here without a model: every request is recorded, and each
    ``/v1/messages`` is answered with the content blocks ``reply(request)`` returns
    (streamed as server-sent events when the request asks)."""

    def __init__(self, reply: Any) -> None:
        self.requests: List[Tuple[str, str, Any]] = []
        me = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                me.requests.append(("GET", self.path, None))
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                me.requests.append(("POST", self.path, body))
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    return self._json(200, {"input_tokens": 10})
                blocks = reply(body)
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
                       "content": [], "stop_reason": None, "stop_sequence": None,
                       "usage": {"input_tokens": 10, "output_tokens": 1}}
                if not body.get("stream"):
                    return self._json(200, {**msg, "content": blocks, "stop_reason": stop})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()

                def event(name: str, data: Dict[str, Any]) -> None:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode())
                    self.wfile.flush()

                event("message_start", {"message": msg})
                for i, b in enumerate(blocks):
                    if b["type"] == "text":
                        event("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                        event("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": b["text"]}})
                    else:
                        event("content_block_start", {"index": i, "content_block": {**b, "input": {}}})
                        event("content_block_delta", {"index": i, "delta": {"type": "input_json_delta",
                                                                            "partial_json": json.dumps(b["input"])}})
                    event("content_block_stop", {"index": i})
                event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}})
                event("message_stop", {})
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def messages(self) -> List[Dict[str, Any]]:
        """The bodies of every Messages request."""
        return [b for m, p, b in self.requests if m == "POST" and p.startswith("/v1/messages") and "count_tokens" not in p]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"
