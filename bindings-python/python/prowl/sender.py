"""The one background sender per process (SPEC §3, §4).

Callers put ready-to-send items on bounded queues and return at once; a daemon thread
batches them to the API. Nothing here ever raises into the caller.

- **Observations** are fire-and-forget: the client keeps its own count of the server's
  hourly budget (the core's ``TelemetryBudget``) and sends no more than it; a refusal
  (429, or items ``rate_limited``) pauses telemetry for ``Retry-After``, and never the
  interaction records. A full queue drops the newest and counts it.
- **Interaction records** are never lost to the network: what an answer means is the core's
  decision (``_native.delivery``, the one the proxy makes too). Records the API did not take
  (down, slow, over a quota, 429, 5xx, any other status such as a mistyped URL's 404) go to
  the spool shared with every Lowdown host, and later batches go straight there for the
  pause the answer asks (``Retry-After``) or the core's backoff; records refused as invalid
  are dropped and counted. After a batch is delivered, the spool is delivered too. A full
  queue spills its oldest records to the spool.
- **Exit** waits at most :data:`~prowl.config.EXIT_BUDGET_S` (100 ms) for the API; the
  records not delivered by then go to the spool at once. After ``fork`` the child starts
  with empty queues and its own thread.
"""

from __future__ import annotations

import atexit
import dataclasses
import http.client
import json
import logging
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Deque, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from . import _contract, _core, _native, _node, config, identity, spool

_log = logging.getLogger("prowl")

OBSERVE_PATH = "/v1/telemetry/observe"
INTERACTIONS_PATH = "/api/interactions"

#: Items held per queue before new ones are dropped (and counted).
MAX_QUEUE = 10_000
#: Items per POST (the core's, as every host sends).
BATCH_SIZE = _contract.BATCH_MAX
#: Bytes of the API's answer to one batch read at most (the core's ``DELIVERY``).
ANSWER_MAX_BYTES = _contract.ANSWER_MAX_BYTES
#: Seconds the sender sleeps between sweeps when the queue is not full enough to wake it.
SWEEP_INTERVAL_S = 0.25
#: Items the sender prepares before it gives the GIL away for a moment.
YIELD_EVERY = 64
#: Spool files delivered per sweep at most (the rest wait for the next sweep).
SPOOL_FILES_PER_SWEEP = 4

# Errors that mean a kept-alive connection went stale (not that the server is slow).
_STALE = (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError, BrokenPipeError)


def post_json(api_url: str, path: str, payload: Any, agent_key: Optional[str], timeout: float) -> int:
    """POST ``payload`` as JSON to ``api_url + path`` and return the HTTP status.

    A fresh connection each call; ``timeout`` bounds the connect and every read. Raises
    ``OSError``/``http.client.HTTPException`` on network failure (callers decide to ignore).
    """
    conn = _connect(api_url, timeout)
    try:
        return _post(conn, api_url, path, payload, agent_key).status
    finally:
        conn.close()


def _connect(api_url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(api_url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


class Answer:
    """An HTTP answer: its status, ``Retry-After`` header and body as sent."""

    __slots__ = ("status", "retry_after_text", "body")

    def __init__(self, status: int, retry_after_text: Optional[str], body: bytes) -> None:
        self.status, self.retry_after_text, self.body = status, retry_after_text, body

    def text(self) -> Optional[str]:
        """The body as text (``None`` when it is not UTF-8)."""
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError:
            return None


def _post(
    conn: http.client.HTTPConnection, api_url: str, path: str, payload: Any, agent_key: Optional[str]
) -> Answer:
    """POSTs ``payload`` (a JSON-able value, or ``bytes`` already encoded) and returns the
    answer."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    if agent_key:
        headers[_core.AGENT_KEY_HEADER] = agent_key
    base = urlsplit(api_url).path.rstrip("/")
    conn.request("POST", base + path, body=body, headers=headers)
    resp = conn.getresponse()
    raw = resp.read(ANSWER_MAX_BYTES + 1)
    if len(raw) > ANSWER_MAX_BYTES:
        # Not the API's answer (it is a few kilobytes): taken as no answer, the batch kept.
        raise OSError(f"the API answered more than {ANSWER_MAX_BYTES} bytes")
    return Answer(resp.status, resp.getheader("Retry-After"), raw)


class Sender:
    """Bounded queues of observations and interaction records, and the thread that sends them.

    The caller's thread only measures and appends; the core's privacy filter (for
    observations) and record validation (for interaction records) run here, on the
    sender thread, before an item joins a batch, so nothing reaches the network without
    passing the core and the caller never pays for it.

    ``stats()`` counts what happened: ``queued``, ``sent`` (taken by the API), ``dropped``
    (an observation queue full), ``failed`` (observations not delivered: network, refused),
    ``throttled`` (observations refused as over the rate limit), ``blocked`` (the core's
    filter refused the host), ``invalid`` (the core's validation refused the record),
    ``refused`` (records the API refused by index), ``spooled`` (records kept for later).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._obs: Deque[Any] = deque()
        self._recs: Deque[Any] = deque()
        self._wake = threading.Event()
        self._start_lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._conn: Optional[Tuple[str, http.client.HTTPConnection]] = None
        self._stopping = False
        self._budget: Optional[Tuple[bool, Any]] = None
        self._records_down_until = 0.0
        self._spool_waiting = True  # a previous run may have left some: look once
        self._inflight: List[str] = []  # records (JSON texts) in the POST under way
        self._node_started = False  # this process started the local node (or tried)
        self.counts = {
            "queued": 0, "sent": 0, "dropped": 0, "failed": 0, "throttled": 0, "blocked": 0,
            "invalid": 0, "refused": 0, "spooled": 0, "no_node_id": 0,
        }

    # -- the caller's side: constant time, never raises, never waits -----------------------

    def submit_observation(
        self, url: object, method: str, status: Optional[int], latency_ms: float, nbytes: Optional[int], settings: "config.Settings"
    ) -> None:
        """Queue one measured HTTP exchange for ``POST /v1/telemetry/observe``. The core turns
        it into an observation (or drops it) on the sender thread, before it is batched."""
        if len(self._obs) >= MAX_QUEUE:
            self.counts["dropped"] += 1
            return
        self._submit(self._obs, (url, method, status, latency_ms, nbytes, settings))

    def submit_record(self, record: Mapping[str, Any]) -> None:
        """Queue one interaction record for ``POST /api/interactions``; the core validates it
        on the sender thread, before it is batched. Past the bound the oldest go to the spool."""
        if len(self._recs) >= MAX_QUEUE:
            self._spill()
        self._submit(self._recs, record)

    def _submit(self, q: Deque[Any], item: Any) -> None:
        q.append(item)
        self.counts["queued"] += 1
        if self._thread is None:
            self._start()
        elif len(q) >= BATCH_SIZE:
            self._wake.set()

    def _spill(self) -> None:
        """Moves the oldest queued records to the spool (validated first, as ever)."""
        texts = self._record_texts([self._recs.popleft() for _ in range(min(BATCH_SIZE, len(self._recs)))])
        self.counts["spooled"] += spool.write(texts)

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
        """Send what may be sent now; True when nothing sendable is left queued."""
        timeout = deadline - time.monotonic() if deadline is not None else None
        if not self._send_lock.acquire(timeout=-1 if timeout is None else max(timeout, 0)):
            return False
        try:
            return self._drain_records(deadline) and self._drain_observations(deadline)
        finally:
            self._send_lock.release()

    def _late(self, deadline: Optional[float]) -> bool:
        return deadline is not None and time.monotonic() >= deadline

    def _drain_records(self, deadline: Optional[float]) -> bool:
        while self._recs:
            if self._late(deadline):
                return False
            batch = self._record_texts([self._recs.popleft() for _ in range(min(BATCH_SIZE, len(self._recs)))])
            if not batch:
                continue
            if time.monotonic() < self._records_down_until:
                self.counts["spooled"] += spool.write(batch)
            elif not self._send_records(batch, deadline):
                self._spool_waiting = True
        for _ in range(SPOOL_FILES_PER_SWEEP):
            if not self._spool_waiting or self._late(deadline) or time.monotonic() < self._records_down_until:
                break
            claim = spool.claim_next()
            if claim is None:
                self._spool_waiting = False
                break
            records, done, release = claim
            kept = self._send_records(records, deadline, from_spool=True)
            if len(kept) == len(records):
                release()
            else:
                # What was taken is gone from the file; what was kept goes back as its own.
                done()
                if kept:
                    self.counts["spooled"] += spool.write(kept)
        return True

    def _record_texts(self, items: List[Dict[str, Any]]) -> List[str]:
        """Each record validated by the core, as the JSON text that is sent or spooled."""
        out = []
        for item in items:
            try:
                out.append(json.dumps(_core.validate_record(self._with_node_id(item)), separators=(",", ":")))
            except Exception:  # the core refused it: never sent, counted
                self.counts["invalid"] += 1
        return out

    def _send_records(self, batch: List[str], deadline: Optional[float], from_spool: bool = False) -> List[str]:
        """POSTs records and acts on the core's reading of the answer: counts what was
        delivered and dropped as invalid, and returns the records kept for later, which go
        to the spool unless ``from_spool`` (the caller puts those back itself)."""
        self._inflight = batch
        answer = self._send(INTERACTIONS_PATH, ("[" + ",".join(batch) + "]").encode(), deadline)
        self._inflight = []
        if answer is None:
            decided = _native.delivery(len(batch), None, None, None)
        else:
            decided = _native.delivery(len(batch), answer.status, answer.retry_after_text, answer.text())
        delivered, _duplicates, rejected, keep, _limited, pause_ms, _reason = decided
        self.counts["sent"] += delivered
        self.counts["refused"] += rejected
        kept = [batch[i] for i in keep]
        if kept:
            self._records_down_until = time.monotonic() + pause_ms / 1000.0
            if not from_spool:
                self.counts["spooled"] += spool.write(kept)
        return kept

    def _drain_observations(self, deadline: Optional[float]) -> bool:
        settings = config.current()
        budget = self._budget_for(settings)
        while self._obs:
            if self._late(deadline):
                return False
            now_ms = time.time() * 1000
            if budget.wait_ms(now_ms) > 0:
                return False  # over the hourly budget or paused: they wait in the queue
            batch = self._observations(min(BATCH_SIZE, len(self._obs)))
            if not batch:
                continue
            allowed = budget.take(now_ms, len(batch))
            for obs in reversed(batch[allowed:]):  # what the budget does not allow waits
                self._obs.appendleft(("ready", obs))
            batch = batch[:allowed]
            result = self._send(OBSERVE_PATH, batch, deadline)
            answer = (None, None, None) if result is None else (result.status, result.retry_after_text, result.text())
            # What the answer means (and whether sending pauses) is the core's, as in every host.
            answered = budget.answered(time.time() * 1000, len(batch), *answer)
            for name, n in zip(("sent", "throttled", "failed"), answered):
                self.counts[name] += n
        return True

    def _budget_for(self, settings: "config.Settings") -> Any:
        keyed = bool(settings.agent_key)
        if self._budget is None or self._budget[0] != keyed:
            self._budget = (keyed, _native.TelemetryBudget(keyed))
        return self._budget[1]

    def _observations(self, n: int) -> List[Dict[str, Any]]:
        """Up to ``n`` queued measurements, each passed through the core first: an
        observation's URL becomes its host or is dropped (privacy filter, allowlist)."""
        batch: List[Dict[str, Any]] = []
        taken = 0
        while self._obs and taken < n:
            taken += 1
            if taken % YIELD_EVERY == 0:
                time.sleep(0)  # let the caller's threads have the GIL: they never wait on us
            item = self._obs.popleft()
            if item[0] == "ready":
                batch.append(item[1])
                continue
            url, method, status, latency_ms, nbytes, settings = item
            try:
                obs = _core.prepare_observation(str(url), method, status, latency_ms, nbytes, settings.source, settings.policy)
            except Exception:  # the core refused it: never sent, counted
                self.counts["invalid"] += 1
                continue
            if obs is None:
                self.counts["blocked"] += 1
            else:
                batch.append(obs)
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

    def _send(self, path: str, payload: Any, deadline: Optional[float]) -> Optional[Answer]:
        """One POST on the kept-alive connection; ``None`` on network trouble of any kind."""
        settings = config.current()
        timeout = config.SEND_TIMEOUT_S
        if deadline is not None:
            timeout = max(0.01, min(timeout, deadline - time.monotonic()))
        try:
            try:
                reused = self._conn is not None
                conn = self._connection(settings.api_url, timeout)
                return _post(conn, settings.api_url, path, payload, settings.agent_key)
            except _STALE:
                if not reused:
                    raise
                # The kept-alive connection was closed by the server meanwhile: once more, fresh.
                self._close_connection()
                conn = self._connection(settings.api_url, timeout)
                return _post(conn, settings.api_url, path, payload, settings.agent_key)
        except ConnectionRefusedError:
            self._close_connection()
            self._nothing_answers(settings)
            return None
        except Exception:
            self._close_connection()
            return None

    def _nothing_answers(self, settings: "config.Settings") -> None:
        """Nothing listens at the API: with no deployment configured, follow the local node
        to where it announces itself, or start it (once per process)."""
        if not settings.may_start:
            return
        url = config.local_node_url(settings)
        if url is not None:
            if url != settings.api_url:
                config.set_current(dataclasses.replace(settings, api_url=url))
            return
        if self._node_started or settings.home is None:
            return
        self._node_started = True
        try:
            started = _node.start(Path(settings.home))
            _log.info("prowl: started a local Lowdown node (%s; log: %s)", started, Path(settings.home) / _contract.LOCAL_NODE_LOG)
        except OSError as e:
            _log.warning("prowl: no Lowdown node to report to (%s); records wait in %s", e, Path(settings.home) / _contract.SPOOL_DIR)

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

    def flush(self, timeout: float = config.FLUSH_TIMEOUT_S) -> bool:
        """Send everything queued now, waiting at most ``timeout`` seconds.

        Returns True when nothing sendable is left queued.
        """
        return self._drain(deadline=time.monotonic() + timeout)

    def pending(self) -> int:
        """Items waiting to be sent."""
        return len(self._obs) + len(self._recs)

    def at_exit(self) -> None:
        """Deliver within :data:`~prowl.config.EXIT_BUDGET_S`, then spool the records left
        (the observations left are dropped: telemetry is fire-and-forget)."""
        try:
            if self.pending():
                self._drain(deadline=time.monotonic() + config.EXIT_BUDGET_S)
        finally:
            self._stopping = True
            self._wake.set()
            # What is still queued, and a batch still on its way to a hanging API (the sender
            # thread holds it), is kept for the next run; record ids make a repeat harmless.
            left = self._inflight + self._record_texts(list(self._recs))
            self._recs.clear()
            self.counts["spooled"] += spool.write(left)
            self._close_connection()

    def reset(self) -> None:
        """Drop everything queued and zero the counters (for tests and benchmarks)."""
        self._obs.clear()
        self._recs.clear()
        for k in self.counts:
            self.counts[k] = 0
        self._budget = None
        self._records_down_until = 0.0
        self._spool_waiting = True
        self._node_started = False

    def after_fork_in_child(self) -> None:
        """The parent's queue and thread stay the parent's; the child starts afresh."""
        self._reset()


#: The process-wide sender.
SENDER = Sender()

atexit.register(SENDER.at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SENDER.after_fork_in_child)
