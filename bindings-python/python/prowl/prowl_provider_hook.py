#!/usr/bin/env python3
"""prowl_provider_hook.py: provider mode in Claude Code's idle time, as one file.

Python's standard library only (it runs under ``python3 -I -S``, with no prowl and no
site-packages). Download it (``GET /hooks/prowl_provider_hook.py`` from any Lowdown
server, or take it from the prowl wheel), ``chmod +x`` it and add it to
``~/.claude/settings.json`` as a ``Stop`` hook (``"timeout": 5, "async": true``;
docs/contribute-provider.md). It does what the ``prowl-provider-hook`` console script does:

- nothing at all unless ``PROWL_PROVIDER_MODE=1``;
- *scout* (``PROWL_PROVIDER_MODE=1``): lists the open directives and writes what it would
  have claimed to ``provider_state.json``; never claims, runs or sends anything else;
- *live* (also ``PROWL_PROVIDER_LIVE=1``): claims one, runs it and submits the result.

The hook returns at once: it takes the single-flight lock (``prowl-provider.lock`` beside
the state in ``$XDG_CONFIG_HOME/prowl/``, a 0700 directory of the user's own) without
waiting and starts this same file as the worker (``worker`` argument), in a new session,
stdio on ``/dev/null``, at nice 10, handing it the lock. Pacing is read from the state
before anything starts: one poll per ``PROWL_PROVIDER_POLL_SECONDS`` (60), one claim per
``PROWL_PROVIDER_MIN_GAP_SECONDS`` (3600) per Claude Code session (the event's
``session_id``, kept only as a hash), one per ``PROWL_PROVIDER_MACHINE_GAP_SECONDS`` (600)
on the machine.

A ``protocol`` directive is the Lowdown Scanner's probe of an MCP remote over streamable
HTTP (``initialize``, ``notifications/initialized``, ``tools/list`` over every page, the
session's ``DELETE``; tools are never called), then the conformance score and what the
probe observed (level, tool count, schema hash), which the server checks against a probe
of its own. The Scanner's SSRF rules apply: https only, no userinfo, no redirect followed,
no proxy, every resolved address checked and the connection made to the checked one, TLS
verifying the name. ``PROWL_UNSAFE_ALLOW_LOOPBACK=1`` admits http and loopback, for tests.

An ``agent`` directive (``{prompt, mcp_server: {url}, expect}``; claimed only when the
``claude`` command resolves) runs the user's ``claude --print`` with the flags and the
environment of ``prowl-provider-hook`` (:data:`CLAUDE_FLAGS`, :data:`CHILD_ENV`, the dollar
budget, ``PROWL_PROVIDER_RUN_TIMEOUT_SECONDS``, ``PROWL_CLAUDE_CMD``), in an empty
directory, the prompt on stdin; its one MCP server is this file run with a ``bridge``
argument, which alone talks to the remote, with the probe's client rules, and passes back
only the answers to Claude's own requests. A directive naming a program to start, or a
non-https server, is refused by name and never claimed.

Any failure releases the directive at once (fail closed). Live mode talks to an https API
only (http to loopback alone).

One file by design (it is downloaded and run as it is), so its sections stand in for the
modules they port. Every rule here (which directives are accepted, which hosts and
addresses may be reached, reading an answer, the probe, the schema hash, the score, an
agent run's verdict) is a port of the Lowdown core's, and prowl's tests hold this file to
the core's vectors. prowl's own console scripts run this file's IO with the compiled core
deciding in its place (:class:`Runner`).

Settings (environment): ``PROWL_API_URL``, then ``LOWDOWN_API_URL``, then
``http://127.0.0.1:7077``; ``PROWL_AGENT_KEY`` (never written to the state);
``PROWL_PROVIDER_MODE``, ``PROWL_PROVIDER_LIVE`` and the gaps above; ``XDG_CONFIG_HOME``.
The hook prints nothing and always exits 0. ``prowl_provider_hook.py register`` makes the
agent a provider, once, by hand.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import re
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

#: The prowl release this file belongs to (the runner id and the probe's client version);
#: `make test-contracts` holds it to the core's release.
VERSION = "0.2.0"
#: What a submission names as its runner.
RUNNER = f"prowl_provider_hook.py/{VERSION}"
DEFAULT_API_URL = "http://127.0.0.1:7077"
#: Bytes of the hook's event read at most (its session id is near the start).
MAX_EVENT = 64 * 1024
#: Where `nice` may be (POSIX): the worker starts through it.
NICE_PATHS = ("/usr/bin/nice", "/bin/nice")

#: Seconds between claims of one session by default (one per hour).
DEFAULT_MIN_GAP_S = 3600.0
#: Seconds between any two claims on the machine by default (six an hour at most).
DEFAULT_MACHINE_GAP_S = 600.0
#: Seconds between polls of the directive list by default.
DEFAULT_POLL_S = 60.0
#: The prefix of a session's last-claim key (then the session's hash).
SESSION_CLAIM = "claim_at:"
STATE_FILE = "provider_state.json"
LOCK_FILE = "prowl-provider.lock"

#: Seconds one API call may take.
API_TIMEOUT_S = 10.0
#: Seconds a submission may take: the server probes a ``protocol`` remote itself first.
SUBMIT_TIMEOUT_S = 240.0
#: Largest API answer read.
MAX_API_ANSWER = 4 << 20

# --- The Scanner's constants (lowdown-core scanner) -------------------------------------

CLIENT_NAME = "lowdown-scanner"
PROTOCOL_VERSION = "2025-06-18"
#: Seconds one probe request may take, answer included.
REQUEST_TIMEOUT_S = 10.0
INITIALIZE_BODY_CAP = 1 << 20
TOOLS_BODY_CAP = 4 << 20
MAX_TOOLS_PAGES = 20
MAX_DEPTH = 512
MIN_DESCRIPTION_CHARS = 25
MAX_TOOL_NAME_CHARS = 100
MAX_VERSION = 32
#: Transport failures on ``initialize``: nothing was measured, so the run is not submitted.
TRANSPORT = frozenset(("timeout", "dns", "tls", "conn_refused", "conn_reset", "network_error", "blocked_url"))
PROTOCOL_WEIGHTS = (
    ("reachability", 0.20),
    ("tool_discovery", 0.15),
    ("tool_documentation", 0.20),
    ("schema_quality", 0.20),
    ("latency", 0.15),
    ("agent_guidance", 0.10),
)
FAST_MS = 500.0
SLOW_MS = 5000.0

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


# --- Unicode classes the core's rules use (Rust's `char::is_whitespace`, `is_control`) ---

#: Unicode White_Space.
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _is_control(c: str) -> bool:
    return c < " " or "\x7f" <= c <= "\x9f"


def _rust_trim(s: str) -> str:
    start, end = 0, len(s)
    while start < end and s[start] in _WHITE_SPACE:
        start += 1
    while end > start and s[end - 1] in _WHITE_SPACE:
        end -= 1
    return s[start:end]


def _ascii_lower(s: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in s)


# --- SSRF rules (lowdown-core scanner::target) ------------------------------------------


class Blocked(Exception):
    """A URL or an address the Scanner's SSRF rules refuse; the message is the refusal
    (``scheme``, ``userinfo``, ``unparsable``, ``host``, ``address``)."""


def check_url_text(url: str, allow_loopback: bool) -> str:
    """The host of ``url`` the Scanner's rules accept (https, no userinfo, a public host;
    with ``allow_loopback``, http and loopback addresses too); raises :class:`Blocked`."""
    if not url or any(c in _WHITE_SPACE or _is_control(c) for c in url):
        raise Blocked("unparsable")
    scheme, sep, rest = url.partition(":")
    host = host_from_url(url)
    if not sep or host is None:
        raise Blocked("unparsable")
    authority = re.split(r"[/\\?#]", rest.lstrip("/\\"), maxsplit=1)[0]
    scheme = _ascii_lower(scheme)
    if not (scheme == "https" or (allow_loopback and scheme == "http")):
        raise Blocked("scheme")
    if "@" in authority:
        raise Blocked("userinfo")
    parsed, _ = parse_host(host)
    reason = "invalid_host" if parsed is None else _host_reason(parsed)
    if reason is not None and not (allow_loopback and reason == "loopback"):
        raise Blocked("host")
    return host


def address_allowed(ip: str, allow_loopback: bool) -> bool:
    """Whether a resolved address may be connected to (the core's blocked ranges; with
    ``allow_loopback``, loopback too)."""
    a = ipaddress.ip_address(ip)
    reason = _classify_v4(a) if isinstance(a, ipaddress.IPv4Address) else _classify_v6(a)
    return reason is None or (allow_loopback and reason == "loopback")


# --- What a directive may ask (lowdown-core benchmark::directive) -----------------------

MAX_URL_CHARS = 2048
MAX_PROMPT_CHARS = 20_000
MAX_EXPECTED = 20
MAX_EXPECT_CHARS = 1000
MAX_PRICE_CREDITS = 1_000_000_000
MAX_SERVICE_ID_CHARS = 64
#: The fields of a listed directive the rule reads.
DIRECTIVE_FIELDS = ("service_id", "kind", "spec", "price_credits", "critical")


class Refused(Exception):
    """A directive the core's rule refuses: ``kind`` is ``invalid``,
    ``local_command_refused`` or ``mcp_server_not_https``, ``field`` what is at fault."""

    def __init__(self, kind: str, field: str, message: str = "") -> None:
        super().__init__(f"{kind}: {field}")
        self.kind, self.field, self.message = kind, field, message


def _text(m: Mapping[str, Any], key: str, field: str, max_chars: int) -> str:
    v = m.get(key)
    if v is None:
        raise Refused("invalid", field, "missing")
    if not isinstance(v, str):
        raise Refused("invalid", field, "must be a string")
    if not _rust_trim(v):
        raise Refused("invalid", field, "must not be empty")
    if len(v) > max_chars:
        raise Refused("invalid", field, f"longer than {max_chars} characters")
    return v


def _url(m: Mapping[str, Any], key: str, field: str) -> str:
    u = _text(m, key, field, MAX_URL_CHARS)
    if any(c in _WHITE_SPACE or _is_control(c) for c in u):
        raise Refused("invalid", field, "must be a URL without spaces or control characters")
    return u


def _object(v: Any, field: str, keys: Tuple[str, ...]) -> Dict[str, Any]:
    if not isinstance(v, dict):
        raise Refused("invalid", field, "must be an object with " + ", ".join(keys))
    # The core's maps are ordered by key: the first unknown key in that order is named.
    unknown = sorted(k for k in v if k not in keys)
    if unknown:
        raise Refused("invalid", f"{field}.{unknown[0]}", "unknown key")
    return v


def _strings(v: Any, field: str, max_items: int, max_chars: int, min_items: int) -> List[str]:
    if not isinstance(v, list):
        raise Refused("invalid", field, "must be an array of strings")
    if not min_items <= len(v) <= max_items:
        raise Refused("invalid", field, f"must hold {min_items} to {max_items} strings")
    for i, s in enumerate(v):
        if not (isinstance(s, str) and len(s) <= max_chars and (min_items == 0 or s)):
            raise Refused("invalid", f"{field}[{i}]", "must be a non-empty string")
    return list(v)


def _mcp_server(v: Any) -> Dict[str, str]:
    if isinstance(v, dict):
        # Named before any other fault, so an old `{command, args}` row reads as what it is.
        for k in ("command", "args"):
            if k in v:
                raise Refused("local_command_refused", f"spec.mcp_server.{k}")
    m = _object(v, "spec.mcp_server", ("url",))
    url = _url(m, "url", "spec.mcp_server.url")
    scheme, sep, _ = url.partition(":")
    if not sep or _ascii_lower(scheme) != "https":
        raise Refused("mcp_server_not_https", "spec.mcp_server.url")
    return {"url": url}


def check_directive(body: Any) -> Dict[str, Any]:
    """The directive as the core's rule reads it (``{service_id, kind, spec,
    price_credits, critical}``); raises :class:`Refused`. A directive never runs a
    program: an ``mcp_server`` with a ``command`` or ``args`` is refused by name, and its
    URL must be https."""
    try:
        m = _object(body, "body", DIRECTIVE_FIELDS)
    except Refused as e:
        if e.field == "body":
            raise Refused("invalid", "body", "must be a JSON object") from None
        raise
    service_id = _text(m, "service_id", "service_id", MAX_SERVICE_ID_CHARS)
    kind = m.get("kind")
    if kind not in ("protocol", "agent") or not isinstance(kind, str):
        raise Refused("invalid", "kind", "must be protocol or agent")
    price = m.get("price_credits")
    if not (isinstance(price, int) and not isinstance(price, bool) and 1 <= price <= MAX_PRICE_CREDITS):
        raise Refused("invalid", "price_credits", "must be a whole number of credits")
    critical = m.get("critical")
    if critical is not None and not isinstance(critical, bool):
        raise Refused("invalid", "critical", "must be true or false")
    spec: Dict[str, Any]
    if kind == "protocol":
        s = _object(m.get("spec"), "spec", ("remote_url",))
        spec = {"remote_url": _url(s, "remote_url", "spec.remote_url")}
    else:
        s = _object(m.get("spec"), "spec", ("prompt", "mcp_server", "expect"))
        server = _mcp_server(s.get("mcp_server"))
        prompt = _text(s, "prompt", "spec.prompt", MAX_PROMPT_CHARS)
        expect = _object(s.get("expect"), "spec.expect", ("contains",))
        contains = _strings(expect.get("contains"), "spec.expect.contains", MAX_EXPECTED, MAX_EXPECT_CHARS, 1)
        spec = {"prompt": prompt, "mcp_server": server, "expect": {"contains": contains}}
    return {"service_id": service_id, "kind": kind, "spec": spec, "price_credits": price, "critical": bool(critical)}


# --- JSON as JavaScript reads and writes it (lowdown-core schema_hash) ------------------


class JsonError(Exception):
    """Not JSON (``invalid_json``) or nested deeper than 512 levels (``too_deep``)."""


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are no JSON


_BRACKETS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def js_parse(data: bytes) -> Any:
    """Parses JSON text as ``JSON.parse`` does: bytes that are not UTF-8 replaced first,
    numbers as doubles, lone surrogate escapes kept, a repeated key's last value; raises
    :class:`JsonError`. Nesting is measured before parsing, so hostile depth is refused
    rather than recursed into (a text that is also broken before its depth passes 512 is
    then ``too_deep`` where the core says ``invalid_json``; both are refusals)."""
    text = data.decode("utf-8", "replace")
    depth = 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonError("too_deep")
        elif c in "]}":
            depth -= 1
    try:
        return json.loads(text, parse_int=float, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise JsonError("invalid_json") from None


def js_number(n: float) -> str:
    """A double as ``JSON.stringify`` writes it."""
    if n != n or n in (float("inf"), float("-inf")):
        return "null"
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    mant, _, exp_text = repr(abs(n)).partition("e")
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    exp = (int(exp_text) if exp_text else 0) - len(fp)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    k, point = len(stripped), len(stripped) + exp
    if k <= point <= 21:
        return sign + stripped + "0" * (point - k)
    if 0 < point <= 21:
        return sign + stripped[:point] + "." + stripped[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + stripped
    e = point - 1
    e_text = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + stripped + "e" + e_text
    return sign + stripped[0] + "." + stripped[1:] + "e" + e_text


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')


def js_string(s: str) -> str:
    """A string as ``JSON.stringify`` writes it (lone surrogates as ``\\udXXX``)."""
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), "\\u%04x" % ord(m.group())), s) + '"'


def utf16_key(s: str) -> bytes:
    """A sort key ordering strings by UTF-16 code units, as JavaScript sorts them."""
    return s.encode("utf-16-be", "surrogatepass")


def canonical(v: Any) -> str:
    """Canonical JSON of a parsed value: keys sorted by UTF-16 code units, no whitespace,
    strings and numbers as ``JSON.stringify`` writes them."""
    out: List[str] = []
    _write(v, out)
    return "".join(out)


def _write(v: Any, out: List[str]) -> None:
    # One frame per nesting level (512 at most), loops within a level.
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, float):
        out.append(js_number(v))
    elif isinstance(v, int):  # only ids of Claude's own messages (remote numbers are doubles)
        out.append(str(v))
    elif isinstance(v, str):
        out.append(js_string(v))
    elif isinstance(v, list):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _write(x, out)
        out.append("]")
    else:
        out.append("{")
        for i, k in enumerate(sorted(v, key=utf16_key)):
            out.append("," + js_string(k) + ":" if i else js_string(k) + ":")
            _write(v[k], out)
        out.append("}")


def canonical_json(data: bytes) -> str:
    """Canonical JSON of a JSON text; raises :class:`JsonError`."""
    return canonical(js_parse(data))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _hash_sorted(entries: List[str]) -> str:
    entries.sort(key=utf16_key)
    return hashlib.sha256(_utf8("[" + ",".join(entries) + "]")).hexdigest()


def _entry(tool: Any, keys: Tuple[str, ...]) -> str:
    if not isinstance(tool, dict):
        return "{}"
    return "{" + ",".join(js_string(k) + ":" + canonical(tool[k]) for k in keys if k in tool) + "}"


def hash_tools_value(tools: Any) -> Dict[str, Any]:
    """SPEC §3.3 hashes of a parsed ``tools`` array (anything else hashes as ``[]``)."""
    items = tools if isinstance(tools, list) else []
    return {
        "schema_hash": _hash_sorted([_entry(t, ("inputSchema", "name", "outputSchema")) for t in items]),
        "desc_hash": _hash_sorted([_entry(t, ("description", "name", "title")) for t in items]),
        "tool_count": len(items),
        "has_more": False,
    }


def hash_tools_result(data: bytes) -> Dict[str, Any]:
    """SPEC §3.3 hashes of a ``tools/list`` result's JSON text; raises :class:`JsonError`."""
    result = js_parse(data)
    r = result if isinstance(result, dict) else {}
    return dict(hash_tools_value(r.get("tools")), has_more=r.get("nextCursor") is not None)


# --- Reading one JSON-RPC answer, JSON or SSE (lowdown-core scanner::{rpc, sse}) --------

_LINE_END = re.compile(rb"[\r\n]")
#: The message of the answer, or why none: ``not_json_rpc``, ``no_answer``, ``too_large``.
Answer = Tuple[Optional[Dict[str, Any]], Optional[str]]


class SseDecoder:
    """An incremental ``text/event-stream`` decoder: ``data:`` lines joined with ``\\n``,
    dispatched at a blank line; an event left open when the stream ends still counts."""

    def __init__(self) -> None:
        self.line = bytearray()
        self.data = bytearray()
        self.has_data = False
        self.after_cr = False

    def feed(self, chunk: bytes, on_event: Callable[[bytes], bool]) -> bool:
        """Feeds ``chunk``; ``True`` as soon as ``on_event`` returns ``True``."""
        i, n = 0, len(chunk)
        if self.after_cr and n:
            self.after_cr = False
            if chunk[0] == 0x0A:
                i = 1
        while i < n:
            m = _LINE_END.search(chunk, i)
            if m is None:
                self.line += chunk[i:]
                return False
            j = m.start()
            self.line += chunk[i:j]
            i = j + 1
            if chunk[j] == 0x0D:
                if i < n:
                    if chunk[i] == 0x0A:
                        i += 1
                else:
                    self.after_cr = True
            if self._end_line(on_event):
                return True
        return False

    def finish(self, on_event: Callable[[bytes], bool]) -> bool:
        """Ends the stream, dispatching a pending event."""
        if self.line and self._end_line(on_event):
            return True
        return self._dispatch(on_event)

    def _end_line(self, on_event: Callable[[bytes], bool]) -> bool:
        line = bytes(self.line)
        self.line.clear()
        if not line:
            return self._dispatch(on_event)
        if line[0] == 0x3A:
            return False
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            if self.has_data:
                self.data += b"\n"
            self.data += value
            self.has_data = True
        return False

    def _dispatch(self, on_event: Callable[[bytes], bool]) -> bool:
        if not self.has_data:
            return False
        self.has_data = False
        stop = on_event(bytes(self.data))
        self.data.clear()
        return stop


def _answers(v: Any, rid: int) -> bool:
    i = v.get("id") if isinstance(v, dict) else None
    return type(i) is float and i == rid and ("result" in v or "error" in v)


def find_answer(text: bytes, rid: int) -> Answer:
    """The response to request ``rid`` in one JSON text (an object or a batch)."""
    try:
        v = js_parse(text)
    except JsonError:
        return None, "not_json_rpc"
    if isinstance(v, list):
        hit = next((m for m in v if _answers(m, rid)), None)
    elif isinstance(v, dict):
        hit = v if _answers(v, rid) else None
    else:
        return None, "not_json_rpc"
    return (hit, None) if hit is not None else (None, "no_answer")


class AnswerReader:
    """Reads the answer to request ``rid`` from body chunks under a byte cap, from a JSON
    body or an SSE stream (complete at the event that answers)."""

    def __init__(self, content_type: Optional[str], rid: int, cap: int) -> None:
        media = (content_type or "").split(";")[0].strip()
        self.rid, self.cap, self.read = rid, cap, 0
        self.sse = SseDecoder() if content_type is not None and _ascii_lower(media) == "text/event-stream" else None
        self.buf = bytearray()
        self.found: Optional[Dict[str, Any]] = None
        self.saw_json = False
        self.over_cap = False

    def _on_event(self, data: bytes) -> bool:
        m, why = find_answer(data, self.rid)
        if m is not None:
            self.found = m
            return True
        if why == "no_answer":
            self.saw_json = True
        return False

    def feed(self, chunk: bytes) -> bool:
        """Feeds the next chunk; ``True`` once the answer is complete or the cap passed."""
        if self.found is not None or self.over_cap:
            return True
        self.read += len(chunk)
        if self.read > self.cap:
            self.over_cap = True
            return True
        if self.sse is None:
            self.buf += chunk
            return False
        return self.sse.feed(chunk, self._on_event)

    def finish(self) -> Answer:
        """The answer once the body ended (or :meth:`feed` said complete)."""
        if self.found is not None:
            return self.found, None
        if self.over_cap:
            return None, "too_large"
        if self.sse is None:
            return find_answer(bytes(self.buf), self.rid)
        self.sse.finish(self._on_event)
        if self.found is not None:
            return self.found, None
        return None, "no_answer" if self.saw_json else "not_json_rpc"


# --- The probe of one remote (lowdown-core scanner::{probe, tools, quality}) ------------

#: A reply to one request: ``{"failed": error_type}`` or ``{"status", "session_id",
#: "www_authenticate", "elapsed_ms", "answer": (message | None, why | None)}`` where why is
#: ``not_read``, an answer error or ``transport:<error_type>``.
Reply = Dict[str, Any]
Request = Dict[str, Any]


def _body(v: Dict[str, Any]) -> bytes:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _wtf8_to_text(s: str) -> str:
    return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _trimmed_len(v: Any) -> Optional[int]:
    return len(v.strip(" \t\n\r\x0c")) if isinstance(v, str) else None


def _version(v: Any) -> Optional[str]:
    """A server or protocol version under the §3.2 rule, or ``None``."""
    if not isinstance(v, str):
        return None
    cleaned = "".join(c for c in _wtf8_to_text(v) if not _is_control(c))
    ok = 1 <= len(cleaned.encode("utf-8")) <= MAX_VERSION and all(
        (c.isascii() and c.isalnum()) or c in ".+_-" for c in cleaned)
    return cleaned if ok else None


def _result(m: Dict[str, Any]) -> Tuple[bool, Any]:
    """``(True, result)`` for a successful response, ``(False, None)`` for an error."""
    if "error" in m or "result" not in m:
        return False, None
    return True, m["result"]


def is_valid_session_id(sid: str) -> bool:
    return 1 <= len(sid) <= 1024 and all("\x21" <= c <= "\x7e" for c in sid)


class Tools:
    """What the probe keeps of ``tools/list`` over every page: the first page's hashes,
    the count, whether pages were left unread, and the conformance counts."""

    def __init__(self) -> None:
        self.pages = 0
        self.first: Optional[Dict[str, Any]] = None
        self.count = 0
        self.has_more = False
        self.quality = {"tools": 0, "documented": 0, "with_schema": 0, "properties": 0,
                        "described_properties": 0, "long_names": 0}

    def _count(self, tool: Any) -> None:
        q = self.quality
        q["tools"] += 1
        if not isinstance(tool, dict):
            return
        if (_trimmed_len(tool.get("description")) or 0) >= MIN_DESCRIPTION_CHARS:
            q["documented"] += 1
        name = tool.get("name")
        if isinstance(name, str) and len(name) > MAX_TOOL_NAME_CHARS:
            q["long_names"] += 1
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            return
        q["with_schema"] += 1
        props = schema.get("properties")
        if isinstance(props, dict):
            for p in props.values():
                q["properties"] += 1
                if isinstance(p, dict) and (_trimmed_len(p.get("description")) or 0) > 0:
                    q["described_properties"] += 1

    def add_page(self, answer: Dict[str, Any]) -> Tuple[bool, Optional[str]]:
        """Adds one answer; ``(is_tool_list, next_cursor)``."""
        _, result = _result(answer)
        r = result if isinstance(result, dict) else {}
        tools = r.get("tools")
        if not isinstance(tools, list):
            return False, None
        cursor = r.get("nextCursor")
        next_cursor = _wtf8_to_text(cursor) if isinstance(cursor, str) and cursor else None
        if self.pages == 0:
            self.first = hash_tools_value(tools)
        self.pages += 1
        self.count += len(tools)
        self.has_more = r.get("nextCursor") is not None
        for t in tools:
            self._count(t)
        return True, next_cursor

    def finish(self) -> Optional[Dict[str, Any]]:
        if self.first is None:
            return None
        return {"tool_count": self.count, "tools_has_more": self.has_more,
                "schema_hash": self.first["schema_hash"], "quality": dict(self.quality)}


class Probe:
    """The Scanner's probe of one remote as a state machine, as the core's ``Probe``:
    :meth:`start`, :meth:`on_failed` and :meth:`on_response` return the next request
    (``{"method", "headers", "body", "answer"}``, ``answer`` being ``(id, cap)`` when a
    JSON-RPC answer is to be read) or ``{"done": conformance}`` (:func:`score`).
    ``server/discover`` is never tried (the core's ``modern`` off, as the hook runs it)."""

    def __init__(self, client_version: str) -> None:
        self.phase = "initialize"
        self.client_version = client_version
        self.session: Optional[str] = None
        self.protocol = PROTOCOL_VERSION
        self.next_id = 2
        self.cursors: set[str] = set()
        self.tools = Tools()
        self.result: Dict[str, Any] = {
            "reached_level": 0, "http_status": None, "error_type": None, "latency_ms": None,
            "server_version": None, "protocol_version": None, "www_authenticate": False,
            "tools": None, "initialize_status": None,
            "server": {"instructions": False, "name": False, "version": False},
        }

    def _post(self, body: bytes, answer: Optional[Tuple[int, int]]) -> Request:
        headers = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
        if self.phase != "initialize":
            headers.append(("mcp-protocol-version", self.protocol))
        if self.session is not None:
            headers.append(("mcp-session-id", self.session))
        return {"method": "POST", "headers": headers, "body": body, "answer": answer}

    def start(self) -> Request:
        self.phase = "initialize"
        return self._post(_body({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": self.client_version}}}), (1, INITIALIZE_BODY_CAP))

    def _tools_page(self, cursor: Optional[str]) -> Request:
        self.phase = "tools"
        rid = self.next_id
        self.next_id += 1
        params = {} if cursor is None else {"cursor": cursor}
        return self._post(_body({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": params}),
                          (rid, TOOLS_BODY_CAP))

    def _finish(self) -> Request:
        if self.session is not None and self.phase != "delete":
            self.phase = "delete"
            return {"method": "DELETE", "body": b"", "answer": None,
                    "headers": [("mcp-session-id", self.session), ("mcp-protocol-version", self.protocol)]}
        self.result["tools"] = self.tools.finish()
        return {"done": score(self.result)}

    def _answer_of(self, reply: Reply) -> Optional[Dict[str, Any]]:
        if "failed" in reply:
            self.result["error_type"] = reply["failed"]
            return None
        status = reply["status"]
        self.result["http_status"] = status
        self.result["www_authenticate"] = bool(reply.get("www_authenticate"))
        message, why = reply["answer"]
        if message is not None:
            return message  # type: ignore[no-any-return]
        if why == "not_read" and not 200 <= status < 300:
            return None
        if why is not None and why.startswith("transport:"):
            self.result["error_type"] = why.split(":", 1)[1]
            return None
        self.result["error_type"] = "invalid_response"
        return None

    def on_failed(self, error_type: str) -> Request:
        """No HTTP response (``timeout``, ``dns``, ``tls``, ``conn_refused``, ...)."""
        return self._on_reply({"failed": error_type})

    def on_response(self, status: int, session_id: Optional[str], www_authenticate: bool, elapsed_ms: float,
                    answer: Optional["AnswerReader"] = None, body_error: Optional[str] = None) -> Request:
        """An HTTP response; ``answer`` is the reader fed with the 2xx body the step asked
        for, ``body_error`` the ``error_type`` that cut that body short."""
        got: Answer = (None, "not_read")
        if body_error is not None:
            got = (None, "transport:" + body_error)
        elif answer is not None:
            got = answer.finish()
        return self._on_reply({"status": status, "session_id": session_id, "www_authenticate": www_authenticate,
                               "elapsed_ms": elapsed_ms, "answer": got})

    def _on_reply(self, reply: Reply) -> Request:
        if self.phase == "initialize":
            return self._on_initialize(reply)
        if self.phase == "initialized":
            return self._tools_page(None)
        if self.phase == "tools":
            return self._on_tools(reply)
        return self._finish()

    def _on_initialize(self, reply: Reply) -> Request:
        if "failed" not in reply:
            self.result["latency_ms"] = reply["elapsed_ms"]
            sid = reply.get("session_id")
            self.session = sid if isinstance(sid, str) and is_valid_session_id(sid) else None
        m = self._answer_of(reply)
        if m is None:
            self.session = None
            return self._finish()
        ok, r = _result(m)
        if ok and isinstance(r, dict):
            res = self.result
            res["reached_level"] = 1
            res["initialize_status"] = res["http_status"]
            info = r.get("serverInfo")
            info = info if isinstance(info, dict) else {}
            res["server"] = {
                "instructions": (_trimmed_len(r.get("instructions")) or 0) > 0,
                "name": (_trimmed_len(info.get("name")) or 0) > 0,
                "version": (_trimmed_len(info.get("version")) or 0) > 0,
            }
            res["server_version"] = _version(info.get("version"))
            res["protocol_version"] = _version(r.get("protocolVersion"))
            if res["protocol_version"] is not None:
                self.protocol = res["protocol_version"]
            self.phase = "initialized"
            return self._post(_body({"jsonrpc": "2.0", "method": "notifications/initialized"}), None)
        if ok:
            self.result["error_type"] = "invalid_response"
        self.session = None
        return self._finish()

    def _on_tools(self, reply: Reply) -> Request:
        first = self.tools.pages == 0
        saved = self.result["error_type"]
        m = self._answer_of(reply)
        if not first:
            # Level 2 stands; a later page that fails only leaves pages unread.
            self.result["error_type"] = saved
        if m is None or not _result(m)[0]:
            if not first:
                self.tools.has_more = True
            return self._finish()
        is_list, cursor = self.tools.add_page(m)
        if not is_list:
            if first:
                self.result["error_type"] = "invalid_response"
            else:
                self.tools.has_more = True
            return self._finish()
        self.result["reached_level"] = 2
        if cursor is not None:
            if self.tools.pages < MAX_TOOLS_PAGES and cursor not in self.cursors:
                self.cursors.add(cursor)
                return self._tools_page(cursor)
            self.tools.has_more = True
        return self._finish()


# --- Conformance (lowdown-core benchmark::conformance) ----------------------------------


def round_to(x: float, places: int) -> float:
    """Rounds to ``places`` decimals, halves away from zero (Rust's ``f64::round``)."""
    f = 10.0 ** places
    y = x * f
    a = abs(y)
    r = float(int(a))
    if a - r >= 0.5:
        r += 1.0
    return (r if y >= 0 else -r) / f


def overall(dims: Mapping[str, float], weights: Tuple[Tuple[str, float], ...] = PROTOCOL_WEIGHTS) -> float:
    """The weighted sum × 10, in the weights' order, one decimal."""
    total = 0.0
    for name, w in weights:
        total = total + w * dims.get(name, 0.0)
    return round_to(10.0 * total, 1)


def latency_score(ms: float) -> float:
    if ms <= FAST_MS:
        return 10.0
    if ms >= SLOW_MS:
        return 1.0
    return 10.0 - 9.0 * (ms - FAST_MS) / (SLOW_MS - FAST_MS)


def score(p: Mapping[str, Any]) -> Dict[str, Any]:
    """The conformance of one probe: ``{dimensions, overall_score, findings,
    test_results, observed}``."""
    tools = p["tools"]
    q = tools["quality"] if tools else {k: 0 for k in ("tools", "documented", "with_schema", "properties",
                                                      "described_properties", "long_names")}
    level = p["reached_level"]
    has_more = bool(tools and tools["tools_has_more"])
    if q["tools"] == 0:
        documentation = schema = 0.0
    else:
        described = 1.0 if q["properties"] == 0 else q["described_properties"] / q["properties"]
        documentation = 10.0 * (q["documented"] / q["tools"])
        schema = 10.0 * (0.7 * (q["with_schema"] / q["tools"]) + 0.3 * described)
    s = p["server"]
    values = [
        10.0 if level >= 1 else 0.0,
        (5.0 if has_more else 10.0) if level == 2 else 0.0,
        documentation,
        schema,
        latency_score(p["latency_ms"]) if p["latency_ms"] is not None and level >= 1 else 0.0,
        float(6 * s["instructions"] + 2 * s["name"] + 2 * s["version"]),
    ]
    dims = {name: round_to(v, 2) for (name, _), v in zip(PROTOCOL_WEIGHTS, values)}
    counts = [
        ("long_tool_names", q["long_names"]),
        ("undocumented_tools", q["tools"] - min(q["documented"], q["tools"])),
        ("tools_without_schema", q["tools"] - min(q["with_schema"], q["tools"])),
        ("undescribed_properties", q["properties"] - min(q["described_properties"], q["properties"])),
        ("tools_left_unread", int(level == 2 and has_more)),
    ]
    err = p["error_type"]

    def test(tid: str, passed: bool, status: Optional[int], latency: Optional[float], error: Optional[str]) -> Dict[str, Any]:
        return {"test_case_id": tid, "passed": passed, "actual_status": status, "latency_ms": latency,
                "error": None if passed else error}

    on_tools = tools if level == 2 else None
    return {
        "dimensions": dims,
        "overall_score": overall(dims),
        "findings": [{"kind": k, "count": n} for k, n in counts if n > 0],
        "test_results": [
            test("initialize", level >= 1, p["initialize_status"] if level >= 1 else p["http_status"],
                 p["latency_ms"], err or "no_result"),
            test("tools_list", level == 2, p["http_status"] if level >= 1 else None, None,
                 (err or "no_tool_list") if level == 1 else "not_reached"),
            test("tools_complete", level == 2 and not has_more, None, None,
                 "pages_left_unread" if level == 2 else "not_reached"),
            test("tool_names", level == 2 and q["long_names"] == 0, None, None,
                 "long_tool_names" if level == 2 else "not_reached"),
        ],
        "observed": {
            "reached_level": level,
            "tool_count": on_tools["tool_count"] if on_tools else None,
            "schema_hash": on_tools["schema_hash"] if on_tools else None,
        },
    }


# --- Who decides: this file's ports, or the core (prowl's package) ---------------------


class Runner:
    """What the IO below asks to decide, answered by this file's ports of the core's
    rules, and the name runs go by. prowl's package runs this same IO with a subclass that
    asks its compiled core (``prowl.provider.core``)."""

    #: The ``runner_id`` of a submission and the API's ``User-Agent``.
    name = RUNNER
    #: The probe's client version and the bridge's.
    version = VERSION
    #: What ``bridge`` prints when it is called wrong.
    bridge_usage = "usage: prowl_provider_hook.py bridge [--unsafe-allow-loopback] -- <https url>"

    def api(self, env: Mapping[str, str]) -> Tuple[str, str]:
        """The API's base URL (:func:`api_url`) and the agent key."""
        return api_url(env), env.get("PROWL_AGENT_KEY", "").strip()

    def url_host(self, url: str, allow_loopback: bool) -> str:
        """The host of ``url`` the Scanner's rules accept; raises :class:`Blocked`."""
        return check_url_text(url, allow_loopback)

    def address_allowed(self, ip: str, allow_loopback: bool) -> bool:
        return address_allowed(ip, allow_loopback)

    def check_directive(self, body: Any) -> Dict[str, Any]:
        """The directive the rule accepts; raises :class:`Refused`."""
        return check_directive(body)

    def probe(self) -> Any:
        """A new probe (``start``, ``on_failed``, ``on_response``)."""
        return Probe(self.version)

    def reader(self, content_type: Optional[str], rid: int, cap: int) -> Any:
        """A new answer reader (``feed``) for :meth:`probe` and :meth:`answer`."""
        return AnswerReader(content_type, rid, cap)

    def answer(self, reader: Any) -> Answer:
        """What a reader fed to its end holds."""
        got: Answer = reader.finish()
        return got

    def agent_verdict(self, answer: str, contains: List[str], latency_ms: float) -> Dict[str, Any]:
        return agent_verdict(answer, contains, latency_ms)

    def bridge_args(self, url: str, allow_loopback: bool) -> List[str]:
        """The interpreter's arguments that run the bridge to ``url``."""
        flag = ["--unsafe-allow-loopback"] if allow_loopback else []
        return ["-I", "-S", os.path.abspath(__file__), "bridge", *flag, "--", url]

    def failure(self, e: Exception) -> str:
        """How ``last_error`` names why a claimed directive was released."""
        if isinstance(e, Blocked):
            return f"blocked_url: {e}"
        return str(e) if isinstance(e, (FetchFailed, ApiError, Refused, AgentFailed)) else type(e).__name__


#: This file's own runner.
PORTS = Runner()


# --- The probe over the network (the host's part: it only moves bytes) -----------------


class FetchFailed(Exception):
    """The remote gave no HTTP answer to ``initialize`` (its ``error_type`` is the message)."""


def probe_target(url: str, allow_loopback: bool, runner: Runner = PORTS) -> Tuple[bool, str, int, str]:
    """``(tls, host, port, path)`` of a URL the rules accept; raises :class:`Blocked`."""
    from urllib.parse import urlsplit

    host = runner.url_host(url, allow_loopback)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise Blocked("unparsable") from None
    # The host connected to must be the host the rules judged.
    if (parts.hostname or "").rstrip(".") != host.strip("[]"):
        raise Blocked("host")
    tls = parts.scheme.lower() == "https"
    path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    return tls, host.strip("[]"), port or (443 if tls else 80), path


def checked_addresses(host: str, port: int, allow_loopback: bool, runner: Runner = PORTS) -> List[str]:
    """Every address of ``host``, each checked; raises :class:`Blocked` when any is refused."""
    import socket

    try:
        found = [str(ipaddress.ip_address(host))]
    except ValueError:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        found = list(dict.fromkeys(str(i[4][0]).split("%")[0] for i in infos))
    for ip in found:
        if not runner.address_allowed(ip, allow_loopback):
            raise Blocked("address")
    return found


def error_type(e: BaseException) -> str:
    """The Scanner's ``error_type`` of a failed exchange."""
    import http.client
    import socket
    import ssl

    if isinstance(e, Blocked):
        return "blocked_url"
    if isinstance(e, socket.gaierror):
        return "dns"
    if isinstance(e, (ssl.SSLError, ssl.CertificateError)):
        return "tls"
    if isinstance(e, (TimeoutError, socket.timeout)):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "conn_refused"
    if isinstance(e, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.IncompleteRead)):
        return "conn_reset"
    return "network_error"


def _pinned(host: str, port: int, ip: str, tls: bool, deadline: float) -> Any:
    """A connection to one checked address, TLS verified against the host name; no proxy
    (``http.client`` uses none) and no redirect followed (it follows none)."""
    import http.client
    import socket
    import ssl

    class Pinned(http.client.HTTPConnection):
        def connect(self) -> None:
            sock = socket.create_connection((ip, self.port), max(0.01, deadline - time.monotonic()))
            if tls:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            self.sock = sock

    return Pinned(host, port, timeout=REQUEST_TIMEOUT_S)


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """A wall-clock backstop (POSIX, main thread): :class:`TimeoutError` once ``seconds``
    have passed. Socket timeouts bound each read, not a remote that trickles a byte at a
    time; this bounds the whole exchange."""
    import signal
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("deadline")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def read_body(conn: Any, resp: Any, reader: Any, deadline: float) -> None:
    """Feeds ``resp``'s body to ``reader`` until it has its answer or the body ends;
    :class:`TimeoutError` at ``deadline`` (the reader keeps to its cap)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if conn.sock is not None:
            conn.sock.settimeout(left)
        chunk = resp.read1(1 << 16)
        if not chunk or reader.feed(chunk):
            return


def exchange(probe: Any, req: Request, where: Tuple[bool, str, int, str], ip: str, runner: Runner = PORTS) -> Request:
    """Sends one probe request, reads what the probe asked of the answer (at most its cap,
    within the request's 10 s) and hands the outcome to ``probe``; its next step."""
    tls, host, port, path = where
    start = time.monotonic()
    deadline = start + REQUEST_TIMEOUT_S
    conn = _pinned(host, port, ip, tls, deadline)
    try:
        headers = dict(req["headers"])
        headers["User-Agent"] = runner.name
        conn.request(req["method"], path, body=req["body"] or None, headers=headers)
        resp = conn.getresponse()
    except Exception as e:
        conn.close()
        failed: Request = probe.on_failed(error_type(e))
        return failed
    status = resp.status
    reader, body_error = None, None
    if req["answer"] is not None and 200 <= status < 300:
        rid, cap = req["answer"]
        reader = runner.reader(resp.getheader("content-type"), rid, cap)
        try:
            read_body(conn, resp, reader, deadline)
        except Exception as e:
            body_error = error_type(e)
    elapsed_ms = (time.monotonic() - start) * 1000.0
    session, www = resp.getheader("mcp-session-id"), resp.getheader("www-authenticate") is not None
    conn.close()
    step: Request = probe.on_response(status, session, www, elapsed_ms, reader, body_error)
    return step


def run_protocol(remote_url: str, allow_loopback: bool, runner: Runner = PORTS) -> Dict[str, Any]:
    """Probes ``remote_url`` and scores it. Raises :class:`Blocked` for a refused URL or
    address and :class:`FetchFailed` when ``initialize`` got no HTTP answer at all."""
    import socket

    where = probe_target(remote_url, allow_loopback, runner)
    try:
        ip = checked_addresses(where[1], where[2], allow_loopback, runner)[0]
    except socket.gaierror:
        raise FetchFailed("dns") from None
    probe = runner.probe()
    step = probe.start()
    while "done" not in step:
        with within(REQUEST_TIMEOUT_S + 1.0):  # a second more at most for a trickling remote
            step = exchange(probe, step, where, ip, runner)
    result: Dict[str, Any] = step["done"]
    first = result["test_results"][0]
    if not first["passed"] and first["actual_status"] is None and first["error"] in TRANSPORT:
        raise FetchFailed(first["error"])
    return result


# --- The Lowdown API's provider routes -------------------------------------------------


def api_url(env: Mapping[str, str]) -> str:
    """``PROWL_API_URL``, then ``LOWDOWN_API_URL``, then the default."""
    return (env.get("PROWL_API_URL") or env.get("LOWDOWN_API_URL") or DEFAULT_API_URL).strip().rstrip("/")


def live_url_refusal(base_url: str) -> Optional[str]:
    """Why live mode may not use ``base_url``, or ``None``: https, or http to a loopback
    host only (anyone who can rewrite a plain-http answer could list any directive)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
    except ValueError:
        return f"PROWL_API_URL is not a URL: {base_url!r}"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http":
        try:
            if host == "localhost" or ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            pass
    return (f"PROWL_API_URL must be https in live mode (http only to 127.0.0.1, ::1 or localhost), "
            f"not {parts.scheme}://{host}: nothing was claimed or run")


class ApiError(Exception):
    """The API refused (``status``, ``reason``) or did not answer (``status`` ``None``)."""

    def __init__(self, status: Optional[int], reason: Optional[str], message: str) -> None:
        super().__init__(message)
        self.status, self.reason = status, reason


class Api:
    """The API at ``base`` with the agent key ``key``: one connection per call, a timeout
    on each, ``X-Agent-Key`` on each."""

    def __init__(self, base: str, key: str, user_agent: str = RUNNER) -> None:
        self.base, self.key, self.user_agent = base.rstrip("/"), key, user_agent

    def call(self, method: str, path: str, body: Any = None, timeout: float = API_TIMEOUT_S) -> Dict[str, Any]:
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(self.base)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"X-Agent-Key": self.key, "User-Agent": self.user_agent, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, parts.path.rstrip("/") + path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read(MAX_API_ANSWER)
        except (OSError, http.client.HTTPException) as e:
            raise ApiError(None, None, f"{method} {path}: {type(e).__name__}") from None
        finally:
            conn.close()
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = None
        if resp.status >= 400:
            reason = answer.get("reason") if isinstance(answer, dict) else None
            error = answer.get("error") if isinstance(answer, dict) else None
            raise ApiError(resp.status, reason, f"{method} {path}: {resp.status} {error or ''}".strip())
        if not isinstance(answer, dict):
            if method == "POST" and path.endswith("/release"):
                return {}
            raise ApiError(resp.status, None, f"{method} {path}: {resp.status} answer is not a JSON object")
        return answer

    def directive_path(self, directive_id: str, action: str) -> str:
        from urllib.parse import quote

        return f"/v1/provider/directives/{quote(directive_id, safe='')}/{action}"


# --- `agent` directives: claude --print with this file as its one MCP server ------------

#: The name the benchmark server gets in the MCP config (its tools are mcp__prowl_bench__*).
SERVER_NAME = "prowl_bench"
#: Default seconds an agent run may take (``PROWL_PROVIDER_RUN_TIMEOUT_SECONDS``).
DEFAULT_RUN_TIMEOUT_S = 600.0
#: Largest CLI output read.
MAX_OUTPUT = 8 << 20
#: Default dollar budget of one run (``PROWL_PROVIDER_MAX_BUDGET_USD``).
DEFAULT_BUDGET_USD = 0.25
#: The flags every run gets, after ``--mcp-config <file>`` (each checked against the real
#: CLI's ``--help`` by prowl's tests).
CLAUDE_FLAGS = ("--print", "--output-format", "json", "--strict-mcp-config", "--setting-sources", "",
                "--tools", "", "--allowedTools", f"mcp__{SERVER_NAME}", "--permission-mode", "dontAsk",
                "--disable-slash-commands", "--no-session-persistence", "--max-turns", "8")
#: What the CLI keeps of the hook's environment: where to find programs and its own login,
#: the locale, the Anthropic credentials and endpoint (and Windows' essentials).
CHILD_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
             "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
             "CLAUDE_CONFIG_DIR", "SYSTEMROOT", "USERPROFILE", "APPDATA", "LOCALAPPDATA")
#: Seconds one bridged request may take, answer included.
BRIDGE_TIMEOUT_S = 60.0
#: Largest answer the bridge reads from the remote.
BRIDGE_CAP = 4 << 20
#: Longest message the bridge reads from Claude.
BRIDGE_MAX_LINE = 4 << 20


class AgentFailed(Exception):
    """The run produced no verdict; the message is a stable kind (``blocked_url``,
    ``no_claude_cli``, ``crashed``, ``timeout``, ``unreadable_output``)."""


def agent_verdict(answer: str, contains: List[str], latency_ms: float) -> Dict[str, Any]:
    """The verdict of an ``agent`` run (lowdown-core benchmark::agent): passes when the
    answer holds every expected string."""
    found = [s in answer for s in contains]
    hits = sum(found)
    dims = {"expectations": round_to(10.0 * (hits / len(contains) if contains else 0.0), 2)}
    return {
        "passed": bool(contains) and hits == len(contains),
        "dimensions": dims,
        "overall_score": overall(dims, (("expectations", 1.0),)),
        "test_results": [{"test_case_id": f"contains[{i}]", "passed": ok, "actual_status": None,
                          "latency_ms": latency_ms, "error": None if ok else "not_in_answer"}
                         for i, ok in enumerate(found)],
    }


def claude_command(env: Mapping[str, str]) -> List[str]:
    """``PROWL_CLAUDE_CMD`` split like a shell would, else ``["claude"]``."""
    import shlex

    raw = env.get("PROWL_CLAUDE_CMD", "").strip()
    return shlex.split(raw) if raw else ["claude"]


def configured_claude(env: Mapping[str, str]) -> Optional[str]:
    """The CLI a run would start, resolved on ``PATH``, or ``None``."""
    import shutil

    argv = claude_command(env)
    return shutil.which(argv[0], path=env.get("PATH")) if argv else None


def _run_timeout(env: Mapping[str, str]) -> float:
    try:
        v = float(env.get("PROWL_PROVIDER_RUN_TIMEOUT_SECONDS", ""))
        return v if v > 0 else DEFAULT_RUN_TIMEOUT_S
    except ValueError:
        return DEFAULT_RUN_TIMEOUT_S


def _budget(env: Mapping[str, str]) -> str:
    try:
        v = float(env.get("PROWL_PROVIDER_MAX_BUDGET_USD", ""))
    except ValueError:
        v = DEFAULT_BUDGET_USD
    return f"{v if 0 < v <= 100 else DEFAULT_BUDGET_USD:g}"


def mcp_config(url: str, allow_loopback: bool, runner: Runner = PORTS) -> Dict[str, Any]:
    """The ``--mcp-config`` document: the bridge to ``url`` the one stdio server, after the
    URL passed the SSRF rules here (the bridge checks again and pins the address)."""
    try:
        tls, host, port, _ = probe_target(url, allow_loopback, runner)
        checked_addresses(host, port, allow_loopback, runner)
    except (Blocked, OSError):
        raise AgentFailed("blocked_url") from None
    bridge = {"type": "stdio", "command": sys.executable, "args": runner.bridge_args(url, allow_loopback), "env": {}}
    return {"mcpServers": {SERVER_NAME: bridge}}


def claude_argv(argv: List[str], config_file: str, env: Mapping[str, str]) -> List[str]:
    """The CLI's whole command line: ``argv`` (the resolved CLI and its own arguments), the
    MCP config, :data:`CLAUDE_FLAGS` and the dollar budget."""
    return [*argv, "--mcp-config", config_file, *CLAUDE_FLAGS, "--max-budget-usd", _budget(env)]


def child_env(env: Mapping[str, str], work: str) -> Dict[str, str]:
    """The CLI's environment: :data:`CHILD_ENV` only, its temp directory its own."""
    out = {k: env[k] for k in CHILD_ENV if k in env}
    out.update(TMPDIR=work, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return out


def _cli_answer(stdout: bytes) -> str:
    """The answer text of ``claude --print --output-format json``."""
    try:
        out = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise AgentFailed("unreadable_output") from None
    if isinstance(out, list):  # some versions print the whole message list
        out = next((m for m in reversed(out) if isinstance(m, dict) and m.get("type") == "result"), None)
    result = out.get("result") if isinstance(out, dict) else None
    if not isinstance(out, dict) or out.get("is_error") or not isinstance(result, str):
        raise AgentFailed("unreadable_output")
    return result


def _kill(proc: Any) -> None:
    """Ends the CLI and everything it started (its MCP server): its whole process group."""
    import signal
    import subprocess

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def run_agent(spec: Mapping[str, Any], env: Mapping[str, str], allow_loopback: bool,
              runner: Runner = PORTS) -> Dict[str, Any]:
    """Runs a checked ``agent`` spec through ``claude --print`` and returns its verdict;
    raises :class:`AgentFailed`."""
    import subprocess
    import tempfile

    config = mcp_config(spec["mcp_server"]["url"], allow_loopback, runner)
    argv = claude_command(env)
    exe = configured_claude(env)
    if not exe:
        raise AgentFailed("no_claude_cli")
    with tempfile.TemporaryDirectory(prefix="prowl-bench-") as work:
        cfg = os.path.join(work, "mcp.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        cmd = claude_argv([exe, *argv[1:]], cfg, env)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    cwd=work, env=child_env(env, work), start_new_session=True)
        except OSError:
            raise AgentFailed("no_claude_cli") from None
        try:
            stdout, _ = proc.communicate(spec["prompt"].encode("utf-8"), timeout=_run_timeout(env))
        except subprocess.TimeoutExpired:
            raise AgentFailed("timeout") from None
        finally:
            _kill(proc)
        elapsed_ms = (time.monotonic() - start) * 1000.0
    if proc.returncode != 0:
        raise AgentFailed("crashed")
    if len(stdout) > MAX_OUTPUT:
        raise AgentFailed("unreadable_output")
    return runner.agent_verdict(_cli_answer(stdout), list(spec["expect"]["contains"]), elapsed_ms)


class BridgeRemote:
    """The directive's remote for the bridge, resolved and checked once; every request goes
    to that address (TLS and ``Host`` still the name), no redirect followed, no proxy."""

    def __init__(self, url: str, allow_loopback: bool, runner: Runner = PORTS) -> None:
        self.where = probe_target(url, allow_loopback, runner)
        self.ip = checked_addresses(self.where[1], self.where[2], allow_loopback, runner)[0]
        self.runner = runner
        self.session: Optional[str] = None
        self.version: Optional[str] = None
        self.last_id = 0

    def _headers(self) -> Dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "User-Agent": f"prowl-provider-bridge/{self.runner.version}"}
        if self.session:
            h["Mcp-Session-Id"] = self.session
        if self.version:
            h["MCP-Protocol-Version"] = self.version
        return h

    def send(self, method: str, body: Optional[bytes], answer_id: Optional[int]) -> Tuple[int, Answer]:
        """One exchange; ``(status, answer)``, the answer read only for a 2xx and an id."""
        with within(BRIDGE_TIMEOUT_S + 1.0):
            return self._send(method, body, answer_id)

    def _send(self, method: str, body: Optional[bytes], answer_id: Optional[int]) -> Tuple[int, Answer]:
        tls, host, port, path = self.where
        deadline = time.monotonic() + BRIDGE_TIMEOUT_S
        conn = _pinned(host, port, self.ip, tls, deadline)
        try:
            conn.request(method, path, body=body, headers=self._headers())
            resp = conn.getresponse()
            session = resp.getheader("mcp-session-id")
            if session and self.session is None:
                self.session = session
            if answer_id is None or not 200 <= resp.status < 300:
                return resp.status, (None, "not_read")
            reader = self.runner.reader(resp.getheader("content-type"), answer_id, BRIDGE_CAP)
            read_body(conn, resp, reader, deadline)
            return resp.status, self.runner.answer(reader)
        finally:
            conn.close()

    def call(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        """Forwards one of Claude's requests; the answer under Claude's id, or an error."""
        self.last_id += 1
        rid = self.last_id
        body = json.dumps({**msg, "id": rid}, separators=(",", ":")).encode()
        try:
            status, (answer, why) = self.send("POST", body, rid)
        except Exception as e:
            return _bridge_error(msg["id"], f"the remote gave no answer: {error_type(e)}")
        if answer is None:
            if why not in (None, "not_read"):
                return _bridge_error(msg["id"], f"the remote's answer was refused: {why}")
            moved = " (redirects are not followed)" if 300 <= status < 400 else ""
            return _bridge_error(msg["id"], f"the remote answered HTTP {status}{moved}")
        if msg.get("method") == "initialize" and isinstance(answer.get("result"), dict):
            v = answer["result"].get("protocolVersion")
            self.version = v if isinstance(v, str) and v.isprintable() and len(v) < 32 else None
        return {**answer, "id": msg["id"]}

    def notify(self, msg: Dict[str, Any]) -> None:
        try:
            self.send("POST", json.dumps(msg, separators=(",", ":")).encode(), None)
        except Exception:
            pass

    def close(self) -> None:
        if self.session:
            try:
                self.send("DELETE", None, None)
            except Exception:
                pass


def _bridge_error(rid: Any, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"prowl bridge: {message}"}}


def serve_bridge(remote: BridgeRemote, stdin: Any, stdout: Any) -> None:
    """Relays Claude's messages (one JSON-RPC message per line) until its stdin closes;
    only the answers to Claude's own requests go back (the remote's requests and
    notifications are dropped)."""
    while True:
        line = stdin.readline(BRIDGE_MAX_LINE)
        if not line:
            break
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
            continue  # answers to requests the remote never got to send
        if "id" in msg:
            stdout.write(_utf8(canonical(remote.call(msg))) + b"\n")
            stdout.flush()
        else:
            remote.notify(msg)
    remote.close()


def bridge(args: List[str], runner: Runner = PORTS) -> int:
    """``bridge [--unsafe-allow-loopback] -- <url>``: the one MCP server of an agent run."""
    loopback = args[:1] == ["--unsafe-allow-loopback"]
    rest = args[1:] if loopback else args
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if len(rest) != 1:
        print(runner.bridge_usage, file=sys.stderr)
        return 2
    try:
        remote = BridgeRemote(rest[0], loopback, runner)
    except (Blocked, OSError) as e:
        print(f"prowl bridge: refused {rest[0]!r}: {error_type(e)}", file=sys.stderr)
        return 2
    serve_bridge(remote, sys.stdin.buffer, sys.stdout.buffer)
    return 0


# --- provider_state.json, the lock, the pacing (as prowl.provider.state) ----------------


def provider_dir(env: Mapping[str, str]) -> str:
    """``$XDG_CONFIG_HOME/prowl``, else ``~/.config/prowl``."""
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "prowl")


def private_dir(path: str) -> str:
    """Creates ``path`` (0700) or tightens it to 0700; refuses one another user owns."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.name == "posix":
        st = os.stat(path)
        if st.st_uid != os.getuid():
            raise PermissionError(f"{path} belongs to another user")
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)
    return path


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    try:
        v = float(env.get(name, ""))
    except ValueError:
        return default
    return v if v >= 0 else default


def session_key(event: bytes) -> Optional[str]:
    """The key of the Claude Code session a hook event names (16 hex digits of a sha256 of
    its ``session_id`` text), read without parsing JSON."""
    at = event.find(b'"session_id"')
    if at < 0:
        return None
    rest = event[at + 12:].lstrip()
    if not rest.startswith(b":"):
        return None
    rest = rest[1:].lstrip()
    if not rest.startswith(b'"'):
        return None
    end, i = -1, 1
    while i < len(rest):
        if rest[i] == 0x5C:  # a backslash escapes the next byte
            i += 2
            continue
        if rest[i] == 0x22:
            end = i
            break
        i += 1
    if end <= 1:
        return None
    return hashlib.sha256(rest[1:end]).hexdigest()[:16]


def valid_session_key(key: str) -> bool:
    return len(key) == 16 and all(c in "0123456789abcdef" for c in key)


def read_state(path: str) -> Dict[str, Any]:
    """The state, or ``{}`` when missing or unreadable."""
    try:
        with open(path, "rb") as f:
            v = json.loads(f.read(1 << 20))
        return v if isinstance(v, dict) else {}
    except (OSError, ValueError):
        return {}


def write_state(state: Mapping[str, Any], path: str) -> None:
    """Replaces the file atomically (mode 0600)."""
    import tempfile

    private_dir(os.path.dirname(path))
    fd, tmp = tempfile.mkstemp(prefix=".provider_state.", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def due(state: Mapping[str, Any], live: bool, env: Mapping[str, str], session: Optional[str],
        now_s: Optional[float] = None) -> bool:
    """Whether a run may poll now: the poll interval has passed and, live, the machine's
    and the session's claim gaps (without a session, the claim gap is the machine's)."""
    now = time.time() if now_s is None else now_s

    def since(key: str) -> float:
        v = state.get(key)
        return now - v / 1000.0 if isinstance(v, (int, float)) and not isinstance(v, bool) else float("inf")

    if since("last_poll_at") < _seconds(env, "PROWL_PROVIDER_POLL_SECONDS", DEFAULT_POLL_S):
        return False
    if not live:
        return True
    gap = _seconds(env, "PROWL_PROVIDER_MIN_GAP_SECONDS", DEFAULT_MIN_GAP_S)
    if session is None:
        return since("last_claim_at") >= gap
    return (since("last_claim_at") >= _seconds(env, "PROWL_PROVIDER_MACHINE_GAP_SECONDS", DEFAULT_MACHINE_GAP_S)
            and since(SESSION_CLAIM + session) >= gap)


def note_claim(state: Dict[str, Any], now_ms: int, session: Optional[str], env: Mapping[str, str]) -> None:
    """Notes a claim for the machine and ``session``; forgets sessions no longer held back."""
    keep_ms = _seconds(env, "PROWL_PROVIDER_MIN_GAP_SECONDS", DEFAULT_MIN_GAP_S) * 1000.0
    for key in [k for k in state if k.startswith(SESSION_CLAIM)]:
        at = state[key]
        if not isinstance(at, (int, float)) or now_ms - at >= keep_ms:
            del state[key]
    state["last_claim_at"] = now_ms
    if session is not None:
        state[SESSION_CLAIM + session] = now_ms


def _on(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def take_lock(env: Mapping[str, str]) -> Optional[int]:
    """The lock file's descriptor, locked, or ``None`` when a worker holds it (or the
    directory is not the user's own)."""
    try:
        private_dir(provider_dir(env))
        fd = os.open(os.path.join(provider_dir(env), LOCK_FILE),
                     os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return None
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except ImportError:  # no flock (Windows): the worker locks the file itself
        return fd
    except OSError:
        os.close(fd)
        return None


def spawn_worker(env: Mapping[str, str], session: Optional[str]) -> bool:
    """Starts this file as the detached worker holding the lock; ``False`` when one runs."""
    fd = take_lock(env)
    if fd is None:
        return False
    argv = [sys.executable, "-I", "-S", os.path.abspath(__file__), "worker", str(fd), *([session] if session else [])]
    try:
        if hasattr(os, "posix_spawn"):
            # Only the lock is inherited; the worker runs at nice 10 from its first instruction.
            nice = next((p for p in NICE_PATHS if os.path.exists(p)), None)
            if nice:
                argv = [nice, "-n", "10", *argv]
            os.set_inheritable(fd, True)
            null = [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_RDWR, 0) for n in (0, 1, 2)]
            os.posix_spawn(argv[0], argv, dict(env), file_actions=null, setsid=True)
        else:
            import subprocess

            # DETACHED_PROCESS | NEW_PROCESS_GROUP | BELOW_NORMAL_PRIORITY_CLASS; the worker
            # takes the lock itself (no fd argument).
            subprocess.Popen([a for a in argv if a != str(fd)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True,
                             creationflags=0x00000008 | 0x00000200 | 0x00004000)
    finally:
        os.close(fd)
    return True


# --- The worker ------------------------------------------------------------------------


def checked_spec(d: Mapping[str, Any], runner: Runner = PORTS) -> Dict[str, Any]:
    """The ``spec`` of listed directive ``d`` as the rule reads it; raises :class:`Refused`."""
    spec: Dict[str, Any] = runner.check_directive({k: d.get(k) for k in DIRECTIVE_FIELDS if d.get(k) is not None})["spec"]
    return spec


def refusal(d: Mapping[str, Any], runner: Runner = PORTS) -> Optional[str]:
    """Why the core's rule refuses listed directive ``d``, or ``None``."""
    try:
        checked_spec(d, runner)
        return None
    except Refused as e:
        return str(e)


def runnable(d: Mapping[str, Any], env: Mapping[str, str], runner: Runner = PORTS) -> bool:
    """Whether this machine can run ``d``: the rule accepts it, and for ``agent`` the
    ``claude`` command resolves."""
    if refusal(d, runner) is not None:
        return False
    return d.get("kind") == "protocol" or (d.get("kind") == "agent" and configured_claude(env) is not None)


def summary(d: Mapping[str, Any]) -> Dict[str, Any]:
    """What the state keeps of a directive: no spec, no prompt."""
    return {k: d.get(k) for k in ("directive_id", "service_id", "kind", "critical", "earn_credits")}


def _now_ms() -> int:
    return int(time.time() * 1000)


def run_once(env: Mapping[str, str], session: Optional[str] = None, runner: Runner = PORTS) -> Dict[str, Any]:
    """One pass of the worker (the lock is held) for the Claude Code session of key
    ``session``, if any; returns the state written."""
    path = os.path.join(provider_dir(env), STATE_FILE)
    st = read_state(path)
    live = _on(env, "PROWL_PROVIDER_LIVE")
    if not _on(env, "PROWL_PROVIDER_MODE") or not due(st, live, env, session):
        return st
    base, key = runner.api(env)
    st.update({"mode": "live" if live else "scout", "api_url": base, "last_poll_at": _now_ms()})
    st.pop("last_error", None)

    def done(error: Optional[str] = None) -> Dict[str, Any]:
        if error is not None:
            st["last_error"] = error
        write_state(st, path)
        return st

    if not key:
        return done("PROWL_AGENT_KEY is not set")
    why = live_url_refusal(base) if live else None
    if why:
        return done(why)
    api = Api(base, key, runner.name)
    try:
        listing = api.call("GET", "/v1/provider/directives")
    except ApiError as e:
        return done(str(e))
    listed = listing.get("directives")
    open_ = [d for d in (listed if isinstance(listed, list) else []) if isinstance(d, dict)]
    pick = next((d for d in open_ if runnable(d, env, runner)), None)
    refused = [{"directive_id": str(d.get("directive_id"))[:64], "reason": r} for d in open_ if (r := refusal(d, runner))]
    st.update({"open": len(open_), "held_back": listing.get("held_back", 0), "refused": refused[:20]})
    if not live:
        st["would_claim"] = summary(pick) if pick else None
        return done()
    st.pop("would_claim", None)
    if pick is None:
        return done()
    did = str(pick["directive_id"])
    try:
        api.call("POST", api.directive_path(did, "claim"))
    except ApiError as e:
        return done(str(e))
    note_claim(st, _now_ms(), session, env)
    st["claimed"] = summary(pick)
    write_state(st, path)  # a crash from here on still counts toward the gaps
    try:
        start = time.monotonic()
        spec = checked_spec(pick, runner)
        loopback = _on(env, "PROWL_UNSAFE_ALLOW_LOOPBACK")
        if pick.get("kind") == "protocol":
            result = run_protocol(spec["remote_url"], loopback, runner)
        else:
            result = run_agent(spec, env, loopback, runner)
        body = {
            "directive_id": did,
            "dimensions": result["dimensions"],
            "overall_score": result["overall_score"],
            "test_results": result["test_results"],
            "runner_id": runner.name,
            "execution_time_ms": round((time.monotonic() - start) * 1000.0, 1),
        }
        if "observed" in result:
            body["observed"] = result["observed"]
        answer = api.call("POST", "/v1/provider/submit", body, SUBMIT_TIMEOUT_S)
    except Exception as e:
        # Fail closed: whatever went wrong, the directive goes back to the queue now.
        kind = runner.failure(e)
        try:
            api.call("POST", api.directive_path(did, "release"))
            return done(f"{did}: {kind}; released")
        except ApiError as r:
            # A refused submission has already ended the lease: nothing of ours is held.
            return done(f"{did}: {kind}; " + ("released" if r.reason == "not_claimed" else f"release failed: {r}"))
    st["last_result"] = {
        "directive_id": did,
        "submission_id": answer.get("submission_id"),
        "verification": answer.get("verification"),
        "recorded_score": answer.get("recorded_score"),
        "credited_credits": answer.get("credited_credits"),
        "at": _now_ms(),
    }
    return done()


def worker(args: List[str], runner: Runner = PORTS) -> int:
    """The detached process: ``args[0]`` the inherited lock descriptor (taken here when
    absent), ``args[1]`` the session key, if any."""
    env = dict(os.environ)
    fd = int(args[0]) if args and args[0].isdigit() else take_lock(env)
    session = args[1] if len(args) > 1 and valid_session_key(args[1]) else None
    if fd is None:
        return 0
    if sys.platform == "win32":
        try:
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except (ImportError, OSError):
            return 0
    try:
        run_once(env, session, runner)
    except Exception:
        return 1
    finally:
        os.close(fd)
    return 0


def register(env: Mapping[str, str], runner: Runner = PORTS) -> int:
    """``register``: makes ``PROWL_AGENT_KEY``'s agent a provider; prints the answer."""
    base, key = runner.api(env)
    if not key:
        print("PROWL_AGENT_KEY is not set (register an agent first: POST /v1/auth/agents/register)", file=sys.stderr)
        return 2
    try:
        answer = Api(base, key, runner.name).call("POST", "/v1/provider/register")
    except ApiError as e:
        print(str(e), file=sys.stderr)
        return 1
    print(json.dumps(answer))
    return 0


def hook(event: bytes, env: Mapping[str, str]) -> None:
    """The Stop hook: when provider mode is on and a pass is due, start the worker."""
    if not _on(env, "PROWL_PROVIDER_MODE"):
        return
    session = session_key(event)
    state = read_state(os.path.join(provider_dir(env), STATE_FILE))
    if due(state, _on(env, "PROWL_PROVIDER_LIVE"), env, session):
        spawn_worker(env, session)


def main() -> None:
    """As a hook: start the worker when due, exit 0 quietly. ``worker``: one pass.
    ``bridge``: the MCP server of an agent run. ``register``: make the agent a provider."""
    args = sys.argv[1:]
    if args[:1] == ["worker"]:
        sys.exit(worker(args[1:]))
    if args[:1] == ["register"]:
        sys.exit(register(os.environ))
    if args[:1] == ["bridge"]:
        sys.exit(bridge(args[1:]))
    try:
        hook(sys.stdin.buffer.read(MAX_EVENT) if sys.stdin else b"", os.environ)
    except BaseException:  # a hook never fails the session it runs in
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
