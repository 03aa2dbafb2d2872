"""``prowl.observe(client)``: report what an httpx client's calls did (SPEC §4, §7).

The client's transport and every mounted transport (proxies included) are wrapped. A
request is timed from the moment it is handed to the transport to the end of its body
(or to the body's close, when it is never read). Transport errors (connect errors,
timeouts, broken bodies) are reported with ``status=None`` and re-raised unchanged. The
caller's side of a report is an append to the sender's bounded queue; the sender thread
hands each item to the core (host extraction, privacy filter, allowlist) before batching,
so the caller never waits on the core or the network for telemetry.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Dict, Iterator, Optional, TypeVar, Union

import httpx

from . import config
from .sender import SENDER

_perf = time.perf_counter

AnyClient = TypeVar("AnyClient", httpx.Client, httpx.AsyncClient)


def _report(request: httpx.Request, status: Optional[int], t0: float, t1: float, nbytes: Optional[int]) -> None:
    """Queue one exchange for the sender (the core filters it there). Never raises."""
    try:
        settings = config.current()
        if settings.enabled:
            SENDER.submit_observation(request.url, request.method, status, (t1 - t0) * 1000.0, nbytes, settings)
    except Exception:  # telemetry must never break the caller's request
        pass


class _ObservedStream(httpx.SyncByteStream):
    """A response body that counts its bytes and reports the exchange once, on close."""

    __slots__ = ("_inner", "_request", "_status", "_t0", "_t_end", "_nbytes", "_reported")

    def __init__(self, inner: httpx.SyncByteStream, request: httpx.Request, status: int, t0: float) -> None:
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
        except httpx.TransportError:
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


class _ObservedAsyncStream(httpx.AsyncByteStream):
    """The async twin of :class:`_ObservedStream`.

    An iterator class rather than an async generator: asyncio registers every async
    generator with its loop (a weak set), which cost more than the rest of the wrapper.
    """

    __slots__ = ("_inner", "_it", "_request", "_status", "_t0", "_t_end", "_nbytes", "_reported")

    def __init__(self, inner: httpx.AsyncByteStream, request: httpx.Request, status: int, t0: float) -> None:
        self._inner = inner
        self._it: Optional[AsyncIterator[bytes]] = None
        self._request = request
        self._status: Optional[int] = status
        self._t0 = t0
        self._t_end: Optional[float] = None
        self._nbytes = 0
        self._reported = False

    def __aiter__(self) -> "_ObservedAsyncStream":
        self._it = self._inner.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._it.__anext__()  # type: ignore[union-attr]
        except StopAsyncIteration:
            self._t_end = _perf()
            raise
        except httpx.TransportError:
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


def _observe_body(response: httpx.Response, request: httpx.Request, t0: float, stream_cls: Any) -> httpx.Response:
    """Report now if httpx already read the body, else when ``stream_cls`` sees it end."""
    if response.is_closed:  # an in-memory body httpx already read (e.g. MockTransport)
        _report(request, response.status_code, t0, _perf(), len(response.content))
    else:
        response.stream = stream_cls(response.stream, request, response.status_code, t0)
    return response


class ObservedTransport(httpx.BaseTransport):
    """Wraps a sync transport; ``inner`` is the original, restored by ``unobserve``."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        t0 = _perf()
        try:
            response = self.inner.handle_request(request)
        except httpx.TransportError:
            _report(request, None, t0, _perf(), None)
            raise
        return _observe_body(response, request, t0, _ObservedStream)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> "ObservedTransport":
        self.inner.__enter__()
        return self

    def __exit__(self, *args: Any) -> None:
        self.inner.__exit__(*args)


class AsyncObservedTransport(httpx.AsyncBaseTransport):
    """Wraps an async transport; ``inner`` is the original, restored by ``unobserve``."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        t0 = _perf()
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.TransportError:
            _report(request, None, t0, _perf(), None)
            raise
        return _observe_body(response, request, t0, _ObservedAsyncStream)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> "AsyncObservedTransport":
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.inner.__aexit__(*args)


_Wrapped = (ObservedTransport, AsyncObservedTransport)


def _wrap(transport: Any, is_async: bool) -> Any:
    if transport is None or isinstance(transport, _Wrapped):
        return transport
    return AsyncObservedTransport(transport) if is_async else ObservedTransport(transport)


def _unwrap(transport: Any) -> Any:
    while isinstance(transport, _Wrapped):
        transport = transport.inner
    return transport


def _check(client: object) -> bool:
    if isinstance(client, httpx.AsyncClient):
        return True
    if isinstance(client, httpx.Client):
        return False
    raise TypeError(f"prowl.observe expects an httpx.Client or httpx.AsyncClient, got {type(client).__name__}")


def observe_client(client: AnyClient) -> AnyClient:
    """Wrap ``client``'s transport and every mounted transport. Idempotent; returns ``client``."""
    is_async = _check(client)
    if not config.current().enabled:
        return client
    client._transport = _wrap(client._transport, is_async)
    mounts = client._mounts
    for pattern, transport in list(mounts.items()):
        mounts[pattern] = _wrap(transport, is_async)
    return client


def unobserve_client(client: Union[httpx.Client, httpx.AsyncClient]) -> Union[httpx.Client, httpx.AsyncClient]:
    """Restore the transports ``observe`` wrapped. Safe on a client never observed."""
    _check(client)
    client._transport = _unwrap(client._transport)
    mounts = client._mounts
    for pattern, transport in list(mounts.items()):
        mounts[pattern] = _unwrap(transport)
    return client


def is_observed(client: Union[httpx.Client, httpx.AsyncClient]) -> bool:
    """Whether ``client``'s own transport is wrapped."""
    _check(client)
    return isinstance(client._transport, _Wrapped)


_original_inits: Dict[type, Any] = {}


def _patched(cls: type) -> Any:
    original = cls.__init__  # type: ignore[misc]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        observe_client(self)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    __init__.__doc__ = original.__doc__
    return __init__


def observe_new_clients() -> None:
    """Make every ``httpx.Client`` and ``httpx.AsyncClient`` created from now on observed."""
    for cls in (httpx.Client, httpx.AsyncClient):
        if cls not in _original_inits:
            _original_inits[cls] = cls.__init__
            cls.__init__ = _patched(cls)  # type: ignore[method-assign]


def stop_observing_new_clients() -> None:
    """Undo :func:`observe_new_clients`; clients already created stay as they are."""
    for cls, original in list(_original_inits.items()):
        cls.__init__ = original  # type: ignore[misc]
        del _original_inits[cls]
