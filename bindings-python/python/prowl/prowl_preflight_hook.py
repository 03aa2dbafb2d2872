#!/usr/bin/env python3
"""prowl_preflight_hook.py: a Claude Code ``PreToolUse`` hook that asks before an MCP tool
call when Lowdown's facts about its server say so.

One file, Python's standard library only. Download it (``GET /hooks/prowl_preflight_hook.py``
from any Lowdown server, or run ``prowl-claude-hook preflight`` from the prowl wheel), and
add it to ``~/.claude/settings.json`` under ``PreToolUse`` with matcher ``mcp__.*`` and
``"timeout": 5`` (docs/contribute-telemetry.md).

For a tool named ``mcp__<server>__<tool>`` it asks ``GET /api/preflight/<name>``, where the
name is ``PROWL_PREFLIGHT_TARGETS``'s entry for ``<server>`` (``server=target`` pairs,
comma-separated, e.g. ``github=mcp:io.github.github/github-mcp-server``) or else the server's
own name, resolved by Lowdown as a short name (several matches: nothing is said). When the
answer's ``decision`` is ``ask`` it prints Claude Code's documented ``ask`` decision with a
one-line reason made of the answer's facts; otherwise, and on any error, timeout or garbage,
it prints nothing and exits 0: it never blocks a call. The rule is the server's
(``lowdown_core::preflight``); this file only asks and prints.

Answers are kept ``PROWL_PREFLIGHT_CACHE_SECONDS`` (default 600) in
``$LOWDOWN_HOME/prowl-hook/preflight.json`` (``~/.lowdown`` by default), so one server's many
calls cost one lookup; a lookup waits at most ``PROWL_PREFLIGHT_TIMEOUT_SECONDS`` (default
1.5). Settings: ``PROWL_API_URL``, then ``LOWDOWN_API_URL``, then ``http://127.0.0.1:7077``;
``PROWL_PREFLIGHT=0`` turns it off. Nothing about the call (its input, the prompt) is sent:
only the server's name.
"""

from __future__ import annotations

import json
import os
import sys
import time

# Only what a cached answer needs is imported up front: `urllib.request` (a tenth of a
# second of imports) waits for a lookup, and annotations are never evaluated (postponed).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

DEFAULT_API_URL = "http://127.0.0.1:7077"
PREFLIGHT_PATH = "/api/preflight/"
MAX_STDIN = 8 * 1024 * 1024
#: Bytes of an answer read at most.
MAX_ANSWER = 256 * 1024
#: Names kept in the cache at most (the oldest go first).
CACHE_MAX = 256
#: Characters of the reason shown at most.
REASON_MAX = 600


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    try:
        v = float(env.get(name, ""))
        return v if 0 <= v < 86_400 else default
    except ValueError:
        return default


def server_of(tool_name: Any) -> Optional[str]:
    """``<server>`` of ``mcp__<server>__<tool>``, or ``None`` for any other tool."""
    if not isinstance(tool_name, str) or not tool_name.startswith("mcp__"):
        return None
    server, sep, tool = tool_name[5:].partition("__")
    return server if sep and server and tool else None


def name_for(server: str, env: Mapping[str, str]) -> str:
    """The name asked for: the configured target of ``server``, or the server's own name."""
    for pair in env.get("PROWL_PREFLIGHT_TARGETS", "").split(","):
        key, sep, target = pair.partition("=")
        if sep and key.strip() == server and target.strip():
            return target.strip()
    return server


def _cache_path(env: Mapping[str, str]) -> str:
    home = env.get("LOWDOWN_HOME") or os.path.join(os.path.expanduser("~"), ".lowdown")
    return os.path.join(home, "prowl-hook", "preflight.json")


def _read_cache(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_cache(path: str, cache: Dict[str, Any]) -> None:
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        kept = dict(sorted(cache.items(), key=lambda kv: kv[1].get("at", 0) if isinstance(kv[1], dict) else 0)[-CACHE_MAX:])
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(kept, f)
        os.replace(tmp, path)
    except OSError:
        pass


def lookup(name: str, env: Mapping[str, str], now: float) -> Optional[Dict[str, Any]]:
    """The preflight answer for ``name``: from the cache while fresh, else from the API
    (cached). ``None`` when the API cannot be asked or answers anything but a 200."""
    path = _cache_path(env)
    cache = _read_cache(path)
    hit = cache.get(name)
    ttl = _float(env, "PROWL_PREFLIGHT_CACHE_SECONDS", 600.0)
    if isinstance(hit, dict) and isinstance(hit.get("at"), (int, float)) and 0 <= now - hit["at"] < ttl:
        answer = hit.get("answer")
        return answer if isinstance(answer, dict) else None
    import urllib.parse
    import urllib.request

    base = env.get("PROWL_API_URL") or env.get("LOWDOWN_API_URL") or DEFAULT_API_URL
    url = base.rstrip("/") + PREFLIGHT_PATH + urllib.parse.quote(name, safe=":@")
    timeout = _float(env, "PROWL_PREFLIGHT_TIMEOUT_SECONDS", 1.5)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/json"}), timeout=timeout) as r:
            if r.status != 200:
                return None
            answer = json.loads(r.read(MAX_ANSWER + 1)[:MAX_ANSWER])
    except Exception:  # down, slow, refused, garbage: say nothing
        return None
    if not isinstance(answer, dict):
        return None
    cache[name] = {"at": now, "answer": answer}
    _write_cache(path, cache)
    return answer


def _clean(text: str) -> str:
    """``text`` on one line without control or format characters (each becomes a space), so
    an answer cannot make the reason read as something else."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def decision(payload: Any, env: Mapping[str, str], now: float) -> Optional[Dict[str, Any]]:
    """The hook's output for one ``PreToolUse`` payload, or ``None`` to stay silent."""
    if env.get("PROWL_PREFLIGHT") == "0" or not isinstance(payload, dict):
        return None
    if payload.get("hook_event_name") != "PreToolUse":
        return None
    server = server_of(payload.get("tool_name"))
    if server is None:
        return None
    answer = lookup(name_for(server, env), env, now)
    if not answer or answer.get("decision") != "ask":
        return None
    reasons = [_clean(r) for r in answer.get("reasons", []) if isinstance(r, str)]
    target = answer.get("resolved_target")
    if not reasons or not isinstance(target, str):
        return None
    text = f"Lowdown on {_clean(target)}: " + "; ".join(reasons) + ". Recorded facts, not instructions."
    if len(text) > REASON_MAX:
        text = text[: REASON_MAX - 1] + "…"
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": text,
        }
    }


def main() -> None:
    """Read the hook JSON on stdin, print a decision or nothing, exit 0."""
    try:
        data = sys.stdin.buffer.read(MAX_STDIN + 1)
        if len(data) <= MAX_STDIN:
            out = decision(json.loads(data.decode("utf-8")), os.environ, time.time())
            if out is not None:
                sys.stdout.write(json.dumps(out) + "\n")
    except BaseException:  # even KeyboardInterrupt: a hook must never fail the session
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
