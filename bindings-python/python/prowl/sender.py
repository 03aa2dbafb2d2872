"""The one background sender per process (SPEC §4).

Callers put ready-to-send items on a bounded queue and return at once; a daemon thread
batches them to the API. Nothing here ever raises into the caller: a full queue drops the
item and counts it, a failed POST drops the batch and counts it. At exit the queue is
flushed within :data:`~prowl.config.EXIT_FLUSH_TIMEOUT_S`; after ``fork`` the child starts
with an empty queue and its own thread.
"""

from __future__ import annotations

import atexit
import http.client
import json
import os
import threading
import time
from collections import deque
from typing import Any, Deque, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from . import config

OBSERVE_PATH = "/v1/telemetry/observe"
INTERACTIONS_PATH = "/api/interactions"

#: Items held per queue before new ones are dropped (and counted).
MAX_QUEUE = 10_000
#: Items per POST.
BATCH_SIZE = 200
#: Seconds the sender sleeps between sweeps when the queue is not full enough to wake it.
SWEEP_INTERVAL_S = 0.25


def post_json(api_url: str, path: str, payload: Any, agent_key: Optional[str], timeout: float) -> int:
    """POST ``payload`` as JSON to ``api_url + path`` and return the HTTP status.

    A fresh connection each call; ``timeout`` bounds the connect and every read. Raises
    ``OSError``/``http.client.HTTPException`` on network failure (callers decide to ignore).
    """
    conn = _connect(api_url, timeout)
    try:
        return _post(conn, api_url, path, payload, agent_key)
    finally:
        conn.close()


def _connect(api_url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(api_url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


def _post(conn: http.client.HTTPConnection, api_url: str, path: str, payload: Any, agent_key: Optional[str]) -> int:
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    if agent_key:
        headers["X-Agent-Key"] = agent_key
    base = urlsplit(api_url).path.rstrip("/")
    conn.request("POST", base + path, body=body, headers=headers)
    resp = conn.getresponse()
    resp.read()
    return resp.status


class Sender:
    """Bounded queues of observations and interaction records, and the thread that sends them.

    ``stats()`` counts what happened: ``queued``, ``sent`` (accepted with a 2xx),
    ``dropped`` (queue full), ``failed`` (POST failed or was refused), ``blocked`` (the
    core's filter refused the host, counted by the callers).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._queues: Dict[str, Deque[Dict[str, Any]]] = {OBSERVE_PATH: deque(), INTERACTIONS_PATH: deque()}
        self._obs = self._queues[OBSERVE_PATH]
        self._recs = self._queues[INTERACTIONS_PATH]
        self._wake = threading.Event()
        self._start_lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._conn: Optional[Tuple[str, http.client.HTTPConnection]] = None
        self._stopping = False
        self.counts = {"queued": 0, "sent": 0, "dropped": 0, "failed": 0, "blocked": 0}

    # -- the caller's side: constant time, never raises, never waits -----------------------

    def submit_observation(self, obs: Dict[str, Any]) -> None:
        """Queue one observation for ``POST /v1/telemetry/observe``."""
        self._submit(self._obs, obs)

    def submit_record(self, record: Dict[str, Any]) -> None:
        """Queue one interaction record for ``POST /api/interactions``."""
        self._submit(self._recs, record)

    def count_blocked(self) -> None:
        """Count one observation the core's filter refused."""
        self.counts["blocked"] += 1

    def _submit(self, q: Deque[Dict[str, Any]], item: Dict[str, Any]) -> None:
        if len(q) >= MAX_QUEUE:
            self.counts["dropped"] += 1
            return
        q.append(item)
        self.counts["queued"] += 1
        if self._thread is None:
            self._start()
        elif len(q) >= BATCH_SIZE:
            self._wake.set()

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is not None:
                return
            t = threading.Thread(target=self._run, name="prowl-sender", daemon=True)
            try:
                t.start()
            except RuntimeError:  # interpreter shutting down: the exit flush sends instead
                return
            self._thread = t

    # -- the sender thread ------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait(SWEEP_INTERVAL_S)
            self._wake.clear()
            self._drain(deadline=None)

    def _drain(self, deadline: Optional[float]) -> bool:
        """Send everything queued; True when the queues are empty at the end."""
        timeout = deadline - time.monotonic() if deadline is not None else None
        if not self._send_lock.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            return False
        try:
            for path, q in self._queues.items():
                while q:
                    if deadline is not None and time.monotonic() >= deadline:
                        return False
                    batch: List[Dict[str, Any]] = []
                    while q and len(batch) < BATCH_SIZE:
                        batch.append(q.popleft())
                    self._send(path, batch, deadline)
            return True
        finally:
            self._send_lock.release()

    def _send(self, path: str, batch: List[Dict[str, Any]], deadline: Optional[float]) -> None:
        settings = config.current()
        timeout = config.SEND_TIMEOUT_S
        if deadline is not None:
            timeout = max(0.05, min(timeout, deadline - time.monotonic()))
        try:
            conn = self._connection(settings.api_url, timeout)
            status = _post(conn, settings.api_url, path, batch, settings.agent_key)
        except Exception:  # network trouble of any kind: drop the batch, count it
            self._close_connection()
            self.counts["failed"] += len(batch)
            return
        self.counts["sent" if 200 <= status < 300 else "failed"] += len(batch)

    def _connection(self, api_url: str, timeout: float) -> http.client.HTTPConnection:
        if self._conn is not None and self._conn[0] == api_url:
            conn = self._conn[1]
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            return conn
        self._close_connection()
        conn = _connect(api_url, timeout)
        self._conn = (api_url, conn)
        return conn

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn[1].close()
            except Exception:
                pass
            self._conn = None

    # -- flush, exit and fork -----------------------------------------------------------------

    def flush(self, timeout: float = config.EXIT_FLUSH_TIMEOUT_S) -> bool:
        """Send everything queued now, waiting at most ``timeout`` seconds.

        Returns True when nothing is left queued.
        """
        return self._drain(deadline=time.monotonic() + timeout)

    def pending(self) -> int:
        """Items waiting to be sent."""
        return len(self._obs) + len(self._recs)

    def at_exit(self) -> None:
        """Flush within the exit bound, then stop the thread."""
        try:
            if self.pending():
                self.flush(config.EXIT_FLUSH_TIMEOUT_S)
        finally:
            self._stopping = True
            self._wake.set()
            self._close_connection()

    def reset(self) -> None:
        """Drop everything queued and zero the counters (for tests and benchmarks)."""
        for q in self._queues.values():
            q.clear()
        for k in self.counts:
            self.counts[k] = 0

    def after_fork_in_child(self) -> None:
        """The parent's queue and thread stay the parent's; the child starts afresh."""
        self._reset()


#: The process-wide sender.
SENDER = Sender()

atexit.register(SENDER.at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SENDER.after_fork_in_child)
