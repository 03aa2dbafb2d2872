"""The one door to the Rust core (``prowl._native``).

Every decision about what may leave the machine (host extraction, the private-host block,
the allowlist, status classes, record validation) is made by the core; this module only
adapts names and argument shapes, so a rename in the binding is a one-line fix here.
"""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional

from . import _native

#: Default API base URL (SPEC §2), the core's constant.
DEFAULT_API_URL: str = _native.API_URL
#: Environment variable naming the API base URL (``LOWDOWN_API_URL``).
API_URL_ENV: str = _native.API_URL_ENV
#: Environment variable the Python clients read first (``PROWL_API_URL``).
PROWL_API_URL_ENV: str = _native.PROWL_API_URL_ENV
#: Header carrying the agent key (``PROWL_AGENT_KEY``) to the API and the gateway.
AGENT_KEY_HEADER: str = _native.AGENT_KEY_HEADER

#: Where data came from (SPEC §3.2).
Source = Literal["organic", "seeded", "synthetic"]

#: The core's host policy type (privacy block plus allowlist).
HostPolicy = _native.HostPolicy

#: The core's error type for invalid records and malformed input.
CoreError = _native.LowdownError


def host_policy(allowlist: Optional[str], allow_private: Optional[str]) -> _native.HostPolicy:
    """The core's host policy from the raw ``PROWL_TELEMETRY_ALLOWLIST`` and
    ``PROWL_TELEMETRY_ALLOW_PRIVATE`` values (``None`` when unset); the core parses both."""
    return _native.HostPolicy(allowlist, allow_private)


def prepare_observation(
    url: str,
    method: str,
    status: Optional[int],
    latency_ms: float,
    response_bytes: Optional[int],
    source: Source,
    policy: _native.HostPolicy,
) -> Optional[Dict[str, Any]]:
    """The observation to send for one HTTP exchange, or ``None`` when the host must not
    be reported (private, not allowlisted, or no host at all)."""
    return _native.prepare_observation(url, method, status, latency_ms, response_bytes, source, policy)


def validate_record(record: Dict[str, Any]) -> Dict[str, Any]:
    """The interaction record as the API will accept it; raises :data:`CoreError` naming
    the offending field otherwise. (The core's batch check, given one record: it answers
    about that record alone, with the field's bare name as the error path.)"""
    return _native.validate_records(record)[0]


def validate_node_id(node_id: str) -> None:
    """Raises :data:`CoreError` (``invalid_format``) unless ``node_id`` is a node id the
    API accepts (``^ld_[A-Za-z0-9_-]{1,64}$``)."""
    _native.validate_node_id(node_id)
