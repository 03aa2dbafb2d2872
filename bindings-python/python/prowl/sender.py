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

from . import _core, config, identity

OBSERVE_PATH = "/v1/telemetry/observe"
INTERACTIONS_PATH = "/api/interactions"

#: Items held per queue before new ones are dropped (and counted).
MAX_QUEUE = 10_000
#: Items per POST.
BATCH_SIZE = 200
#: Seconds the sender sleeps between sweeps when the queue is not full enough to wake it.
SWEEP_INTERVAL_S = 0.25
#: Items the sender prepares before it gives the GIL away for a moment.
YIELD_EVERY = 64
#: Longest pause after a 429, whatever its Retry-After says.
MAX_PAUSE_S = 3600.0

# Errors that mean a kept-alive connection went stale (not that the server is slow).
_STALE = (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError, BrokenPipeError)


def post_json(api_url: str, path: str, payload: Any, agent_key: Optional[str], timeout: float) -> int:
    """POST ``payload`` as JSON to ``api_url + path`` and return the HTTP status.

    A fresh connection each call; ``timeout`` bounds the connect and every read. Raises
    ``OSError``/``http.client.HTTPException`` on network failure (callers decide to ignore).
    """
    conn = _connect(api_url, timeout)
    try:
        return _post(conn, api_url, path, payload, agent_key)[0]
    finally:
        conn.close()


def _connect(api_url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(api_url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


def _post(
    conn: http.client.HTTPConnection, api_url: str, path: str, payload: Any, agent_key: Optional[str]
) -> Tuple[int, float]:
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    if agent_key:
        headers["X-Agent-Key"] = agent_key
    base = urlsplit(api_url).path.rstrip("/")
    conn.request("POST", base + path, body=body, headers=headers)
    resp = conn.getresponse()
    resp.read()
    try:
        retry_after = float(resp.getheader("Retry-After") or 0)
    except ValueError:
        retry_after = 0.0
    return resp.status, retry_after


class Sender:
    """Bounded queues of observations and interaction records, and the thread that sends them.

    The caller's thread only measures and appends; the core's privacy filter (for
    observations) and record validation (for interaction records) run here, on the
    sender thread, before an item joins a batch, so nothing reaches the network without
    passing the core and the caller never pays for it.

    ``stats()`` counts what happened: ``queued``, ``sent`` (accepted with a 2xx),
    ``dropped`` (queue full), ``failed`` (POST failed or was refused), ``throttled``
    (refused with 429; sending pauses for its ``Retry-After``), ``blocked`` (the core's
    filter refused the host), ``invalid`` (the core's validation refused the record).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._queues: Dict[str, Deque[Any]] = {OBSERVE_PATH: deque(), INTERACTIONS_PATH: deque()}
        self._obs = self._queues[OBSERVE_PATH]
        self._recs = self._queues[INTERACTIONS_PATH]
        self._wake = threading.Event()
        self._start_lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._conn: Optional[Tuple[str, http.client.HTTPConnection]] = None
        self._stopping = False
        self._paused_until = 0.0
        self.counts = {"queued": 0, "sent": 0, "dropped": 0, "failed": 0, "throttled": 0, "blocked": 0, "invalid": 0, "no_node_id": 0}

    # -- the caller's side: constant time, never raises, never waits -----------------------

    def submit_observation(
        self, url: object, method: str, status: Optional[int], latency_ms: float, nbytes: Optional[int], settings: "config.Settings"
    ) -> None:
        """Queue one measured HTTP exchange for ``POST /v1/telemetry/observe``. The core turns
        it into an observation (or drops it) on the sender thread, before it is batched."""
        self._submit(self._obs, (url, method, status, latency_ms, nbytes, settings))

    def submit_record(self, record: Dict[str, Any]) -> None:
        """Queue one interaction record for ``POST /api/interactions``; the core validates it
        on the sender thread, before it is batched."""
        self._submit(self._recs, record)

    def _submit(self, q: Deque[Any], item: Any) -> None:
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
            try:
                self._drain(deadline=None)
            except Exception:  # keep the one sender alive whatever happens in a sweep
                pass

    def _drain(self, deadline: Optional[float]) -> bool:
        """Send everything queued; True when the queues are empty at the end."""
        timeout = deadline - time.monotonic() if deadline is not None else None
        if not self._send_lock.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            return False
        try:
            if time.monotonic() < self._paused_until:
                return not self.pending()
            for path, q in self._queues.items():
                while q:
                    if deadline is not None and time.monotonic() >= deadline:
                        return False
                    if time.monotonic() < self._paused_until:
                        return False
                    batch = self._batch(path, q)
                    if batch:
                        self._send(path, batch, deadline)
            return True
        finally:
            self._send_lock.release()

    def _batch(self, path: str, q: Deque[Any]) -> List[Dict[str, Any]]:
        """Up to BATCH_SIZE items, each passed through the core first: an observation's URL
        becomes its host or is dropped (privacy filter, allowlist); a record is validated."""
        batch: List[Dict[str, Any]] = []
        n = 0
        while q and len(batch) < BATCH_SIZE:
            n += 1
            if n % YIELD_EVERY == 0:
                time.sleep(0)  # let the caller's threads have the GIL: they never wait on us
            item = q.popleft()
            try:
                if path == OBSERVE_PATH:
                    url, method, status, latency_ms, nbytes, settings = item
                    obs = _core.prepare_observation(
                        str(url), method, status, latency_ms, nbytes, settings.source, settings.policy
                    )
                    if obs is None:
                        self.counts["blocked"] += 1
                    else:
                        batch.append(obs)
                else:
                    batch.append(_core.validate_record(self._with_node_id(item)))
            except Exception:  # the core refused it: never sent, counted
                self.counts["invalid"] += 1
        return batch

    def _with_node_id(self, record: Dict[str, Any]) -> Dict[str, Any]:
        """The record with this node's ``node_id`` (loaded here, on the sender thread, the
        first time); counted in ``no_node_id`` and sent without one when there is none."""
        if record.get("node_id") is None:
            nid = identity.node_id()
            if nid is None:
                self.counts["no_node_id"] += 1
            else:
                record["node_id"] = nid
        return record

    def _send(self, path: str, batch: List[Dict[str, Any]], deadline: Optional[float]) -> None:
        settings = config.current()
        timeout = config.SEND_TIMEOUT_S
        if deadline is not None:
            timeout = max(0.05, min(timeout, deadline - time.monotonic()))
        try:
            try:
                reused = self._conn is not None
                conn = self._connection(settings.api_url, timeout)
                status, retry_after = _post(conn, settings.api_url, path, batch, settings.agent_key)
            except _STALE:
                if not reused:
                    raise
                # The kept-alive connection was closed by the server meanwhile: once more, fresh.
                self._close_connection()
                conn = self._connection(settings.api_url, timeout)
                status, retry_after = _post(conn, settings.api_url, path, batch, settings.agent_key)
        except Exception:  # network trouble of any kind: drop the batch, count it
            self._close_connection()
            self.counts["failed"] += len(batch)
            return
        if status == 429:
            # Rate limited (SPEC §4): stop sending until the server says so; what arrives
            # meanwhile waits in the queue (and overflows into `dropped`).
            self.counts["throttled"] += len(batch)
            self._paused_until = time.monotonic() + min(max(retry_after, 1.0), MAX_PAUSE_S)
        else:
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
        self._paused_until = 0.0

    def after_fork_in_child(self) -> None:
        """The parent's queue and thread stay the parent's; the child starts afresh."""
        self._reset()


#: The process-wide sender.
SENDER = Sender()

atexit.register(SENDER.at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SENDER.after_fork_in_child)
