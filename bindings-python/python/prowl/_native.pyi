"""Type stubs of ``prowl._native``, the pyo3 binding of lowdown-core (hand-written; the
binding's tests check that these names and the module's are the same).

Results are plain dicts and lists with the core's snake_case keys. Every core error is raised
as :class:`LowdownError` with a stable ``.type``.
"""

from ipaddress import IPv4Address, IPv6Address
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

API_URL: str
"""Default Lowdown API base URL (``LOWDOWN_API_URL``)."""
API_URL_ENV: str
"""Environment variable naming the API base URL."""
PROWL_API_URL_ENV: str
"""Environment variable the Python and WASM clients read before ``LOWDOWN_API_URL``."""
HOME_ENV: str
"""Environment variable naming the state directory."""
HOME_DIR_NAME: str
"""Default state directory name under the user's home."""
NODE_ID_HEADER: str
"""Header carrying the node id on queries."""
AGENT_KEY_HEADER: str
"""Header carrying an agent key on telemetry."""
SPOOL_MAX_FILES: int
"""Most spool files kept (SPEC §3)."""
SPOOL_MAX_RECORDS_PER_FILE: int
"""Most records per spool file."""
SPOOL_STALE_CLAIM_MS: int
"""Age after which another host's unfinished claim is taken over, in milliseconds."""

Direction = Literal["client_to_server", "server_to_client"]
CloseReason = Literal["client_ended", "server_ended"]
Source = Literal["organic", "seeded", "synthetic"]
WeightTier = Literal["anonymous_unknown_host", "anonymous_known_host", "key_unknown_host", "key_known_host"]
Json = Dict[str, Any]

class LowdownError(ValueError):
    """A core operation refused its input.

    ``type`` (alias ``kind``) is the stable error kind, e.g. ``"invalid_json"``,
    ``"invalid_pattern"``, ``"missing_field"``, ``"invalid_argument"``; ``details`` holds the
    error's other fields (for validation errors ``path``, ``field``, ``index``, ``message``).
    The message never quotes the rejected value.
    """

    type: str
    kind: str
    details: Optional[Dict[str, Any]]

class Classifier:
    """Classifies one MCP stdio session (SPEC §3.1): feed it the bytes of both directions as
    they arrive, with your clock; it returns every exchange that finished."""

    def __init__(self) -> None:
        """A classifier for a new session."""
    def feed(self, direction: Direction, data: bytes, now_ms: float) -> List[Json]:
        """Feeds bytes that travelled ``direction`` at ``now_ms``; returns the exchanges that
        finished. Raises ``LowdownError`` (``invalid_argument``) on an unknown direction."""
    def feed_json(self, direction: Direction, data: bytes, now_ms: float) -> str:
        """``feed``, with the exchanges as one JSON text (``"[]"`` when none)."""
    def close(self, now_ms: float, reason: CloseReason) -> List[Json]:
        """Ends the session: frames unterminated last lines and reports every request and task
        still waiting, as cancelled (``"client_ended"``) or as server errors
        (``"server_ended"``); returns those exchanges."""
    def facts(self) -> Json:
        """What the classifier has learnt: server name and version, protocol version,
        schema and description hashes of the latest first-page ``tools/list``."""
    def pending(self) -> int:
        """Number of requests still waiting for a response (both directions), and of tool
        calls running as tasks still waiting for their outcome."""
    def buffered(self) -> int:
        """Bytes held for lines not yet terminated (both directions)."""

class LogDiff:
    """Watches log files for new matching lines (``--watch-log``). The host reads the files
    from ``offset(path)`` and supplies the time."""

    def __init__(self, *, pattern: Optional[str] = None, max_lines: Optional[int] = None,
                 max_line_chars: Optional[int] = None) -> None:
        """A watcher. ``pattern`` defaults to SPEC §3.4's, ``max_lines`` to 20,
        ``max_line_chars`` to 300. Raises ``LowdownError`` (``invalid_pattern``) on a bad
        regex and (``invalid_argument``) on an unknown option."""
    def watch(self, path: str, initial_size: Optional[int] = None) -> None:
        """Starts watching ``path``; ``initial_size`` is its size now (``None``: not there yet)."""
    def feed(self, path: str, file_size: int, data: bytes) -> Literal["read", "restarted", "not_watched"]:
        """Takes ``data`` read from ``offset(path)`` of a file whose size is now ``file_size``."""
    def restart(self, path: str) -> None:
        """The file was replaced (rotation): read it again from its start."""
    def offset(self, path: str) -> int:
        """Where to read ``path`` from next (0 when it is not watched)."""
    def has_pending(self) -> bool:
        """Whether any file has matching lines waiting."""
    def paths(self) -> List[str]:
        """Watched paths, in the order they were added."""
    def take_block(self, since_hhmmss: str) -> Optional[str]:
        """The ``[lowdown] Since HH:MM:SS, ...`` block (lines then cleared), or ``None``."""

class HostPolicy:
    """The telemetry reporting policy from the raw ``PROWL_TELEMETRY_ALLOWLIST`` and
    ``PROWL_TELEMETRY_ALLOW_PRIVATE`` values (``None`` when unset)."""

    def __init__(self, allowlist: Optional[str] = None, allow_private: Optional[str] = None) -> None:
        """Comma-separated allowlist (hosts with their subdomains); ``1``/``true``/``yes``/``on``
        lifts the private-host block."""
    @property
    def allowlist(self) -> List[str]:
        """The canonical allowlisted hosts; empty means no restriction."""
    @property
    def allow_private(self) -> bool:
        """Whether local and private hosts may be reported."""
    def to_dict(self) -> Json:
        """``{"allowlist": [...], "allow_private": bool}``."""

class TelemetryBudget:
    """What this client may still send this hour (SPEC §4): 60 observations anonymously, 600
    with an agent key; paused after the server refuses some."""
    def __init__(self, with_agent_key: bool) -> None: ...
    def take(self, now_ms: float, want: int) -> int:
        """How many of ``want`` may be sent at ``now_ms``; those count as sent."""
    def refused(self, now_ms: float, retry_after_s: float) -> None:
        """The server refused some as over its limit, asking to wait ``retry_after_s``."""
    def wait_ms(self, now_ms: float) -> float:
        """Milliseconds until at least one may be sent (0: now)."""

class TelemetryRollup:
    """What the server stores per host; rollups merge."""

    def __init__(self, stored: Optional[Json] = None) -> None:
        """An empty rollup, or one read back from :meth:`to_dict`."""
    def add(self, status: Optional[int], latency_ms: float, tier: WeightTier) -> None:
        """Adds one observation."""
    def merge(self, other: "TelemetryRollup") -> None:
        """Adds every count of ``other``."""
    def to_dict(self) -> Json:
        """The plain, storable form."""
    def summary(self) -> Json:
        """The public telemetry block of this rollup."""

def hash_tools_result(result_json: bytes) -> Json:
    """SPEC §3.3 hashes of a ``tools/list`` result's JSON text: ``schema_hash``, ``desc_hash``,
    ``tool_count``, ``has_more``. Raises ``invalid_json`` or ``too_deep``."""
def hash_tools(tools_json: bytes) -> Json:
    """SPEC §3.3 hashes of a ``tools`` array's JSON text."""
def canonical_json(json: bytes) -> str:
    """SPEC §3.3 canonical JSON (UTF-16 key order, JavaScript numbers)."""
def redact(text: str) -> str:
    """Masks secrets in ``text`` with ``[REDACTED]``."""
def target_label(argv: Sequence[str], facts: Optional[Json] = None) -> Optional[str]:
    """SPEC §3.2 target label of a command line, or ``None``. ``facts``: what the caller
    resolved (``{"packages": [{"arg", "registry", "name"}], "cwd"}``)."""
def expand_path(path: str, env: Mapping[str, str], home: Optional[str] = None) -> str:
    """Expands ``%VAR%``, ``$VAR``, ``${VAR}`` and a leading ``~``; unknown variables kept."""
def append_text_item(message: bytes, text: str) -> Optional[bytes]:
    """The result line with one more ``text`` content item, every other byte kept; ``None``
    when the message cannot carry it."""
def build_record(exchange: Json, facts: Json, ctx: Optional[Json] = None,
                 record_id: Optional[str] = None) -> Optional[Json]:
    """The SPEC §3.2 record of one exchange, or ``None`` for a server→client request. ``ctx``
    keys: ``actor``, ``target``, ``source``, ``node_id``, ``recorder_version``."""
def sanitize_server_version(raw: str) -> Optional[str]:
    """The publishable form of ``serverInfo.version``, or ``None``."""
def validate_record(body: Any) -> Json:
    """One API record, validated; raises ``LowdownError`` naming the field in ``details["path"]``."""
def validate_records(body: Any) -> List[Json]:
    """One record or a list of 1..=1000, all-or-nothing."""
def validate_node_id(node_id: str) -> None:
    """Raises ``invalid_format`` unless ``node_id`` matches ``^ld_[A-Za-z0-9_-]{1,64}$``."""
def host_from_url(url: str) -> Optional[str]:
    """The canonical host of ``url`` (as a WHATWG parser gives it), or ``None``."""
def host_verdict(host: str, policy: HostPolicy) -> Json:
    """``{"verdict": "report", "host"}`` or ``{"verdict": "blocked", "reason"}``."""
def is_private_name(host: str) -> bool:
    """Whether ``host`` never names a public server (internal names, single labels,
    blocked address literals; invalid hosts too)."""
def is_blocked_ip(ip: Union[IPv4Address, IPv6Address]) -> bool:
    """Whether an address is in a blocked range (IPv4-mapped forms included)."""
def prepare_observation(url: str, method: str, status: Optional[int], latency_ms: float,
                        response_bytes: Optional[int], source: Source, policy: HostPolicy) -> Optional[Json]:
    """The observation to send for one request (only the host of ``url``), or ``None``."""
def validate_observation(body: Any) -> Json:
    """One API observation, validated."""
def validate_observations(body: Any) -> List[Json]:
    """One observation or a list of 1..=1000, all-or-nothing."""
def status_class(status: Optional[int]) -> Literal["success", "failure", "throttled", "rejected"]:
    """How a status counts (SPEC §4)."""
def weight(valid_agent_key: bool, known_host: bool) -> float:
    """0.1, 0.3, 0.5 or 1.0 (SPEC §4)."""
def weight_tier(valid_agent_key: bool, known_host: bool) -> WeightTier:
    """The weight tier of one observation."""
def latency_bucket(latency_ms: float) -> int:
    """Index of the latency histogram bucket."""
def summarize_telemetry(rollup: Json) -> Json:
    """The public telemetry block from a stored rollup."""
def outcome_class(request_kind: str, outcome: str, error_layer: Optional[str] = None) -> str:
    """Which counter one interaction goes to."""
def summarize(counts: Json) -> Json:
    """The reputation summary from per-source counters (SPEC §5)."""
def compare(candidates: Sequence[Union[Tuple[str, Json], List[Any]]]) -> Json:
    """Ranks 2–5 ``(target, summary)`` pairs; raises ``candidate_count`` or ``duplicate_candidate``."""
def message(target: str, summary: Json) -> str:
    """One factual sentence about a summary."""
def decide(service_id: str, agent_id: str, salt_id: str, salt: str, sampling_rate: float) -> Json:
    """``{"roll", "bucket", "sampled"}`` (SPEC §4)."""
def verify(service_id: str, agent_id: str, salt_id: str, salt: str, sampling_rate: float,
           claimed_roll: str, claimed_sampled: bool) -> bool:
    """Whether a claimed decision is what these inputs give."""
def salt_epoch(now_ms: int) -> int:
    """Whole UTC days since 1970 at ``now_ms``."""
def accepted_epochs(now_ms: int) -> List[int]:
    """Epochs whose salts are accepted at ``now_ms``, current first."""
def spool_file_name(now_ms: int, seq: int, pid: int, token: str) -> str:
    """The name of a new spool file."""
def spool_claim_name(name: str, pid: int) -> str:
    """The name a claim by ``pid`` gives the spool file ``name``."""
def spool_entry(name: str) -> Tuple[Literal["waiting", "claimed", "other"], Optional[int], Optional[str]]:
    """What a spool directory entry is: kind, the claimant's pid, the original name."""
def spool_encode(records: Sequence[str]) -> str:
    """The text of a spool file holding ``records`` (JSON texts)."""
def spool_decode(text: str) -> Tuple[List[str], int]:
    """A spool file's records (JSON texts) and how many lines were not records."""
def spool_over_bound(names: Sequence[str]) -> List[str]:
    """Which spool files go to keep the bound (the oldest)."""
def spool_dropped(previous: Optional[str], records: int, now_iso: str) -> str:
    """The new text of ``dropped.json`` once ``records`` more were dropped at ``now_iso``."""
ProbeStep = Dict[str, Any]
"""``{"method": "POST" | "DELETE", "headers": [(name, value)], "body": bytes,
"answer": (id, cap) | None}`` to send, or ``{"done": conformance}``."""

class AnswerReader:
    """Reads the JSON-RPC answer to one request from body chunks (JSON or SSE), under a cap."""

    def __init__(self, content_type: Optional[str], id: int, cap: int) -> None:
        """A reader for the answer to request ``id`` given the response's Content-Type."""
    def feed(self, chunk: bytes) -> bool:
        """Feeds the next chunk; ``True`` once the answer is complete (stop reading)."""

class Probe:
    """The Scanner's probe of one MCP remote as a state machine (SPEC §8); its last step is
    the conformance score of SPEC §11 (dimensions, overall_score, findings, test_results)."""

    def __init__(self, client_version: str, modern: bool = False) -> None:
        """A probe announcing ``lowdown-scanner/<client_version>``."""
    def start(self) -> ProbeStep:
        """The first request."""
    def on_failed(self, error_type: str) -> ProbeStep:
        """No HTTP response (``timeout``, ``dns``, ``tls``, ``conn_refused``, ``conn_reset``,
        ``network_error``, ``blocked_url``)."""
    def on_response(self, status: int, session_id: Optional[str], www_authenticate: bool,
                    elapsed_ms: float, answer: Optional[AnswerReader] = None,
                    body_error: Optional[str] = None) -> ProbeStep:
        """An HTTP response; ``answer`` is the reader fed with the 2xx body the step asked for."""

def probe_url_host(url: str, allow_loopback: bool) -> str:
    """The host of ``url`` the Scanner's SSRF rules accept; raises ``LowdownError``
    (``scheme``, ``userinfo``, ``unparsable``, ``host``) otherwise."""
def check_probe_address(ip: Union[IPv4Address, IPv6Address], allow_loopback: bool) -> None:
    """Raises ``LowdownError`` (``address``) for an address the probe may not connect to."""
def agent_verdict(answer: str, contains: Sequence[str], latency_ms: float) -> Json:
    """``{"passed", "dimensions", "overall_score", "test_results"}`` of an agent run."""
