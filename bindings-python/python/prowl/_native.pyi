"""Type stubs of ``prowl._native``, the pyo3 binding of lowdown-core (hand-written; the
binding's tests run ``mypy.stubtest`` against the built module, which checks every name,
``__all__``, each signature's parameters and defaults, and which classes are final).

The module exports what the ``prowl`` package uses, nothing more (see the package README,
"The native module"). Results are plain dicts and lists with the core's snake_case keys.
Every core error is raised as :class:`LowdownError` with a stable ``.type``.
"""

from ipaddress import IPv4Address, IPv6Address
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

from typing_extensions import Self, final

__all__ = [
    "LowdownError", "API_URL", "API_URL_ENV", "PROWL_API_URL_ENV", "HOME_ENV", "AGENT_KEY_HEADER",
    "HostPolicy", "TelemetryBudget", "prepare_observation", "Router", "validate_records", "validate_node_id",
    "SpoolClaim", "SpoolWrite", "NodeIdentityLoad", "delivery", "settings_from_env", "destination", "Probe", "AnswerReader", "probe_url_host",
    "check_probe_address", "agent_verdict", "check_directive",
]

API_URL: str
"""Default Lowdown API base URL (``LOWDOWN_API_URL``)."""
API_URL_ENV: str
"""Environment variable naming the API base URL."""
PROWL_API_URL_ENV: str
"""Environment variable the Python and WASM clients read before ``LOWDOWN_API_URL``."""
HOME_ENV: str
"""Environment variable naming the state directory."""
AGENT_KEY_HEADER: str
"""Header carrying an agent key to the API and the gateway."""

_Source = Literal["organic", "seeded", "synthetic"]
_Json = Dict[str, Any]

class LowdownError(ValueError):
    """A core operation refused its input.

    ``type`` (alias ``kind``) is the stable error kind, e.g. ``"missing_field"``,
    ``"invalid_format"``, ``"invalid_argument"``; ``details`` holds the error's other fields
    (for validation errors ``path``, ``field``, ``index``, ``message``). The message never
    quotes the rejected value.
    """

    type: str
    kind: str
    details: Optional[Dict[str, Any]]

@final
class HostPolicy:
    """The telemetry reporting policy from the raw ``PROWL_TELEMETRY_ALLOWLIST`` and
    ``PROWL_TELEMETRY_ALLOW_PRIVATE`` values (``None`` when unset). Opaque: it is handed to
    :func:`prepare_observation`."""

    def __new__(cls, allowlist: Optional[str] = None, allow_private: Optional[str] = None) -> Self:
        """Comma-separated allowlist (hosts with their subdomains); ``1``/``true``/``yes``/``on``
        lifts the private-host block."""

@final
class Router:
    """What prowl routes through the sampling gateway (SPEC §10): the catalog, salt and
    decisions of one set of settings. The host fetches; times are Unix milliseconds."""

    def __new__(cls, agent_key: Optional[str], gateway_url: Optional[str], services: Optional[str] = None) -> Self:
        """``PROWL_AGENT_KEY``, ``PROWL_GATEWAY_URL``, ``PROWL_GATEWAY_SERVICES`` (``None``: unset)."""
    def wants_fetch(self, now_ms: int) -> bool:
        """Whether to fetch the catalog and the salt now; ``True`` counts the fetch as started."""
    def loaded(self, now_ms: int, catalog: str, salt: str) -> bool:
        """The fetch's answers (JSON text); whether they are usable."""
    def fetch_failed(self, now_ms: int) -> None:
        """The fetch failed: it is tried again in a minute."""
    def select(self, services: Optional[str]) -> None:
        """A new ``PROWL_GATEWAY_SERVICES`` value."""
    def route(self, now_ms: int, method: str, url: str, header_names: List[str]) -> Optional[_Json]:
        """``{url, slug, service_id, headers, keep, vendor}`` through the gateway, or ``None``."""
    def refused(self, now_ms: int, status: int, reason: Optional[str]) -> _Json:
        """``{gateway, fetch_at}``: whether the gateway itself refused, and when to fetch again."""
    def vendor_location(self, vendor: str, slug: str, location: str) -> str:
        """A gateway redirect's location as the vendor URL it stands for."""
    def status(self, now_ms: int) -> _Json:
        """``{ready, agent_id, salt_id, services, counts}``."""

@final
class TelemetryBudget:
    """What this client may still send this hour (SPEC §4): 60 observations anonymously, 600
    with an agent key; paused after the server refuses some."""
    def __new__(cls, with_agent_key: bool) -> Self: ...
    def take(self, now_ms: float, want: int) -> int:
        """How many of ``want`` may be sent at ``now_ms``; those count as sent."""
    def refused(self, now_ms: float, retry_after_s: float) -> None:
        """The server refused some as over its limit, asking to wait ``retry_after_s``."""
    def answered(self, now_ms: float, sent: int, status: Optional[int], retry_after: Optional[str],
                 body: Optional[str]) -> Tuple[int, int, int]:
        """``(delivered, throttled, failed)`` of the answer to ``sent`` observations; pauses
        on a refusal."""
    def wait_ms(self, now_ms: float) -> float:
        """Milliseconds until at least one may be sent (0: now)."""

def prepare_observation(url: str, method: str, status: Optional[int], latency_ms: float,
                        response_bytes: Optional[int], source: _Source, policy: HostPolicy) -> Optional[_Json]:
    """The observation to send for one request (only the host of ``url``), or ``None``.
    Raises ``LowdownError`` (``invalid_argument``) on an unknown ``source``."""
def validate_records(body: Any) -> List[_Json]:
    """One API record or a list of 1..=1000, validated all-or-nothing; the typed records.
    Raises ``LowdownError`` naming the field in ``details["path"]``."""
def validate_node_id(node_id: str) -> None:
    """Raises ``invalid_format`` unless ``node_id`` matches ``^ld_[A-Za-z0-9_-]{1,64}$``."""
def delivery(len: int, status: Optional[int], retry_after: Optional[str], body: Optional[str]) -> Tuple[int, int, int, List[int], int, int, Optional[str]]:
    """What the answer to a batch of ``len`` records means: ``(delivered, duplicates, rejected, keep, limited, pause_ms, reason)``."""
def settings_from_env(env: Mapping[str, str], user_home: str, client: Literal["proxy", "telemetry"]) -> _Json:
    """A host's settings from its environment: ``{api_url, home, record, telemetry, debug, local_node, autostart}``."""
def destination(settings: _Json, stored_text: Optional[str], announcement: Optional[str]) -> _Json:
    """Where a host delivers, given the texts of ``config.json`` and ``local-node.json``:
    ``{url, via, may_start}``."""
_Step = Dict[str, Any]
"""A plan's next step (the core's ``files::Step``): ``{"step": "list" | "read" | "write" |
"rename" | "claim" | "link" | "delete" | "deliver" | "identity" | "done" | "failed", ...}``."""
_Result = Literal["ok", "missing", "exists", "failed"]

@final
class SpoolClaim:
    """Which spool file this process delivers next (the core's ``spool::Claim``)."""

    def __new__(cls, pid: int, now_ms: float) -> Self:
        """A plan for the process ``pid`` at ``now_ms``."""
    def start(self) -> _Step:
        """The first step."""
    def feed(self, result: _Result, text: Optional[str] = None) -> _Step:
        """What the last step did (``text``: a read's text); the next step."""
    def listed(self, entries: List[Tuple[str, Optional[float]]]) -> _Step:
        """The directory's ``(name, mtime_ms)`` entries; the next step."""
    def finish(self, taken: bool) -> _Step:
        """After ``deliver``: whether the records were taken; the next step."""

@final
class SpoolWrite:
    """How this process spools records (the core's ``spool::Write``)."""

    def __new__(cls, records: List[str], seq: int, pid: int, now_ms: int, now_iso: str, token: str) -> Self:
        """A plan for ``records``; ``seq`` is the last sequence number this process used."""
    def seq(self) -> int:
        """The last sequence number this plan's files use."""
    def start(self) -> _Step:
        """The first step."""
    def feed(self, result: _Result, text: Optional[str] = None) -> _Step:
        """What the last step did (``text``: a read's text); the next step."""
    def listed(self, entries: List[Tuple[str, Optional[float]]]) -> _Step:
        """The directory's ``(name, mtime_ms)`` entries; the next step."""

@final
class NodeIdentityLoad:
    """How this process loads ``node.json`` (the core's ``identity::Load``)."""

    def __new__(cls, random_hex: str, now_iso: str, pid: int, token: str) -> Self:
        """A plan whose fresh identity comes from 12 hex digits of randomness and the clock."""
    def start(self) -> _Step:
        """The first step."""
    def feed(self, result: _Result, text: Optional[str] = None) -> _Step:
        """What the last step did (``text``: a read's text); the next step."""

_ProbeStep = Dict[str, Any]
"""``{"method": "POST" | "DELETE", "headers": [(name, value)], "body": bytes,
"answer": (id, cap) | None}`` to send, or ``{"done": conformance}``."""

@final
class AnswerReader:
    """Reads the JSON-RPC answer to one request from body chunks (JSON or SSE), under a cap."""

    def __new__(cls, content_type: Optional[str], id: int, cap: int) -> Self:
        """A reader for the answer to request ``id`` given the response's Content-Type."""
    def feed(self, chunk: bytes) -> bool:
        """Feeds the next chunk; ``True`` once the answer is complete (stop reading)."""
    def answer(self) -> bytes:
        """The answer itself as JSON text once complete or the body ended; raises
        ``LowdownError`` (``not_json_rpc``, ``no_answer``, ``too_large``)."""

@final
class Probe:
    """The Scanner's probe of one MCP remote as a state machine (SPEC §8); its last step is
    the conformance score of SPEC §11 (dimensions, overall_score, findings, test_results,
    observed: {reached_level, tool_count, schema_hash}, what a submission carries)."""

    def __new__(cls, client_version: str, modern: bool = False) -> Self:
        """A probe announcing ``lowdown-scanner/<client_version>``."""
    def start(self) -> _ProbeStep:
        """The first request."""
    def on_failed(self, error_type: str) -> _ProbeStep:
        """No HTTP response (``timeout``, ``dns``, ``tls``, ``conn_refused``, ``conn_reset``,
        ``network_error``, ``blocked_url``)."""
    def on_response(self, status: int, session_id: Optional[str], www_authenticate: bool,
                    elapsed_ms: float, answer: Optional[AnswerReader] = None,
                    body_error: Optional[str] = None) -> _ProbeStep:
        """An HTTP response; ``answer`` is the reader fed with the 2xx body the step asked for."""

def probe_url_host(url: str, allow_loopback: bool) -> str:
    """The host of ``url`` the Scanner's SSRF rules accept; raises ``LowdownError``
    (``scheme``, ``userinfo``, ``unparsable``, ``host``) otherwise."""
def check_probe_address(ip: Union[IPv4Address, IPv6Address], allow_loopback: bool) -> None:
    """Raises ``LowdownError`` (``address``) for an address the probe may not connect to."""
def check_directive(body: _Json) -> _Json:
    """``{service_id, kind, spec, price_credits, critical}`` checked as the server checks a
    posted directive; raises ``LowdownError`` (``invalid``, ``local_command_refused``,
    ``mcp_server_not_https``; ``details["field"]`` names the field)."""
def agent_verdict(answer: str, contains: Sequence[str], latency_ms: float) -> _Json:
    """``{"passed", "dimensions", "overall_score", "test_results"}`` of an agent run."""
