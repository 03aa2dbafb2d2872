"""Routing sampled calls through the Prowl sampling gateway (SPEC §10).

On when both ``PROWL_AGENT_KEY`` and ``PROWL_GATEWAY_URL`` are set. Before each call, the
observed client asks :data:`ROUTER` where it goes; the answer is the core's
(``lowdown_core::gateway::router::Router``, the one observe(fetch) runs too): which catalog
service the URL belongs to, whether its ``allow`` rules carry the call and
``PROWL_GATEWAY_SERVICES`` names it, whether this agent is sampled for it today, which of the
caller's headers go along, and when to fetch the catalog and the salt again. A sampled call
goes to ``{PROWL_GATEWAY_URL}/{slug}{path}?{query}`` with ``X-Agent-Key``,
``X-Prowl-Salt-Id`` and ``X-Prowl-Sample-Decision``; every other call goes straight to the
vendor, and the agent key is never sent there.

This module does the IO: it fetches the catalog (``GET /v1/services``) and the salt
(``GET /v1/sampling/salt``) on a background thread when the core asks, so the caller never
waits on them; until the first fetch has answered, calls go direct.
"""

from __future__ import annotations

import http.client
import os
import threading
import time
from typing import Any, FrozenSet, List, NamedTuple, Optional, Tuple
from urllib.parse import urlsplit

from . import _contract, _core, _native


class Route(NamedTuple):
    """Where one sampled call goes instead of the vendor."""

    url: str
    headers: Tuple[Tuple[str, str], ...]  # to add: the agent key, the salt id, the decision
    keep: FrozenSet[str]  # the caller's header names (lower case) that go along
    slug: str
    vendor: str  # scheme://host[:port]{base}: what gateway redirects map back onto


def _now_ms() -> int:
    return int(time.time() * 1000)


def _get(api_url: str, path: str, agent_key: Optional[str]) -> str:
    parts = urlsplit(api_url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "127.0.0.1", parts.port, timeout=_contract.FETCH_TIMEOUT_MS / 1000)
    try:
        headers = {"Accept": "application/json"}
        if agent_key:
            headers[_core.AGENT_KEY_HEADER] = agent_key
        conn.request("GET", parts.path.rstrip("/") + path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise OSError(f"GET {path}: HTTP {resp.status}")
        return body.decode("utf-8")
    finally:
        conn.close()


class Router:
    """The core's router for the current settings, and its fetches; thread-safe, never blocking."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: Optional[Tuple[Any, ...]] = None
        self._services: Optional[str] = None
        self._core: Optional[Any] = None

    def _for(self, settings: Any) -> Any:
        """The core router of these settings: a new one when the API, key or gateway changed
        (what was fetched belongs to them), the same one with a new selection otherwise."""
        key = (settings.api_url, settings.agent_key, settings.gateway_url)
        if self._key != key or self._core is None:
            self._key, self._services = key, settings.gateway_services
            self._core = _native.Router(settings.agent_key, settings.gateway_url, settings.gateway_services)
        elif self._services != settings.gateway_services:
            self._services = settings.gateway_services
            self._core.select(settings.gateway_services)
        return self._core

    def route(self, method: str, url: str, header_names: List[str], settings: Any) -> Optional[Route]:
        """Where a ``method`` call to ``url`` (absolute, as sent) goes: a :class:`Route`
        through the gateway, or ``None`` (straight to the vendor)."""
        if not settings.gateway_url or not settings.agent_key:
            return None
        with self._lock:
            core = self._for(settings)
            self._fetch_if_wanted(core, settings)
            r = core.route(_now_ms(), method, url, header_names)
        if r is None:
            return None
        headers = tuple((k, v) for k, v in r["headers"])
        return Route(r["url"], headers, frozenset(k.lower() for k in r["keep"]), r["slug"], r["vendor"])

    def prefetch(self, settings: Any) -> None:
        """Start fetching the catalog and salt now (in the background) when the core wants
        them, so that calls made right after start-up can already be routed."""
        if settings.gateway_url and settings.agent_key:
            with self._lock:
                self._fetch_if_wanted(self._for(settings), settings)

    def refused(self, status: int, reason: Optional[str], settings: Any) -> bool:
        """A routed call was answered ``status`` with this body ``reason``: whether it was
        the gateway's own refusal (the core then starts over, fetching again when due)."""
        with self._lock:
            core = self._for(settings)
            gateway = bool(core.refused(_now_ms(), status, reason)["gateway"])
            self._fetch_if_wanted(core, settings)
        return gateway

    def vendor_location(self, route: Route, location: str) -> str:
        """A gateway redirect (``Location: /{slug}/…``) as the vendor URL it stands for, so
        the client follows it to the vendor and this router routes it again."""
        with self._lock:
            core = self._core
        return location if core is None else str(core.vendor_location(route.vendor, route.slug, location))

    def status(self) -> Any:
        """What the router knows: ``ready`` (catalog and a usable salt are in), the
        ``agent_id`` and ``salt_id`` in use, how many ``services`` it routes, and ``counts``
        (``routed``, ``direct``, ``fetches``, ``fetch_failures``, ``refused``)."""
        with self._lock:
            core = self._core
            if core is None:
                core = _native.Router(None, None)
            return core.status(_now_ms())

    def _fetch_if_wanted(self, core: Any, settings: Any) -> None:
        # Under the lock; the fetch itself runs on its own thread.
        if core.wants_fetch(_now_ms()):
            args = (core, settings.api_url, settings.agent_key)
            threading.Thread(target=self._fetch, args=args, name="prowl-gateway-fetch", daemon=True).start()

    def _fetch(self, core: Any, api_url: str, agent_key: str) -> None:
        try:
            catalog = _get(api_url, "/v1/services", None)
            salt = _get(api_url, "/v1/sampling/salt", agent_key)
        except Exception:  # never into the caller: calls simply go direct meanwhile
            with self._lock:
                core.fetch_failed(_now_ms())
            return
        with self._lock:
            core.loaded(_now_ms(), catalog, salt)

    def reset(self) -> None:
        """Forget everything (tests, and a forked child, whose fetch thread did not survive)."""
        self._lock = threading.Lock()
        self._key = None
        self._core = None


#: The one router of this process.
ROUTER = Router()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=ROUTER.reset)
