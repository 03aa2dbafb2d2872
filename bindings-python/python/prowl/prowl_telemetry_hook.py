#!/usr/bin/env python3
"""prowl_telemetry_hook.py: a Claude Code hook that reports WebFetch calls to Lowdown.

One file, Python's standard library only. Download it (``GET /hooks/prowl_telemetry_hook.py``
from any Lowdown server, or take it from the prowl wheel), ``chmod +x`` it and add it to
``~/.claude/settings.json`` under ``PreToolUse`` and ``PostToolUse`` with matcher
``WebFetch``, ``"timeout": 3, "async": true`` (docs/contribute-telemetry.md).

``PreToolUse`` notes when a fetch started, under a name derived from its ``tool_use_id``;
``PostToolUse`` (or ``PostToolUseFailure``) sends one observation: the host of
``tool_input.url`` (never its path or query, never the prompt, headers or body), ``GET``,
the status (``tool_response.code``; ``null`` when the fetch failed), the response's bytes
and the latency: the tool's own ``duration_ms`` when Claude Code gives one, else the time
between the Pre and the Post event. Private, local and metadata hosts are never sent: the
rules are the Lowdown core's, and prowl's tests hold this file to the core's vectors.

Settings (environment): ``PROWL_API_URL``, then ``LOWDOWN_API_URL``, then
``http://127.0.0.1:7077``; ``PROWL_AGENT_KEY`` (weighs the reports more);
``PROWL_TELEMETRY=0`` turns it off; ``PROWL_TELEMETRY_ALLOWLIST`` (hosts or domains,
comma-separated: only these are sent); ``PROWL_TELEMETRY_ALLOW_PRIVATE=1`` (local hosts too,
never metadata endpoints); ``LOWDOWN_HOME`` (default ``~/.lowdown``) holds the Pre events'
notes under ``prowl-hook/``. The hook prints nothing and always exits 0.
"""

from __future__ import annotations

import time

_STARTED_NS = time.monotonic_ns()  # before the imports: the Pre event's time

import hashlib  # noqa: E402
import ipaddress  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Dict, List, Mapping, Optional, Tuple  # noqa: E402

DEFAULT_API_URL = "http://127.0.0.1:7077"
OBSERVE_PATH = "/v1/telemetry/observe"
#: The wrapper name observations carry as their ``source``.
SOURCE = "prowl_telemetry_hook"
TOOL = "WebFetch"
SEND_TIMEOUT_S = 1.0
MAX_STDIN = 8 * 1024 * 1024
#: A Pre event's note older than this is stale (the fetch never reported) and removed.
PENDING_MAX_AGE_S = 3600
#: Most notes kept: past this a Pre event writes none (its Post uses the tool's duration).
PENDING_MAX = 1000

# --- BEGIN host rules: the core's (telemetry::{host, ip, private, url}), ported once, in
# prowl_telemetry_hook.py; `make contracts` copies them into prowl_provider_hook.py -------

METADATA_NAMES = (
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
)
PRIVATE_NAME_SUFFIXES = (
    "local", "cluster.local", "internal", "home.arpa", "localdomain", "lan", "home", "corp",
    "intranet", "private", "svc", "consul", "fritz.box",
)
SPECIAL_USE_SUFFIXES = ("test", "invalid", "example", "onion", "alt")
METADATA_V4 = ("169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200", "192.0.0.192")
METADATA_V6 = ("fd00:ec2::254", "fd00:ec2::23")
_SPECIAL_SCHEMES = ("http", "https", "ws", "wss", "ftp")

Host = Tuple[str, Any]  # ("domain", str) | ("v4", IPv4Address) | ("v6", IPv6Address)


def _ipv4_number(s: str) -> Optional[int]:
    if not s:
        return None
    digits, radix = s, 10
    if len(s) >= 2 and s[:2] in ("0x", "0X"):
        digits, radix = s[2:], 16
    elif len(s) >= 2 and s[0] == "0":
        digits, radix = s[1:], 8
    n = 0
    for c in digits:
        try:
            d = int(c, radix)
        except ValueError:
            return None
        n = n * radix + d
    return n


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    return (last != "" and last.isascii() and last.isdigit()) or _ipv4_number(last) is not None


def _parse_ipv4(host: str) -> Optional[ipaddress.IPv4Address]:
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if len(parts) > 4:
        return None
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    nums = [n for n in numbers if n is not None]
    *init, last = nums
    if any(n > 255 for n in init) or last >= 256 ** (5 - len(nums)):
        return None
    value = last + sum(n << (8 * (3 - i)) for i, n in enumerate(init))
    return ipaddress.IPv4Address(value) if value < 2**32 else None


def parse_host(raw: str) -> Tuple[Optional[Host], Optional[str]]:
    """The host, or why it is no host (``invalid_host``, ``unicode_host``)."""
    if not raw or len(raw) > 300:
        return None, "invalid_host"
    if not raw.isascii():
        return None, "unicode_host"
    lower = raw.lower()
    if lower.startswith("[") or ":" in lower:
        inner = lower[1:] if lower.startswith("[") else lower
        if lower.startswith("["):
            if not inner.endswith("]"):
                return None, "invalid_host"
            inner = inner[:-1]
        try:
            if "%" in inner:  # a zone is no host
                raise ValueError(inner)
            return ("v6", ipaddress.IPv6Address(inner)), None
        except ValueError:
            return None, "invalid_host"
    if not all(c.isalnum() or c in ".-_" for c in lower):
        return None, "invalid_host"
    if _ends_in_number(lower):
        v4 = _parse_ipv4(lower)
        return (("v4", v4), None) if v4 is not None else (None, "invalid_host")
    name = lower[:-1] if lower.endswith(".") else lower
    if len(name) > 253 or any(not label or len(label) > 63 for label in name.split(".")):
        return None, "invalid_host"
    return ("domain", name), None


def _hextets(a: ipaddress.IPv6Address) -> List[int]:
    return [int.from_bytes(a.packed[i : i + 2], "big") for i in range(0, 16, 2)]


def host_text(host: Host) -> str:
    """A host as observations name it: an IPv6 address in brackets, its longest run (of two
    or more) of zero groups as ``::``."""
    kind, value = host
    if kind != "v6":
        return str(value)
    s = _hextets(value)
    best, best_len, i = -1, 1, 0
    while i < 8:
        if s[i] == 0:
            start = i
            while i < 8 and s[i] == 0:
                i += 1
            if i - start > best_len:
                best, best_len = start, i - start
        else:
            i += 1
    hexes = [f"{p:x}" for p in s]
    if best < 0:
        return "[" + ":".join(hexes) + "]"
    return "[" + ":".join(hexes[:best]) + "::" + ":".join(hexes[best + best_len :]) + "]"


def _classify_v4(a: ipaddress.IPv4Address) -> Optional[str]:
    if str(a) in METADATA_V4:
        return "metadata"
    o = a.packed
    if o[0] == 0:
        return "unspecified"
    if o[0] == 127:
        return "loopback"
    if o[0] == 10 or o[:2] == b"\xc0\xa8" or (o[0] == 172 and 16 <= o[1] <= 31):
        return "private"
    if o[:2] == b"\xa9\xfe":
        return "link_local"
    if o[0] == 100 and 64 <= o[1] <= 127:
        return "cgnat"
    if o[:3] in (b"\xc0\x00\x00", b"\xc0\x00\x02", b"\xc6\x33\x64", b"\xcb\x00\x71"):
        return "reserved"
    if o[0] == 198 and o[1] in (18, 19):
        return "reserved"
    if o[0] >= 224:
        return "reserved"
    return None


def _classify_v6(a: ipaddress.IPv6Address) -> Optional[str]:
    if a in (ipaddress.IPv6Address(m) for m in METADATA_V6):
        return "metadata"
    if int(a) == 0:
        return "unspecified"
    if int(a) == 1:
        return "loopback"
    s = _hextets(a)
    embedded: Optional[Tuple[int, int]] = None
    if s[:5] == [0] * 5 and (s[5] == 0xFFFF or s[5] == 0):
        embedded = (s[6], s[7])
    elif s[:4] == [0] * 4 and s[4] == 0xFFFF and s[5] == 0:
        embedded = (s[6], s[7])
    elif s[:6] == [0x64, 0xFF9B, 0, 0, 0, 0]:
        embedded = (s[6], s[7])
    elif s[0] == 0x2002:
        embedded = (s[1], s[2])
    if embedded is not None:
        return _classify_v4(ipaddress.IPv4Address((embedded[0] << 16) | embedded[1]))
    p = s[0]
    if p == 0x64 and s[1] == 0xFF9B and s[2] == 1:
        return "private"
    if p & 0xFE00 == 0xFC00:
        return "unique_local"
    if p & 0xFFC0 == 0xFE80:
        return "link_local"
    if p & 0xFFC0 == 0xFEC0:
        return "private"
    if p & 0xFF00 == 0xFF00:
        return "reserved"
    if p == 0x2001 and s[1] == 0xDB8:
        return "reserved"
    if p == 0x100 and s[1:4] == [0, 0, 0]:
        return "reserved"
    return None


def _has_suffix(name: str, suffix: str) -> bool:
    return name == suffix or name.endswith("." + suffix)


def _name_reason(name: str) -> Optional[str]:
    if _has_suffix(name, "localhost"):
        return "localhost"
    if name in METADATA_NAMES:
        return "metadata"
    if any(_has_suffix(name, s) for s in PRIVATE_NAME_SUFFIXES):
        return "local_name"
    if any(_has_suffix(name, s) for s in SPECIAL_USE_SUFFIXES):
        return "special_use"
    if "." not in name:
        return "single_label"
    return None


def _host_reason(host: Host) -> Optional[str]:
    kind, value = host
    if kind == "v4":
        return _classify_v4(value)
    if kind == "v6":
        return _classify_v6(value)
    return _name_reason(value)


def _percent_decode(s: str) -> Optional[str]:
    out = bytearray()
    i = 0
    hexdigits = "0123456789abcdefABCDEF"
    while i < len(s):
        if s[i] == "%" and i + 2 < len(s) and s[i + 1] in hexdigits and s[i + 2] in hexdigits:
            out.append(int(s[i + 1 : i + 3], 16))
            i += 3
        else:
            out.extend(s[i].encode("utf-8"))
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def host_from_url(url: str) -> Optional[str]:
    """The host of a URL as the core reads it (lowercased, an IP in its standard form), or
    ``None``."""
    cleaned = "".join(c for c in url.strip("".join(map(chr, range(0x21)))) if c not in "\t\n\r")
    scheme, sep, rest = cleaned.partition(":")
    if not sep or not scheme or not (scheme[0].isascii() and scheme[0].isalpha()):
        return None
    if not all(c.isascii() and (c.isalnum() or c in "+-.") for c in scheme):
        return None
    scheme = scheme.lower()
    special = scheme in _SPECIAL_SCHEMES
    if special:
        after = rest.lstrip("/\\")
    elif scheme == "file" or not rest.startswith("//"):
        return None
    else:
        after = rest[2:]
    end = len(after)
    for i, c in enumerate(after):
        if c in "/?#" or (special and c == "\\"):
            end = i
            break
    authority = after[:end]
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return None
        host: Optional[str] = hostport[: close + 1]
    else:
        host = _percent_decode(hostport.split(":")[0])
    if host is None:
        return None
    parsed, _ = parse_host(host)
    return host_text(parsed) if parsed is not None else None


# --- END host rules -------------------------------------------------------------------

# --- What the telemetry path adds: the policy, the verdict, the observation ------------

#: Reasons a local host may be sent for under ``allow_private``.
PRIVATE_REASONS = frozenset(
    ("localhost", "local_name", "special_use", "single_label", "loopback", "private", "link_local",
     "cgnat", "unique_local", "unspecified")
)
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def is_blocked_ip(ip: str) -> bool:
    """Whether an IP address is one no observation names."""
    a = ipaddress.ip_address(ip)
    return (_classify_v4(a) if isinstance(a, ipaddress.IPv4Address) else _classify_v6(a)) is not None


def is_private_name(host: str) -> bool:
    """Whether a host is local, private, special-use or unreadable."""
    parsed, _ = parse_host(host)
    return parsed is None or _host_reason(parsed) is not None


def host_policy(allowlist: Optional[str], allow_private: Optional[str]) -> Dict[str, Any]:
    """The policy from ``PROWL_TELEMETRY_ALLOWLIST`` and ``PROWL_TELEMETRY_ALLOW_PRIVATE``."""
    entries: List[str] = []
    for raw in (allowlist or "").split(","):
        e = raw.strip().lower()
        if e.startswith("*."):
            e = e[2:]
        elif e.startswith("."):
            e = e[1:]
        parsed, _ = parse_host(e)
        e = host_text(parsed) if parsed is not None else e
        if e:
            entries.append(e)
    private = allow_private is not None and allow_private.strip().lower() in ("1", "true", "yes", "on")
    return {"allowlist": entries, "allow_private": private}


def _allows(policy: Mapping[str, Any], host: Host) -> bool:
    name = host_text(host)
    allowlist: List[str] = policy["allowlist"]
    return not allowlist or any(
        name == e or (host[0] == "domain" and name.endswith("." + e)) for e in allowlist
    )


def host_verdict(host: str, policy: Mapping[str, Any]) -> Dict[str, str]:
    """``{"verdict": "report", "host"}`` or ``{"verdict": "blocked", "reason"}``."""
    parsed, why = parse_host(host)
    if parsed is None:
        return {"verdict": "blocked", "reason": why or "invalid_host"}
    reason = _host_reason(parsed)
    if reason is not None and not (policy["allow_private"] and reason in PRIVATE_REASONS):
        return {"verdict": "blocked", "reason": reason}
    if not _allows(policy, parsed):
        return {"verdict": "blocked", "reason": "not_allowlisted"}
    return {"verdict": "report", "host": host_text(parsed)}


def prepare_observation(
    url: str,
    method: str,
    status: Optional[int],
    latency_ms: float,
    response_bytes: Optional[int],
    source: str,
    policy: Mapping[str, Any],
) -> Optional[Dict[str, Any]]:
    """The observation of one request, or ``None`` when nothing may be sent (as the core's
    ``prepare_observation``)."""
    if latency_ms != latency_ms or latency_ms in (float("inf"), float("-inf")):
        return None
    raw = host_from_url(url)
    if raw is None:
        return None
    verdict = host_verdict(raw, policy)
    if verdict["verdict"] != "report":
        return None
    ok = 0 < len(method) <= 16 and all(c in _TOKEN for c in method)
    return {
        "host": verdict["host"],
        "method": method.upper() if ok else "OTHER",
        "status": status if status is not None and 100 <= status <= 599 else None,
        "latency_ms": float(min(max(latency_ms, 0.0), 86_400_000.0)),
        "response_bytes": None if response_bytes is None else min(response_bytes, 2**53 - 1),
        "source": source,
    }


# --- The hook ---------------------------------------------------------------------------


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value >= 0 else None


def _state_dir(env: Mapping[str, str]) -> Path:
    home = env.get("LOWDOWN_HOME") or str(Path.home() / ".lowdown")
    return Path(home) / "prowl-hook"


def _note(env: Mapping[str, str], payload: Mapping[str, Any]) -> Optional[Path]:
    """Where the Pre event of this payload's tool use is noted."""
    use = payload.get("tool_use_id")
    if not isinstance(use, str) or not use:
        return None
    session = payload.get("session_id")
    key = f"{session if isinstance(session, str) else ''}\0{use}".encode("utf-8", "replace")
    return _state_dir(env) / f"{hashlib.sha256(key).hexdigest()[:32]}.pre"


def _pre(env: Mapping[str, str], payload: Mapping[str, Any], now_ns: int) -> None:
    note = _note(env, payload)
    if note is None:
        return
    note.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    wall = time.time()
    notes = list(note.parent.glob("*.pre"))
    for old in notes:
        try:
            if wall - old.stat().st_mtime > PENDING_MAX_AGE_S:
                old.unlink()
        except OSError:
            pass
    if len(notes) >= PENDING_MAX:
        return
    tmp = note.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(str(now_ns))
    os.replace(tmp, note)


def _pair_latency_ms(env: Mapping[str, str], payload: Mapping[str, Any], now_ns: int) -> Optional[float]:
    """Milliseconds since this tool use's Pre event (its note is removed), or ``None``."""
    note = _note(env, payload)
    if note is None:
        return None
    try:
        started = int(note.read_text(encoding="ascii").strip())
        note.unlink()
    except (OSError, ValueError):
        return None
    return (now_ns - started) / 1e6


def observation(payload: Any, env: Mapping[str, str], now_ns: int) -> Optional[Dict[str, Any]]:
    """What a Post event reports (``None``: nothing, or a Pre event, which is noted)."""
    if not isinstance(payload, dict) or payload.get("tool_name") != TOOL:
        return None
    event = payload.get("hook_event_name")
    if event == "PreToolUse":
        _pre(env, payload, now_ns)
        return None
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return None
    tool_input = payload.get("tool_input")
    url = tool_input.get("url") if isinstance(tool_input, dict) else None
    resp = payload.get("tool_response")
    resp = resp if isinstance(resp, dict) else {}
    pair = _pair_latency_ms(env, payload, now_ns)
    if not isinstance(url, str) or not url:
        return None
    status = None
    code = resp.get("code")
    if event == "PostToolUse" and isinstance(code, int) and not isinstance(code, bool):
        status = code
    latency = next(
        (n for n in (_number(payload.get("duration_ms")), _number(resp.get("durationMs")), pair) if n is not None),
        None,
    )
    if latency is None:
        return None
    size = _number(resp.get("bytes"))
    policy = host_policy(env.get("PROWL_TELEMETRY_ALLOWLIST"), env.get("PROWL_TELEMETRY_ALLOW_PRIVATE"))
    return prepare_observation(url, "GET", status, latency, None if size is None else int(size), SOURCE, policy)


def api_url(env: Mapping[str, str]) -> Optional[str]:
    """``PROWL_API_URL``, then ``LOWDOWN_API_URL``, then the default; ``None`` when the one
    set is no http(s) URL."""
    url = (env.get("PROWL_API_URL") or env.get("LOWDOWN_API_URL") or DEFAULT_API_URL).strip().rstrip("/")
    return url if url.startswith(("http://", "https://")) else None


def send(url: str, obs: Mapping[str, Any], agent_key: Optional[str]) -> None:
    """POSTs one observation; any answer or failure is ignored."""
    headers = {"Content-Type": "application/json"}
    if agent_key:
        headers["X-Agent-Key"] = agent_key
    req = urllib.request.Request(url + OBSERVE_PATH, data=json.dumps(obs).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=SEND_TIMEOUT_S) as res:  # noqa: S310 (http(s) only, checked)
        res.read(64 * 1024)


def run(stdin: bytes, env: Mapping[str, str], now_ns: int) -> Optional[Dict[str, Any]]:
    """Reads one event and reports it; returns what was sent. Never raises."""
    try:
        if env.get("PROWL_TELEMETRY", "").strip().lower() in ("0", "false", "off", "no"):
            return None
        obs = observation(json.loads(stdin.decode("utf-8")), env, now_ns)
        url = api_url(env)
        if obs is None or url is None:
            return None
        send(url, obs, env.get("PROWL_AGENT_KEY") or None)
        return obs
    except Exception:  # garbage in, the API down: Claude Code must not notice
        return None


def main() -> None:
    """Reads stdin, reports, exits 0 quietly."""
    try:
        data = sys.stdin.buffer.read(MAX_STDIN + 1)
        if len(data) <= MAX_STDIN:
            run(data, os.environ, _STARTED_NS)
    except BaseException:  # even KeyboardInterrupt: a hook never fails the session
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
