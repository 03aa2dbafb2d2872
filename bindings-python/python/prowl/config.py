"""Settings read from the environment (SPEC §2, §4), overridable with :func:`prowl.configure`.

Read once and cached: the hot path of an observed request only reads an attribute.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Mapping, Optional

from . import _contract, _core, _native

#: Default Lowdown API base URL when neither ``PROWL_API_URL`` nor ``LOWDOWN_API_URL`` is set.
DEFAULT_API_URL = _core.DEFAULT_API_URL

#: Seconds a single POST may take before it is abandoned (SPEC §3, §4; the core's, as every host).
SEND_TIMEOUT_S = _contract.SEND_TIMEOUT_MS / 1000

#: Seconds an explicit :func:`prowl.flush` waits by default.
FLUSH_TIMEOUT_S = 2.0

#: Seconds the exit waits for the API at most (SPEC §3; the core's); undelivered records are spooled.
EXIT_BUDGET_S = _contract.EXIT_BUDGET_MS / 1000

_SOURCES = _contract.SOURCE_VALUES


@dataclass(frozen=True)
class Settings:
    """Everything the telemetry clients need to know, resolved once.

    ``policy`` is the core's host policy (privacy block plus allowlist), built by the core
    from the raw ``allowlist`` and ``allow_private`` values; it alone decides which hosts
    are reported.
    """

    api_url: str
    agent_key: Optional[str]
    enabled: bool
    allowlist: Optional[str]
    allow_private: Optional[str]
    source: _core.Source
    policy: _core.HostPolicy
    #: ``PROWL_GATEWAY_URL``: with an agent key, sampled calls go through it (prowl.gateway).
    gateway_url: Optional[str] = None
    #: ``PROWL_GATEWAY_SERVICES``: when set, only these catalog services (slugs or service
    #: ids, comma-separated) are routed; unset, every one whose rules match.
    gateway_services: Optional[str] = None
    #: No deployment configured: when nothing answers at ``api_url``, the sender may start
    #: the local node of ``home`` (the core's ``destination``; ``LOWDOWN_AUTOSTART=0`` says no).
    may_start: bool = False
    #: The core's settings this was read from (``settings_from_env``), which the sender
    #: gives the core again to find the local node; ``None`` when built in code.
    host: Optional[Dict[str, Any]] = field(default=None, compare=False, hash=False)

    @property
    def home(self) -> Optional[str]:
        """``LOWDOWN_HOME``, as the core resolved it."""
        return None if self.host is None else str(Path(self.host["home"]))

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> "Settings":
        """Read ``PROWL_API_URL`` (then ``LOWDOWN_API_URL``, then ``api-url`` stored in
        ``LOWDOWN_HOME/config.json``, then the running local node), ``PROWL_AGENT_KEY``,
        ``PROWL_TELEMETRY``, ``PROWL_TELEMETRY_ALLOWLIST``, ``PROWL_TELEMETRY_ALLOW_PRIVATE``,
        ``PROWL_GATEWAY_URL`` and ``PROWL_GATEWAY_SERVICES``."""
        env = os.environ if env is None else env
        # The API address and the off switch are the core's settings, as in every host: the
        # environment's URL, else the stored one (lowdown-proxy config set api-url), else the
        # local node where it announces itself, else the default.
        core = _native.settings_from_env(dict(env), str(Path.home()), "telemetry")
        home = Path(core["home"])
        where = _native.destination(
            core, _read(home / _contract.CONFIG_FILE), _read(home / _contract.LOCAL_NODE_FILE)
        )
        if where.get("problem"):
            # Records are then kept in the spool (nothing answers an unusable URL), never sent elsewhere.
            logging.getLogger("prowl").warning("prowl: %s; records wait in the spool", where["problem"])
        agent_key = env.get("PROWL_AGENT_KEY") or None
        allowlist = env.get("PROWL_TELEMETRY_ALLOWLIST") or None
        allow_private = env.get("PROWL_TELEMETRY_ALLOW_PRIVATE")
        return cls(
            api_url=where["url"],
            agent_key=agent_key,
            enabled=core["telemetry"],
            allowlist=allowlist,
            allow_private=allow_private,
            source="organic",
            policy=_core.host_policy(allowlist, allow_private),
            gateway_url=(env.get("PROWL_GATEWAY_URL") or "").rstrip("/") or None,
            gateway_services=env.get("PROWL_GATEWAY_SERVICES"),
            may_start=where["may_start"],
            host=core,
        )

    def with_overrides(self, **overrides: object) -> "Settings":
        """A copy with the given fields replaced (``None`` leaves a field as it is).
        ``allow_private`` may be a bool or the raw environment value."""
        changes = {k: v for k, v in overrides.items() if v is not None}
        if isinstance(changes.get("allow_private"), bool):
            changes["allow_private"] = "1" if changes["allow_private"] else "0"
        if "source" in changes and changes["source"] not in _SOURCES:
            raise ValueError(f"source must be one of {', '.join(_SOURCES)}, got {changes['source']!r}")
        for url in ("api_url", "gateway_url"):
            if url in changes:
                changes[url] = str(changes[url]).rstrip("/")
        if "api_url" in changes:
            changes.setdefault("may_start", False)  # a URL given in code is never replaced
        new = replace(self, **changes)  # type: ignore[arg-type]  # each value was checked or converted above
        if "allowlist" in changes or "allow_private" in changes:
            new = replace(new, policy=_core.host_policy(new.allowlist, new.allow_private))
        return new


def local_node_url(settings: Settings) -> Optional[str]:
    """The URL the local node of ``settings.home`` announces now, when ``settings`` may use
    one (the core's ``destination``), else ``None``."""
    if not settings.may_start or settings.host is None:
        return None
    home = Path(settings.host["home"])
    where = _native.destination(settings.host, None, _read(home / _contract.LOCAL_NODE_FILE))
    return str(where["url"]) if where["via"] == "local_node" else None


def _read(path: Path) -> Optional[str]:
    """A file's text, or ``None`` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


_current: Optional[Settings] = None


def current() -> Settings:
    """The settings in force, read from the environment on first use."""
    global _current
    s = _current
    if s is None:
        s = _current = Settings.from_env()
    return s


def set_current(settings: Settings) -> None:
    """Replace the settings in force (used by :func:`prowl.configure`)."""
    global _current
    _current = settings
