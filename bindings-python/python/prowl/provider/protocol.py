"""A ``protocol`` directive, run in-process (SPEC §11): the Scanner's probe of an MCP remote
(the core's :class:`prowl._native.Probe` decides every request; this module moves bytes)
and its conformance score.

The Scanner's SSRF rules (SPEC §8) apply, from the core: https only, no userinfo, a public
host (:func:`prowl._native.probe_url_host`); the name is resolved here and *every* address
is checked (:func:`prowl._native.check_probe_address`) before one is connected to, and the
connection goes to that checked address (TLS still verifies the name), so a name that
re-resolves elsewhere cannot move the probe. No redirect is followed (``http.client``
follows none) and no proxy is used. ``PROWL_UNSAFE_ALLOW_LOOPBACK=1`` admits http and
loopback addresses, for tests only.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import signal
import socket
import ssl
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union
from urllib.parse import urlsplit

from .. import _native

#: Seconds one probe request may take, answer included (the Scanner's 10 s).
REQUEST_TIMEOUT_S = 10.0
#: Transport failures on ``initialize``: nothing was measured, so the run is not submitted.
TRANSPORT = {"timeout", "dns", "tls", "conn_refused", "conn_reset", "network_error", "blocked_url"}

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


class Blocked(Exception):
    """The URL or an address it resolves to is refused by the SSRF rules."""


class FetchFailed(Exception):
    """The remote gave no HTTP answer to ``initialize`` (its ``error_type`` is the message)."""


def target(url: str, allow_loopback: bool) -> Tuple[bool, str, int, str]:
    """``(tls, host, port, path)`` of a URL the rules accept; raises :class:`Blocked`."""
    try:
        host = _native.probe_url_host(url, allow_loopback)
        parts = urlsplit(url)
        port = parts.port
    except (_native.LowdownError, ValueError) as e:
        raise Blocked(getattr(e, "type", "unparsable")) from None
    # The host connected to must be the host the core judged.
    if (parts.hostname or "").rstrip(".") != host.strip("[]"):
        raise Blocked("host")
    tls = parts.scheme == "https"
    path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    return tls, host.strip("[]"), port or (443 if tls else 80), path


def addresses(host: str, port: int, allow_loopback: bool) -> List[Address]:
    """Every address of ``host``, all checked; raises :class:`Blocked` if any is refused."""
    try:
        found = [ipaddress.ip_address(host)]
    except ValueError:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        found = list(dict.fromkeys(ipaddress.ip_address(str(i[4][0]).split("%")[0]) for i in infos))
    for ip in found:
        try:
            _native.check_probe_address(ip, allow_loopback)
        except _native.LowdownError:
            raise Blocked("address") from None
    return found


def error_type(e: BaseException) -> str:
    """The Scanner's ``error_type`` of a failed exchange."""
    if isinstance(e, Blocked):
        return "blocked_url"
    if isinstance(e, socket.gaierror):
        return "dns"
    if isinstance(e, (ssl.SSLError, ssl.CertificateError)):
        return "tls"
    if isinstance(e, (TimeoutError, socket.timeout)):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "conn_refused"
    if isinstance(e, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.IncompleteRead)):
        return "conn_reset"
    return "network_error"


class _Pinned(http.client.HTTPConnection):
    """A connection to one checked address, TLS verified against the host name."""

    def __init__(self, host: str, port: int, ip: Address, tls: bool, deadline: float) -> None:
        super().__init__(host, port, timeout=REQUEST_TIMEOUT_S)
        self._ip, self._tls, self._deadline = ip, tls, deadline

    def connect(self) -> None:
        left = max(0.01, self._deadline - time.monotonic())
        sock = socket.create_connection((str(self._ip), self.port), left)
        if self._tls:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
        sock.settimeout(max(0.01, self._deadline - time.monotonic()))
        self.sock = sock


def read_answer(conn: http.client.HTTPConnection, resp: http.client.HTTPResponse,
                reader: "_native.AnswerReader", deadline: float) -> None:
    """Feeds ``resp``'s body to ``reader`` until it holds the answer or the body ends,
    raising :class:`TimeoutError` at ``deadline`` (the reader enforces the cap)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if conn.sock is not None:
            conn.sock.settimeout(left)
        chunk = resp.read1(1 << 16)
        if not chunk or reader.feed(chunk):
            return


@contextlib.contextmanager
def _within(seconds: float) -> Iterator[None]:
    """A wall-clock backstop (POSIX, main thread): :class:`TimeoutError` once ``seconds``
    have passed. Socket timeouts bound each read, not a remote that trickles its headers a
    byte at a time; this bounds the whole exchange (the drop-in hook does the same)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("deadline")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _exchange(probe: _native.Probe, req: Dict[str, Any], where: Tuple[bool, str, int, str], ip: Address, user_agent: str) -> Dict[str, Any]:
    tls, host, port, path = where
    start = time.monotonic()
    deadline = start + REQUEST_TIMEOUT_S
    conn = _Pinned(host, port, ip, tls, deadline)
    try:
        headers = dict(req["headers"])
        headers["User-Agent"] = user_agent
        conn.request(req["method"], path, body=req["body"] or None, headers=headers)
        resp = conn.getresponse()
    except Exception as e:
        conn.close()
        return probe.on_failed(error_type(e))
    status = resp.status
    reader: Optional[_native.AnswerReader] = None
    body_error: Optional[str] = None
    if req["answer"] is not None and 200 <= status < 300:
        rid, cap = req["answer"]
        reader = _native.AnswerReader(resp.getheader("content-type"), rid, cap)
        try:
            read_answer(conn, resp, reader, deadline)
        except Exception as e:
            body_error = error_type(e)
    elapsed_ms = (time.monotonic() - start) * 1000.0
    session = resp.getheader("mcp-session-id")
    www = resp.getheader("www-authenticate") is not None
    conn.close()
    return probe.on_response(status, session, www, elapsed_ms, reader, body_error)


def run(remote_url: str, allow_loopback: bool, user_agent: str, client_version: str) -> Dict[str, Any]:
    """Probes ``remote_url`` and returns its conformance (dimensions, overall_score,
    findings, test_results). Raises :class:`Blocked` for a refused URL or address and
    :class:`FetchFailed` when ``initialize`` got no HTTP answer at all."""
    where = target(remote_url, allow_loopback)
    try:
        ip = addresses(where[1], where[2], allow_loopback)[0]
    except socket.gaierror:
        raise FetchFailed("dns") from None
    probe = _native.Probe(client_version)
    step = probe.start()
    while "done" not in step:
        with _within(REQUEST_TIMEOUT_S + 1.0):
            step = _exchange(probe, step, where, ip, user_agent)
    result: Dict[str, Any] = step["done"]
    first = result["test_results"][0]
    if not first["passed"] and first["actual_status"] is None and first["error"] in TRANSPORT:
        raise FetchFailed(first["error"])
    return result
