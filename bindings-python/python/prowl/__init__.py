"""Prowl: report what your agent's outbound calls did, on Lowdown's Rust core.

Three lines make an httpx (or httpx2) client report (host, method, status, latency and
size, never paths, queries, headers or bodies) to a Lowdown API::

    import httpx, prowl
    client = prowl.observe(httpx.Client())
    client.get("https://api.stripe.com/v1/charges")

See the package README for the LangChain handler (:mod:`prowl.langchain`) and the
Claude Code hook (``prowl-claude-hook``).
"""

from __future__ import annotations

# Importing prowl loads almost nothing: the sender, the settings and the native core load on
# first use, so the hook commands (prowl-claude-hook, prowl-provider-hook) start fast. Not even
# `typing` (7 ms): type checkers read the TYPE_CHECKING block, annotations are strings.
TYPE_CHECKING = False
if not TYPE_CHECKING:

    def overload(f):  # what typing.overload does at run time, less the import
        return f

else:  # last, so that linters take `overload` to be typing's
    from typing import Any, Dict, Optional, TypeVar, Union, overload

    import httpx

    from . import config as _config
    from ._native import LowdownError

    _C = TypeVar("_C", "httpx.Client", "httpx.AsyncClient")

__all__ = ["LowdownError", "observe", "unobserve", "is_observed", "flush", "stats", "configure", "__version__"]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("prowl")
    except Exception:
        return "0.0.0"


def __getattr__(name: str) -> Any:
    """``__version__`` (the installed package version; records say ``prowl/<version>``, see
    ``_contract.PROWL_RECORDER``) and ``LowdownError``, loaded on first use (PEP 562)."""
    if name == "__version__":
        value: Any = _version()
    elif name == "LowdownError":
        from ._native import LowdownError as value
    else:
        raise AttributeError(f"module 'prowl' has no attribute {name!r}")
    globals()[name] = value
    return value

@overload
def observe(client: _C) -> _C: ...
@overload
def observe(client: None = None) -> None: ...


def observe(client: Optional[_C] = None) -> Optional[_C]:
    """Report every request ``client`` makes; returns the same client.

    ``client`` is an ``httpx.Client`` or ``httpx.AsyncClient``, or their ``httpx2`` twins.
    With no argument, every such client created afterwards is observed. Idempotent. With
    ``PROWL_TELEMETRY=0`` nothing is wrapped. With ``PROWL_AGENT_KEY`` and
    ``PROWL_GATEWAY_URL`` set, sampled calls go through the sampling gateway
    (:mod:`prowl.gateway`). Raises ``TypeError`` for anything else.
    """
    from . import httpx_observe

    if client is None:
        httpx_observe.observe_new_clients()
        return None
    return httpx_observe.observe_client(client)


def unobserve(client: Optional[Union["httpx.Client", "httpx.AsyncClient"]] = None) -> None:
    """Stop reporting ``client``'s requests; with no argument, undo ``observe()``'s
    instrumentation of new clients (clients already observed stay observed)."""
    from . import httpx_observe

    if client is None:
        httpx_observe.stop_observing_new_clients()
    else:
        httpx_observe.unobserve_client(client)


def is_observed(client: Union["httpx.Client", "httpx.AsyncClient"]) -> bool:
    """Whether ``client``'s requests are being reported."""
    from . import httpx_observe

    return httpx_observe.is_observed(client)


def flush(timeout: Optional[float] = None) -> bool:
    """Send everything queued now, waiting at most ``timeout`` seconds (default
    :data:`prowl.config.FLUSH_TIMEOUT_S`); True when the queue is empty. Never raises for
    network trouble. Called for you at exit."""
    from . import config
    from .sender import SENDER

    return SENDER.flush(config.FLUSH_TIMEOUT_S if timeout is None else timeout)


def stats() -> Dict[str, int]:
    """Counters since start (or fork): ``queued``, ``sent``, ``dropped`` (queue full),
    ``failed`` (no answer, an error status, a 2xx that is not the API's answer, or refused
    as invalid), ``throttled`` (over the server's quota: a 429 or its ``rate_limited``
    count; sending pauses for the server's ``Retry-After``; the core's reading of the
    answer, as ``observe(fetch)`` has it), ``blocked`` (host refused by the core's privacy
    filter or the allowlist), ``invalid`` (record refused by the core's validation),
    ``no_node_id`` (record sent without a node id: ``LOWDOWN_HOME`` could not be written),
    and ``pending`` (still queued)."""
    from .sender import SENDER

    out = dict(SENDER.counts)
    out["pending"] = SENDER.pending()
    return out


def configure(
    *,
    api_url: Optional[str] = None,
    agent_key: Optional[str] = None,
    allowlist: Optional[str] = None,
    allow_private: Optional[Union[bool, str]] = None,
    enabled: Optional[bool] = None,
    source: Optional[str] = None,
    gateway_url: Optional[str] = None,
    gateway_services: Optional[str] = None,
    from_env: bool = True,
) -> _config.Settings:
    """Set what the environment would otherwise set; arguments left ``None`` keep their
    value. With ``from_env=True`` (default) the environment is read again first.
    ``gateway_url`` is the sampling gateway (``PROWL_GATEWAY_URL``); ``gateway_services``
    limits routing to these catalog services (``PROWL_GATEWAY_SERVICES``: slugs or service
    ids, comma-separated). ``source`` is
    ``organic`` (default), ``seeded`` or ``synthetic``. Returns the settings now in force.
    Raises ``ValueError`` for an unknown ``source``."""
    from . import config as _config

    base = _config.Settings.from_env() if from_env else _config.current()
    settings = base.with_overrides(
        api_url=api_url,
        agent_key=agent_key,
        allowlist=allowlist,
        allow_private=allow_private,
        enabled=enabled,
        source=source,
        gateway_url=gateway_url,
        gateway_services=gateway_services,
    )
    _config.set_current(settings)
    return settings
