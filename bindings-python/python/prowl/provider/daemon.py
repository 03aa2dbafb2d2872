"""``prowl-provider daemon``: provider mode as a long-running service (SPEC §11), for a
machine that does benchmark work all day rather than in a developer's idle moments.

Each pass is the hook's worker pass (:func:`.worker.run_once`), with the same safeguards:
the single-flight lock the hook takes (so a daemon and a hook on one machine never run at
once), the poll interval and the gap between claims, the core's rule for which directives
may run at all, and failing closed (any failure releases the directive at once). Running
the daemon is the ``PROWL_PROVIDER_MODE`` opt-in; claiming still needs
``PROWL_PROVIDER_LIVE=1`` (scout otherwise), and an agent key.

Between passes it waits for the poll interval (``PROWL_PROVIDER_POLL_SECONDS``, default 60;
at least :data:`MIN_WAIT_S`). SIGTERM or SIGINT stops it: waiting, at once; in the middle of
a directive, the run is ended (the ``claude`` CLI and its MCP server killed), the directive
released and the state written, then it exits 0. A second signal exits at once. One line
per pass goes to stderr (journald keeps it): never a prompt, an answer or the key.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Dict, List, Optional

from .. import prowl_provider_hook as hook
from . import _take_lock, state, worker
from .core import Stopping

#: The shortest wait between passes, whatever the poll interval says.
MIN_WAIT_S = 0.05
USAGE = "usage: prowl-provider daemon | prowl-provider register"


class _Signals:
    """SIGTERM and SIGINT: the first asks to stop (and ends a pass under way), the second
    exits at once."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.busy = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.stop.is_set():
            os._exit(1)
        self.stop.set()
        if self.busy:
            raise Stopping()


def summary(st: Dict[str, Any]) -> str:
    """One line of what a pass did, from the state it wrote."""
    if st.get("last_error"):
        return f"{st.get('mode', '?')}: {st['last_error']}"
    parts: List[str] = [f"{st.get('mode', '?')}: {st.get('open', 0)} open"]
    if st.get("mode") == "scout":
        would = st.get("would_claim")
        parts.append(f"would claim {would['directive_id']}" if isinstance(would, dict) else "nothing to claim")
    last = st.get("last_result")
    if isinstance(last, dict) and last.get("at", 0) >= st.get("last_poll_at", 0):
        parts.append(f"submitted {last.get('directive_id')} ({last.get('verification')})")
    return ", ".join(parts)


def _log(line: str) -> None:
    print(f"prowl-provider: {line}", file=sys.stderr, flush=True)


def daemon(env: Optional[Dict[str, str]] = None) -> int:
    """Runs passes until a stop signal; returns the exit status."""
    env = dict(os.environ if env is None else env)
    env["PROWL_PROVIDER_MODE"] = "1"
    if not env.get("PROWL_AGENT_KEY"):
        _log("PROWL_AGENT_KEY is not set (register an agent: POST /v1/auth/agents/register, then `prowl-provider register`)")
        return 2
    signals = _Signals()
    live = env.get("PROWL_PROVIDER_LIVE", "").strip().lower() in ("1", "true", "yes", "on")
    _log(f"started ({'live' if live else 'scout'}; a pass every {state.poll_s(env):g} s, state in {state.state_path(env)})")
    while not signals.stop.is_set():
        fd = _take_lock()
        if fd is None:
            _log("another run holds the lock; waiting")
        else:
            try:
                signals.busy = True
                before = hook.read_state(state.state_path(env)).get("last_poll_at")
                st = worker.run_once(env)
                signals.busy = False
                if st.get("last_poll_at") != before:
                    _log(summary(st))
            except Stopping:
                pass
            except Exception as e:  # one bad pass never ends the service
                _log(f"pass failed: {type(e).__name__}")
            finally:
                signals.busy = False
                os.close(fd)
        signals.stop.wait(max(state.poll_s(env), MIN_WAIT_S))
    _log("stopped")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """The ``prowl-provider`` console script."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["daemon"]:
        return daemon()
    if args == ["register"]:
        return worker.register_command()
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
