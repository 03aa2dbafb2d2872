"""``prowl-claude-hook``: a Claude Code hook that reports WebFetch calls (SPEC §7);
``prowl-claude-hook preflight`` is the preflight hook instead (:mod:`prowl.prowl_preflight_hook`).

Claude Code runs it for ``PostToolUse`` and ``PostToolUseFailure`` with matcher ``WebFetch``
and writes the hook JSON on stdin. The hook reports one observation: the host of
``tool_input.url`` (never the path or query), the status from ``tool_response.code`` (null
when the fetch failed), the bytes and the latency from ``duration_ms``. It sends within
its own timeout and always exits 0 without printing, whatever it was given.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, Optional

# The reporting path's imports (the core, HTTP) wait for a report, so `preflight` starts
# without them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from . import config

#: Hook events this command reports.
EVENTS = ("PostToolUse", "PostToolUseFailure")
#: The tool whose calls are reported.
TOOL = "WebFetch"
#: Bytes of stdin read at most; a larger payload is ignored.
MAX_STDIN = 8 * 1024 * 1024


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value >= 0 else None


def _first_number(*values: Any) -> Optional[float]:
    for v in values:
        n = _number(v)
        if n is not None:
            return n
    return None


def observation_from_hook(payload: Any, settings: config.Settings) -> Optional[Dict[str, Any]]:
    """The observation for one hook payload, or ``None`` when there is nothing to report
    (another event or tool, no URL, or a host the core's filter refuses)."""
    if not isinstance(payload, dict):
        return None
    event = payload.get("hook_event_name")
    if event not in EVENTS or payload.get("tool_name") != TOOL:
        return None
    tool_input = payload.get("tool_input")
    url = tool_input.get("url") if isinstance(tool_input, dict) else None
    if not isinstance(url, str) or not url:
        return None
    resp = payload.get("tool_response")
    resp = resp if isinstance(resp, dict) else {}
    status: Optional[int] = None
    if event == "PostToolUse":
        code = resp.get("code")
        if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
            status = code
    from . import _core

    latency = _first_number(payload.get("duration_ms"), resp.get("duration_ms"), resp.get("durationMs"))
    nbytes = _number(resp.get("bytes"))
    return _core.prepare_observation(
        url,
        "GET",
        status,
        latency if latency is not None else 0.0,
        int(nbytes) if nbytes is not None else None,
        settings.source,
        settings.policy,
    )


def run(stdin_bytes: bytes) -> Optional[Dict[str, Any]]:
    """Parse, filter and send; returns what was sent (``None`` when nothing was). Never raises."""
    try:
        from . import config
        from .sender import OBSERVE_PATH, post_json

        settings = config.current()
        if not settings.enabled:
            return None
        payload = json.loads(stdin_bytes.decode("utf-8", errors="strict"))
        obs = observation_from_hook(payload, settings)
        if obs is None:
            return None
        post_json(settings.api_url, OBSERVE_PATH, obs, settings.agent_key, config.SEND_TIMEOUT_S)
        return obs
    except Exception:  # garbage in, network down, anything: Claude Code must not notice
        return None


def main() -> None:
    """Console entry point: read stdin, report, exit 0 quietly (``preflight``: the
    preflight hook)."""
    if sys.argv[1:2] == ["preflight"]:
        from . import prowl_preflight_hook

        prowl_preflight_hook.main()
    try:
        data = sys.stdin.buffer.read(MAX_STDIN + 1)
        if len(data) <= MAX_STDIN:
            run(data)
    except BaseException:  # even KeyboardInterrupt: a hook must never fail the session
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
