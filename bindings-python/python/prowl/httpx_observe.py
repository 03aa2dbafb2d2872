"""``prowl.observe(client)``: report what an httpx or httpx2 client's calls did (SPEC §4, §7).

httpx2 (what the MCP Python SDK 2.x calls with) has httpx's API under another name, so one
implementation serves both: the wrapper classes are built once per library module from its
own base classes (:func:`_flavour`), and a client is matched to the library it came from.

The client's transport and every mounted transport (proxies included) are wrapped. A
request is timed from the moment it is handed to the transport to the end of its body
(or to the body's close, when it is never read). Transport errors (connect errors,
timeouts, broken bodies) are reported with ``status=None`` and re-raised unchanged. The
caller's side of a report is an append to the sender's bounded queue; the sender thread
hands each item to the core (host extraction, privacy filter, allowlist) before batching,
so the caller never waits on the core or the network for telemetry.

With ``PROWL_AGENT_KEY`` and ``PROWL_GATEWAY_URL`` set, a call the core samples for the
sampling gateway goes there instead of to the vendor (:mod:`prowl.gateway`); it is still
reported under the vendor's host.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from types import ModuleType, SimpleNamespace
from typing import Any, AsyncIterator, Dict, Iterator, Optional, Tuple, TypeVar

from . import _contract, config
from .gateway import ROUTER, Route
from .sender import SENDER

_perf = time.perf_counter

#: The libraries whose clients ``observe`` accepts, by module name.
LIBRARIES = ("httpx", "httpx2")
_REFUSAL_STATUSES = frozenset(_contract.REFUSAL_STATUSES)


def _report(request: Any, status: Optional[int], t0: float, t1: float, nbytes: Optional[int]) -> None:
    """Queue one exchange for the sender (the core filters it there). Never raises."""
    try:
        settings = config.current()
        if settings.enabled:
            SENDER.submit_observation(request.url, request.method, status, (t1 - t0) * 1000.0, nbytes, settings)
    except Exception:  # telemetry must never break the caller's request
        pass


def _route(request: Any) -> Tuple[Optional[Route], Any]:
    """The gateway route for ``request`` (or None) and the settings it was decided under."""
    settings = config.current()
    if not settings.gateway_url:
        return None, settings
    try:
        names = [k for k, _ in request.headers.multi_items()]
        return ROUTER.route(request.method, str(request.url), names, settings), settings
    except Exception:  # routing must never break the caller's request: send it direct
        return None, settings


def _gateway_refused(response: Any, settings: Any) -> bool:
    """Whether ``response`` (its body already read) is the gateway refusing the call rather
    than the vendor answering it; the core's router then starts over."""
    try:
        reason = json.loads(response.content).get("reason")
    except Exception:
        reason = None
    return ROUTER.refused(response.status_code, reason if isinstance(reason, str) else None, settings)


def _flavour(lib: ModuleType) -> SimpleNamespace:
    """The wrapper classes for one library (``httpx`` or ``httpx2``)."""
    TransportError = lib.TransportError

    def routed_request(request: Any, route: Route) -> Any:
        # The same method and body stream, to the gateway, with only the headers it forwards
        # (the core decides: never the user's Authorization or Cookie for an inject service).
        url = lib.URL(route.url)
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() in route.keep]
        headers = [("Host", url.netloc.decode("ascii"))] + headers + list(route.headers)
        return lib.Request(request.method, url, headers=headers, stream=request.stream, extensions=request.extensions)

    def to_vendor(response: Any, route: Route, settings: Any) -> Any:
        # A redirect the gateway passed on points into the gateway: point it at the vendor,
        # so the client follows it there and the next call is routed afresh.
        location = response.headers.get("location")
        if 300 <= response.status_code < 400 and location:
            response.headers["location"] = ROUTER.vendor_location(route, location)
        return response

    class ObservedStream(lib.SyncByteStream):  # type: ignore[misc, name-defined]  # lib is httpx or httpx2, a module chosen at run time
        """A response body that counts its bytes and reports the exchange once, on close."""

        __slots__ = ("_inner", "_request", "_status", "_t0", "_t_end", "_nbytes", "_reported")

        def __init__(self, inner: Any, request: Any, status: int, t0: float) -> None:
            self._inner = inner
            self._request = request
            self._status: Optional[int] = status
            self._t0 = t0
            self._t_end: Optional[float] = None
            self._nbytes = 0
            self._reported = False

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._inner:
                    self._nbytes += len(chunk)
                    yield chunk
            except TransportError:
                self._status = None
                raise
            self._t_end = _perf()

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                if not self._reported:
                    self._reported = True
                    _report(self._request, self._status, self._t0, self._t_end or _perf(), self._nbytes)

    class ObservedAsyncStream(lib.AsyncByteStream):  # type: ignore[misc, name-defined]  # as ObservedStream
        """The async twin of ``ObservedStream``.

        An iterator class rather than an async generator: asyncio registers every async
        generator with its loop (a weak set), which cost more than the rest of the wrapper.
        """

        __slots__ = ("_inner", "_it", "_request", "_status", "_t0", "_t_end", "_nbytes", "_reported")

        def __init__(self, inner: Any, request: Any, status: int, t0: float) -> None:
            self._inner = inner
            self._it: Optional[AsyncIterator[bytes]] = None
            self._request = request
            self._status: Optional[int] = status
            self._t0 = t0
            self._t_end: Optional[float] = None
            self._nbytes = 0
            self._reported = False

        def __aiter__(self) -> "ObservedAsyncStream":
            self._it = self._inner.__aiter__()
            return self

        async def __anext__(self) -> bytes:
            try:
                chunk = await self._it.__anext__()  # type: ignore[union-attr]  # set by __aiter__, which async for calls first
            except StopAsyncIteration:
                self._t_end = _perf()
                raise
            except TransportError:
                self._status = None
                raise
            self._nbytes += len(chunk)
            return chunk

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                if not self._reported:
                    self._reported = True
                    _report(self._request, self._status, self._t0, self._t_end or _perf(), self._nbytes)

    def observe_body(response: Any, request: Any, t0: float, stream_cls: Any) -> Any:
        """Report now if the body is already read, else when ``stream_cls`` sees it end."""
        if response.is_closed:  # an in-memory body already read (e.g. MockTransport)
            _report(request, response.status_code, t0, _perf(), len(response.content))
        else:
            response.stream = stream_cls(response.stream, request, response.status_code, t0)
        return response

    class ObservedTransport(lib.BaseTransport):  # type: ignore[misc, name-defined]  # as ObservedStream
        """Wraps a sync transport; ``inner`` is the original, restored by ``unobserve``."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def handle_request(self, request: Any) -> Any:
            t0 = _perf()
            try:
                route, settings = _route(request)
                if route is None:
                    response = self.inner.handle_request(request)
                else:
                    response = self._via_gateway(request, route, settings)
            except TransportError:
                _report(request, None, t0, _perf(), None)
                raise
            return observe_body(response, request, t0, ObservedStream)

        def _via_gateway(self, request: Any, route: Route, settings: Any) -> Any:
            response = self.inner.handle_request(routed_request(request, route))
            if response.status_code in _REFUSAL_STATUSES:
                response.read()
                if _gateway_refused(response, settings):
                    if hasattr(request, "_content"):  # a body that can be sent again: go direct
                        response.close()
                        return self.inner.handle_request(request)
            return to_vendor(response, route, settings)

        def close(self) -> None:
            self.inner.close()

        def __enter__(self) -> "ObservedTransport":
            self.inner.__enter__()
            return self

        def __exit__(self, *args: Any) -> None:
            self.inner.__exit__(*args)

    class AsyncObservedTransport(lib.AsyncBaseTransport):  # type: ignore[misc, name-defined]  # as ObservedStream
        """Wraps an async transport; ``inner`` is the original, restored by ``unobserve``."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            t0 = _perf()
            try:
                route, settings = _route(request)
                if route is None:
                    response = await self.inner.handle_async_request(request)
                else:
                    response = await self._via_gateway(request, route, settings)
            except TransportError:
                _report(request, None, t0, _perf(), None)
                raise
            return observe_body(response, request, t0, ObservedAsyncStream)

        async def _via_gateway(self, request: Any, route: Route, settings: Any) -> Any:
            response = await self.inner.handle_async_request(routed_request(request, route))
            if response.status_code in _REFUSAL_STATUSES:
                await response.aread()
                if _gateway_refused(response, settings):
                    if hasattr(request, "_content"):
                        await response.aclose()
                        return await self.inner.handle_async_request(request)
            return to_vendor(response, route, settings)

        async def aclose(self) -> None:
            await self.inner.aclose()

        async def __aenter__(self) -> "AsyncObservedTransport":
            await self.inner.__aenter__()
            return self

        async def __aexit__(self, *args: Any) -> None:
            await self.inner.__aexit__(*args)

    return SimpleNamespace(
        lib=lib,
        sync=ObservedTransport,
        async_=AsyncObservedTransport,
        wrapped=(ObservedTransport, AsyncObservedTransport),
    )


_flavours: Dict[str, SimpleNamespace] = {}


def _flavour_for(module_name: str) -> SimpleNamespace:
    f = _flavours.get(module_name)
    if f is None:
        f = _flavours[module_name] = _flavour(importlib.import_module(module_name))
    return f


def _kind(client: object) -> Tuple[SimpleNamespace, bool]:
    """The library flavour of ``client`` and whether it is async; TypeError otherwise."""
    for name in LIBRARIES:
        lib = sys.modules.get(name)
        if lib is None:
            continue  # never imported, so this client cannot be one of its
        if isinstance(client, lib.AsyncClient):
            return _flavour_for(lib.__name__), True
        if isinstance(client, lib.Client):
            return _flavour_for(lib.__name__), False
    raise TypeError(
        "prowl.observe expects an httpx.Client or httpx.AsyncClient (or their httpx2 twins), "
        f"got {type(client).__name__}"
    )


def _wrap(f: SimpleNamespace, transport: Any, is_async: bool) -> Any:
    if transport is None or isinstance(transport, f.wrapped):
        return transport
    return f.async_(transport) if is_async else f.sync(transport)


def _unwrap(f: SimpleNamespace, transport: Any) -> Any:
    while isinstance(transport, f.wrapped):
        transport = transport.inner
    return transport


_Client = TypeVar("_Client")


def observe_client(client: _Client) -> _Client:
    """Wrap ``client``'s transport and every mounted transport. Idempotent; returns ``client``."""
    f, is_async = _kind(client)
    if not config.current().enabled:
        return client
    c: Any = client  # an httpx or httpx2 client, whose transports are private attributes
    c._transport = _wrap(f, c._transport, is_async)
    mounts = c._mounts
    for pattern, transport in list(mounts.items()):
        mounts[pattern] = _wrap(f, transport, is_async)
    return client


def unobserve_client(client: Any) -> Any:
    """Restore the transports ``observe`` wrapped. Safe on a client never observed."""
    f, _ = _kind(client)
    client._transport = _unwrap(f, client._transport)
    mounts = client._mounts
    for pattern, transport in list(mounts.items()):
        mounts[pattern] = _unwrap(f, transport)
    return client


def is_observed(client: Any) -> bool:
    """Whether ``client``'s own transport is wrapped."""
    f, _ = _kind(client)
    return isinstance(client._transport, f.wrapped)


_original_inits: Dict[type, Any] = {}


def _patched(cls: type) -> Any:
    original = cls.__init__  # type: ignore[misc]  # reading __init__ off a class is what patching it needs

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        observe_client(self)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]  # functools.wraps's attribute, without its import
    __init__.__doc__ = original.__doc__
    return __init__


def observe_new_clients() -> None:
    """Make every httpx and httpx2 ``Client`` and ``AsyncClient`` created from now on
    observed (each library that is installed). Raises ImportError when neither is."""
    libs = []
    for name in LIBRARIES:
        try:
            libs.append(importlib.import_module(name))
        except ImportError:
            continue
    if not libs:
        raise ImportError("prowl.observe() needs httpx or httpx2 installed")
    for lib in libs:
        for cls in (lib.Client, lib.AsyncClient):
            if cls not in _original_inits:
                _original_inits[cls] = cls.__init__
                cls.__init__ = _patched(cls)


def stop_observing_new_clients() -> None:
    """Undo :func:`observe_new_clients`; clients already created stay as they are."""
    for cls, original in list(_original_inits.items()):
        cls.__init__ = original  # type: ignore[misc]  # undoing the patch of observe_new_clients
        del _original_inits[cls]
