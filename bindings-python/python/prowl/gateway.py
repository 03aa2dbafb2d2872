"""Routing sampled calls through the Prowl sampling gateway (SPEC §10).

On when both ``PROWL_AGENT_KEY`` and ``PROWL_GATEWAY_URL`` are set. Before each call, the
observed client asks :data:`ROUTER` whether the URL belongs to a catalog service; if the
core's decision (``lowdown_core::sample::decide``) says this agent is sampled for it today,
the call goes to ``{PROWL_GATEWAY_URL}/{slug}{path}?{query}`` with ``X-Agent-Key``,
``X-Prowl-Salt-Id`` and ``X-Prowl-Sample-Decision``; every other call goes straight to the
vendor, and the agent key is never sent there.

What the router needs comes from the API, fetched on a background thread so the caller never
waits on it: the catalog (``GET /v1/services``, again every hour) and the salt with this
key's ``agent_id`` (``GET /v1/sampling/salt``, again at its ``valid_until``). Until the first
fetch has answered, calls go direct. A failed fetch is tried again after a minute; a salt
past its ``accepted_until`` is never used. The decision has no per-call input, so it is
computed once per service and salt and then only looked up.

A call is routed only when the gateway would carry it: its host is a catalog host (equal to
one, or a subdomain), its URL is under the service's ``upstream`` (same scheme, host and port,
and under its base path), one of the service's ``allow`` rules matches its method and path
(the core's ``GatewayRules``, which the gateway applies too), and, when
``PROWL_GATEWAY_SERVICES`` is set, the service is one it names (slugs or service ids,
comma-separated). Every other call goes direct, and is observed as before.

What a routed call carries: only the request headers the gateway forwards
(``GatewayRules.keep_request_headers``). For an ``inject`` service the call runs on the
operator's vendor account, so the user's ``Authorization``, ``Cookie``,
``Proxy-Authorization`` and the service's credential header never leave the process; for a
``passthrough`` service the user's own credential header goes to the gateway, which forwards
it to the vendor and stores none of it.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from datetime import datetime
from typing import Any, Dict, List, Literal, NamedTuple, Optional, Tuple, Union
from urllib.parse import urlsplit

from . import _core, _native

#: Seconds between catalog refreshes.
CATALOG_TTL_S = 3600.0
#: Seconds before a failed fetch is tried again.
RETRY_S = 60.0
#: Seconds one fetch may take.
FETCH_TIMEOUT_S = 5.0
#: The reasons with which the gateway itself (not the vendor) refuses a call.
GATEWAY_REASONS = frozenset({
    "unknown_service", "missing_agent_key", "unknown_agent_key", "missing_salt_id", "missing_decision",
    "malformed_decision", "unknown_salt", "expired_salt", "wrong_decision", "not_sampled",
    "below_min_reputation", "no_credential", "not_allowed", "bad_path", "gateway_rate_limited",
})
_DEFAULT_PORT = {"http": 80, "https": 443}


class Service(NamedTuple):
    """A catalog entry as the router uses it."""

    slug: str
    service_id: str
    sampling_rate: float
    hosts: Tuple[str, ...]
    origin: Tuple[str, str, int]
    base: str  # the upstream's path, without a trailing slash
    rules: Any  # the core's GatewayRules: what the gateway carries, which headers it forwards


class Route(NamedTuple):
    """Where one sampled call goes instead of the vendor."""

    url: str
    headers: Tuple[Tuple[str, str], ...]
    service: Service
    vendor_prefix: str  # scheme://host[:port]{base}: what gateway redirects map back onto


class _State(NamedTuple):
    key: Tuple[str, str, str]  # (api_url, agent_key, gateway_url) it was fetched for
    by_origin: Dict[Tuple[str, str, int], List[Service]]
    agent_id: str
    salt_id: str
    salt: str
    refresh_at: float
    usable_until: float
    decisions: Dict[str, Union[str, Literal[False]]]  # service_id -> the roll when sampled, else False


def _origin(scheme: str, host: str, port: Optional[int]) -> Tuple[str, str, int]:
    return (scheme, host.lower().rstrip("."), port or _DEFAULT_PORT.get(scheme, 0))


def _host_listed(host: str, hosts: Tuple[str, ...]) -> bool:
    return any(host == h or host.endswith("." + h) for h in hosts)


def _parse_services(answer: Any) -> Dict[Tuple[str, str, int], List[Service]]:
    by_origin: Dict[Tuple[str, str, int], List[Service]] = {}
    for s in answer.get("services", []) if isinstance(answer, dict) else []:
        try:
            up = urlsplit(s["upstream"])
            svc = Service(
                slug=str(s["slug"]),
                service_id=str(s["service_id"]),
                sampling_rate=float(s["sampling_rate"]),
                hosts=tuple(str(h).lower() for h in s["hosts"]),
                origin=_origin(up.scheme, up.hostname or "", up.port),
                base=up.path.rstrip("/"),
                rules=_native.GatewayRules([str(a) for a in s.get("allow") or []], s.get("mode"), s.get("credential_header")),
            )
        except (KeyError, TypeError, ValueError):  # LowdownError is a ValueError
            continue  # an entry this client cannot use is one it sends direct
        by_origin.setdefault(svc.origin, []).append(svc)
    for services in by_origin.values():
        services.sort(key=lambda s: len(s.base), reverse=True)  # the most specific base first
    return by_origin


def _iso_to_epoch(value: Any) -> float:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def _get_json(api_url: str, path: str, agent_key: Optional[str]) -> Any:
    parts = urlsplit(api_url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "127.0.0.1", parts.port, timeout=FETCH_TIMEOUT_S)
    try:
        headers = {"Accept": "application/json"}
        if agent_key:
            headers[_core.AGENT_KEY_HEADER] = agent_key
        conn.request("GET", parts.path.rstrip("/") + path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise OSError(f"GET {path}: HTTP {resp.status}")
        return json.loads(body)
    finally:
        conn.close()


class Router:
    """The catalog, the salt and the decisions of this process; thread-safe, never blocking."""

    def __init__(self) -> None:
        self._state: Optional[_State] = None
        self._lock = threading.Lock()
        self._fetching = False
        self._retry_at = 0.0
        self.counts = {"routed": 0, "direct": 0, "fetches": 0, "fetch_failures": 0, "refused": 0}

    def route(self, method: str, scheme: str, host: str, port: Optional[int], raw_path: str, settings: Any) -> Optional[Route]:
        """Where a ``method`` call to this URL goes: a :class:`Route` through the gateway, or
        ``None`` (straight to the vendor). ``raw_path`` is the path and query as sent."""
        gateway = settings.gateway_url
        if not gateway or not settings.agent_key:
            return None
        key = (settings.api_url, settings.agent_key, gateway)
        state = self._state
        now = time.time()
        if state is None or state.key != key or now >= state.refresh_at:
            self._fetch_soon(settings, key, now)
            if state is None or state.key != key or now >= state.usable_until:
                return None
        services = state.by_origin.get(_origin(scheme, host, port))
        if not services:
            return None
        path, _, query = raw_path.partition("?")
        for svc in services:
            if not _host_listed(host.lower().rstrip("."), svc.hosts):
                continue
            if svc.base and path != svc.base and not path.startswith(svc.base + "/"):
                continue
            rest = path[len(svc.base):] or "/"
            target = rest + (f"?{query}" if query else "")
            if not _native.gateway_service_selected(settings.gateway_services, svc.slug, svc.service_id):
                continue
            if svc.rules.check(method, target)["verdict"] != "allowed":
                continue
            sampled = state.decisions.get(svc.service_id)
            if sampled is None:
                roll = _native.decide(svc.service_id, state.agent_id, state.salt_id, state.salt, svc.sampling_rate)
                sampled = state.decisions[svc.service_id] = roll["roll"] if roll["sampled"] else False
            if not sampled:
                self.counts["direct"] += 1
                return None
            url = f"{gateway}/{svc.slug}{target}"
            headers = ((_core.AGENT_KEY_HEADER, settings.agent_key), ("X-Prowl-Salt-Id", state.salt_id),
                       ("X-Prowl-Sample-Decision", sampled))
            o = svc.origin
            default = _DEFAULT_PORT.get(o[0]) == o[2]
            prefix = f"{o[0]}://{o[1]}{'' if default else f':{o[2]}'}{svc.base}"
            self.counts["routed"] += 1
            return Route(url, headers, svc, prefix)
        return None

    def prefetch(self, settings: Any) -> None:
        """Start fetching the catalog and salt now (in the background), so that calls made
        right after start-up can already be routed. Does nothing when routing is off."""
        if settings.gateway_url and settings.agent_key:
            key = (settings.api_url, settings.agent_key, settings.gateway_url)
            state = self._state
            if state is None or state.key != key or time.time() >= state.refresh_at:
                self._fetch_soon(settings, key, time.time())

    def status(self) -> Dict[str, Any]:
        """What the router knows: ``ready`` (catalog and a usable salt are in), the
        ``agent_id`` and ``salt_id`` in use, how many ``services`` it routes, and ``counts``
        (``routed``, ``direct``, ``fetches``, ``fetch_failures``, ``refused``)."""
        state = self._state
        ok = state is not None and time.time() < state.usable_until
        return {
            "ready": ok,
            "agent_id": state.agent_id if state else None,
            "salt_id": state.salt_id if state else None,
            "services": sum(len(v) for v in state.by_origin.values()) if state else 0,
            "counts": dict(self.counts),
        }

    def vendor_location(self, route: Route, location: str, gateway: str) -> str:
        """A gateway redirect (``Location: /{slug}/…``) as the vendor URL it stands for, so
        the client follows it to the vendor and this router routes it again."""
        gw = urlsplit(gateway)
        path = location
        if location.startswith(("http://", "https://")):
            loc = urlsplit(location)
            if (loc.scheme, loc.netloc) != (gw.scheme, gw.netloc):
                return location
            path = location[len(f"{loc.scheme}://{loc.netloc}"):]
        prefix = f"{gw.path.rstrip('/')}/{route.service.slug}"
        if path != prefix and not path.startswith((prefix + "/", prefix + "?")):
            return location
        return route.vendor_prefix + (path[len(prefix):] or "/")

    def refused(self, reason: str, settings: Any) -> None:
        """The gateway refused a routed call: forget what was fetched, and fetch again now
        when the salt or the catalog changed (its rules included), after a minute otherwise
        (a limit, a missing credential)."""
        self.counts["refused"] += 1
        stale = reason in ("expired_salt", "unknown_salt", "wrong_decision", "not_sampled", "not_allowed", "bad_path")
        with self._lock:
            self._state = None
            self._retry_at = 0.0 if stale else time.time() + RETRY_S
        if stale:
            self.prefetch(settings)

    def _fetch_soon(self, settings: Any, key: Tuple[str, str, str], now: float) -> None:
        with self._lock:
            if self._fetching or now < self._retry_at:
                return
            self._fetching = True
        threading.Thread(target=self._fetch, args=(settings, key), name="prowl-gateway-fetch", daemon=True).start()

    def _fetch(self, settings: Any, key: Tuple[str, str, str]) -> None:
        self.counts["fetches"] += 1
        try:
            services = _parse_services(_get_json(settings.api_url, "/v1/services", None))
            salt = _get_json(settings.api_url, "/v1/sampling/salt", settings.agent_key)
            now = time.time()
            state = _State(
                key=key,
                by_origin=services,
                agent_id=str(salt["agent_id"]),
                salt_id=str(salt["salt_id"]),
                salt=str(salt["salt"]),
                refresh_at=min(_iso_to_epoch(salt["valid_until"]), now + CATALOG_TTL_S),
                usable_until=_iso_to_epoch(salt.get("accepted_until") or salt["valid_until"]),
                decisions={},
            )
            with self._lock:
                self._state = state
                self._retry_at = 0.0
        except Exception:  # never into the caller: calls simply go direct meanwhile
            self.counts["fetch_failures"] += 1
            with self._lock:
                self._retry_at = time.time() + RETRY_S
        finally:
            with self._lock:
                self._fetching = False

    def reset(self) -> None:
        """Forget everything (tests, and a forked child, whose fetch thread did not survive)."""
        with self._lock:
            self._state = None
            self._fetching = False
            self._retry_at = 0.0
        for k in self.counts:
            self.counts[k] = 0


#: The one router of this process.
ROUTER = Router()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=ROUTER.reset)
