"""Real servers for the tests: the thing an agent calls, and a byte-capturing collector.

``Upstream`` is a threaded ``http.server`` with a few routes (plain, status, streamed,
redirect, slow, proxy). ``Collector`` is a raw-socket HTTP endpoint that keeps every byte it
receives (for the privacy canaries) and can be told to never answer.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import parse_qs, urlsplit

from prowl._contract import ANSWER_MAX_BYTES


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._send(201, b'{"created":true}')

    def do_GET(self) -> None:
        if self.path.startswith("http://"):  # absolute form: we are being used as a proxy
            self._send(200, b"via-proxy:" + urlsplit(self.path).netloc.encode())
            return
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        parts = url.path.strip("/").split("/")
        route = parts[0]
        if route == "status":
            self._send(int(parts[1]), b"status body")
        elif route == "redirect":
            self._send(302, b"", {"Location": q["to"]})
        elif route == "slow":
            time.sleep(float(q.get("delay", "0.2")))
            self._send(200, b"slow body")
        elif route == "stream":
            self._stream(int(q.get("chunks", "3")), float(q.get("delay", "0.05")), int(q.get("size", "1000")))
        elif route == "bytes":
            self._send(200, b"x" * int(q.get("n", "1000")))
        else:
            self._send(200, b"hello from upstream")

    def _stream(self, chunks: int, delay: float, size: int) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for _ in range(chunks):
            time.sleep(delay)
            self.wfile.write(b"%x\r\n%s\r\n" % (size, b"y" * size))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many concurrent async requests connect at once
    daemon_threads = True


class Upstream:
    """A real HTTP server on 127.0.0.1 standing in for the API an agent calls."""

    def __init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _VendorHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        vendor: "Vendor" = self.server.vendor  # type: ignore[attr-defined]
        body = self._body()
        with vendor.lock:
            vendor.requests.append({"method": self.command, "path": self.path, "headers": self.headers.items(), "body": body})
        path = urlsplit(self.path).path
        if path.endswith("/redirect"):
            prefix = "/" + path.strip("/").split("/")[0]
            self.send_response(302)
            self.send_header("Location", f"{vendor.url}{prefix}/v1/landed")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        reply = json.dumps({"path": self.path, "method": self.command}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = do_PUT = do_DELETE = _handle


class Vendor:
    """A vendor API on 127.0.0.1 that records every request exactly as it arrived (method,
    path with query, headers in order, body) and answers ``200 {"path", "method"}``;
    ``…/redirect`` answers 302 to ``/{first segment}/v1/landed`` on itself."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), _VendorHandler)
        self.server.vendor = self  # type: ignore[attr-defined]
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def received(self, path_prefix: str) -> List[Dict[str, Any]]:
        """The requests whose path starts with ``path_prefix``, headers as a lower-cased dict."""
        with self.lock:
            reqs = list(self.requests)
        return [dict(r, headers={k.lower(): v for k, v in r["headers"]}) for r in reqs if r["path"].startswith(path_prefix)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _RelayHandler(_VendorHandler):
    def _handle(self) -> None:
        relay: "Relay" = self.server.vendor  # type: ignore[attr-defined]
        body = self._body()
        with relay.lock:
            relay.requests.append({"method": self.command, "path": self.path, "headers": self.headers.items(), "body": body})
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "transfer-encoding", "content-length")}
        conn = http.client.HTTPConnection("127.0.0.1", relay.target_port, timeout=20)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            reply = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        finally:
            conn.close()

    do_GET = do_POST = do_PUT = do_DELETE = _handle


class Relay(Vendor):
    """A recording relay in front of a local server (the gateway): every request is recorded
    exactly as it arrived, as :class:`Vendor` records them, then forwarded to
    ``127.0.0.1:target_port`` and its answer passed back."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.requests = []
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), _RelayHandler)
        self.server.vendor = self  # type: ignore[attr-defined]
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Collector:
    """A raw-socket HTTP server recording every byte it receives.

    ``mode="ok"`` answers each request as the API does when it takes everything (``200
    {"ok":true,"accepted":N,...}``); ``"close"`` answers and then
    closes the connection silently (a stale keep-alive); ``"429"`` answers rate-limited with
    ``Retry-After: 30``; ``"404"`` answers as a mistyped API URL does; ``"page"`` answers ``200``
    with a page that is not the API's answer; ``"ask"`` answers a preflight ``ask`` whose
    reason is 2,000 characters with control characters in it; ``"huge"`` answers as ``"ok"`` padded past the
    contract's ``ANSWER_MAX_BYTES``; ``"hang"`` reads and never answers; ``"slow"`` answers ``201``
    only once ``release`` is set, noting in ``answered`` (monotonic times) when it did.
    """

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.raw = bytearray()
        self.requests: List[Dict[str, Any]] = []
        self._lock = threading.Condition()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        self._conns: List[socket.socket] = []
        self.answered: List[float] = []
        #: ``"slow"`` answers once this is set (the test decides when: no wall-clock race).
        self.release = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                with self._lock:
                    self.raw.extend(data)
                buf += data
                while True:
                    head_end = buf.find(b"\r\n\r\n")
                    if head_end < 0:
                        break
                    head = buf[:head_end].decode("latin-1").split("\r\n")
                    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in head[1:] if ":" in h)}
                    length = int(headers.get("content-length", "0"))
                    if len(buf) < head_end + 4 + length:
                        break
                    body = buf[head_end + 4 : head_end + 4 + length]
                    buf = buf[head_end + 4 + length :]
                    method, path = head[0].split(" ")[:2]
                    with self._lock:
                        self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
                        self._lock.notify_all()
                    if self.mode == "slow":
                        self.release.wait(30)
                        reply = b'{"ok":true,"accepted":0,"duplicates":0,"rejected":[]}'
                        conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
                        with self._lock:
                            self.answered.append(time.monotonic())
                    if self.mode in ("ok", "close", "huge"):
                        try:
                            doc = json.loads(body)
                            n = len(doc) if isinstance(doc, list) else 1
                        except ValueError:
                            n = 0
                        reply = b'{"ok":true,"accepted":%d,"duplicates":0,"rejected":[],"rate_limited":[]}' % n
                        if self.mode == "huge":  # the API's answer, padded past what a host reads
                            reply += b" " * ANSWER_MAX_BYTES
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
                        if self.mode == "close":  # drop the kept-alive connection without saying so
                            conn.close()
                            return
                    elif self.mode in ("404", "page"):
                        reply = b"<h1>Not Found</h1>" if self.mode == "404" else b"<h1>Welcome</h1>"
                        status = b"404 Not Found" if self.mode == "404" else b"200 OK"
                        conn.sendall(b"HTTP/1.1 %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (status, len(reply), reply))
                    elif self.mode == "ask":
                        reply = json.dumps({"target": "weather", "resolved_target": "mcp:io.x/weather", "decision": "ask",
                                            "reasons": ["a\u001b[31m\nb" + "x" * 2000, 7]}).encode()
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
                    elif self.mode == "429":
                        reply = b'{"error":"rate limited"}'
                        conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
        except OSError:
            return

    def items(self, path: str) -> List[Dict[str, Any]]:
        """Every JSON item POSTed to ``path`` (arrays flattened), in arrival order."""
        out: List[Dict[str, Any]] = []
        with self._lock:
            reqs = list(self.requests)
        for r in reqs:
            if r["path"] == path:
                doc = json.loads(r["body"])
                out.extend(doc if isinstance(doc, list) else [doc])
        return out

    def observations(self) -> List[Dict[str, Any]]:
        """Every observation received on ``/v1/telemetry/observe``."""
        return self.items("/v1/telemetry/observe")

    def interactions(self) -> List[Dict[str, Any]]:
        """Every interaction record received on ``/api/interactions``."""
        return self.items("/api/interactions")

    def wait_requests(self, n: int, timeout: float = 5.0) -> bool:
        """Wait until ``n`` requests arrived."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def raw_bytes(self) -> bytes:
        """Everything received so far, byte for byte."""
        with self._lock:
            return bytes(self.raw)

    def close(self) -> None:
        self._closed = True
        self._sock.close()
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_binary() -> Path:
    """The lowdown-server binary (`make test-prowl` builds it first)."""
    root = Path(__file__).resolve().parents[2]
    binary = Path(os.environ.get("CARGO_TARGET_DIR", root / "target")) / "debug" / "lowdown-server"
    assert binary.exists(), f"{binary} missing: run `cargo build -p lowdown-server` (make test-prowl does)"
    return binary


def start_server(args: Sequence[str], home: str, port: int, env: Dict[str, str]) -> Tuple["subprocess.Popen[bytes]", IO[bytes]]:
    """lowdown-server ``args`` with ``env`` added, its output in ``home``/server.log, once
    ``/healthz`` on ``port`` answers (30 s at most): the process and the open log."""
    log = open(Path(home) / "server.log", "wb")
    proc = subprocess.Popen([str(server_binary()), *args], env=dict(os.environ, **env), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"lowdown-server exited: {Path(home, 'server.log').read_text()}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            healthy = conn.getresponse().status == 200
            conn.close()
            if healthy:
                return proc, log
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("lowdown-server did not become healthy in 30 s")


def stop_server(proc: "subprocess.Popen[bytes]", log: IO[bytes]) -> None:
    """Ends a server :func:`start_server` started (SIGTERM, then SIGKILL after 5 s)."""
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def dead_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connect is refused)."""
    return f"http://127.0.0.1:{free_port()}"


def wait_for(cond: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    """``cond()`` once it is truthy (polled every 50 ms), or fails saying ``what`` never came."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
