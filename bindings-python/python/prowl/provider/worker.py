"""The detached worker of ``prowl-provider-hook`` (SPEC §11), started with the single-flight
lock already held (its descriptor is the one argument).

One run: check the pacing again under the lock; list the open directives; pick the first
this machine can run (``protocol`` always; ``agent`` when the ``claude`` command resolves)
among those the core's rule accepts (:mod:`.directive`: one the API should never have
listed, such as a program to run, is skipped and named in ``refused``). Live mode talks to
an https API only (http to loopback alone, for a local server).
Scout stops there and writes what it would have claimed. Live claims it, writes the claim
time at once (a crash still counts toward the hourly gap), runs it, submits it, and on any
failure releases it at once (fails closed). Everything it learns goes to
``provider_state.json``; nothing is printed (stdio is ``/dev/null``).

Run by hand: ``python -m prowl.provider.worker`` takes the lock itself.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, List, Optional

from .. import __version__, config
from . import agent, directive, protocol, state
from .api import Api, ApiError, live_url_refusal

RUNNER = f"prowl-provider-hook/{__version__}"


class Stopping(Exception):
    """The service running the pass was asked to stop (``prowl-provider daemon``)."""

    def __str__(self) -> str:
        return "stopped"


def _on(env: Dict[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _now_ms() -> int:
    return int(time.time() * 1000)


def refusal(d: Dict[str, Any]) -> Optional[str]:
    """Why the core's rule refuses directive ``d``, or ``None``."""
    try:
        directive.check(d)
        return None
    except directive.Refused as e:
        return str(e)


def runnable(d: Dict[str, Any], env: Dict[str, str]) -> bool:
    """Whether this machine can run directive ``d`` (the rule accepts it)."""
    if refusal(d) is not None:
        return False
    if d.get("kind") == "protocol":
        return True
    return d.get("kind") == "agent" and agent.configured_command(env) is not None


def summary(d: Dict[str, Any]) -> Dict[str, Any]:
    """What the state file keeps of a directive: no prompt, no expected strings."""
    return {k: d.get(k) for k in ("directive_id", "service_id", "kind", "critical", "earn_credits")}


def execute(d: Dict[str, Any], env: Dict[str, str]) -> Dict[str, Any]:
    """Runs one claimed directive and returns the submission body: for ``protocol``, with
    what the probe observed (level, tool count, schema hash), which the server checks
    against a probe of its own."""
    loopback = _on(env, "PROWL_UNSAFE_ALLOW_LOOPBACK")
    start = time.monotonic()
    if d["kind"] == "protocol":
        result = protocol.run(d["spec"]["remote_url"], loopback, RUNNER, __version__)
    else:
        result = agent.run(d, env, loopback)
    body = {
        "directive_id": d["directive_id"],
        "dimensions": result["dimensions"],
        "overall_score": result["overall_score"],
        "test_results": result["test_results"],
        "runner_id": RUNNER,
        "execution_time_ms": round((time.monotonic() - start) * 1000.0, 1),
    }
    if "observed" in result:
        body["observed"] = result["observed"]
    return body


def run_once(env: Optional[Dict[str, str]] = None, session: Optional[str] = None) -> Dict[str, Any]:
    """One pass (the lock is held) for the Claude Code session of key ``session``, if any;
    returns the state written."""
    env = dict(os.environ if env is None else env)
    path = state.state_path(env)
    st = state.read(path)
    live = _on(env, "PROWL_PROVIDER_LIVE")
    if not _on(env, "PROWL_PROVIDER_MODE") or not state.due(st, live, env, session=session):
        return st
    settings = config.Settings.from_env(env)
    st.update({"mode": "live" if live else "scout", "api_url": settings.api_url, "last_poll_at": _now_ms()})
    st.pop("last_error", None)
    if not settings.agent_key:
        st["last_error"] = "PROWL_AGENT_KEY is not set"
        state.write(st, path)
        return st
    if live and (why := live_url_refusal(settings.api_url)):
        st["last_error"] = why
        state.write(st, path)
        return st
    api = Api(settings.api_url, settings.agent_key, RUNNER)
    try:
        listing = api.directives()
    except ApiError as e:
        st["last_error"] = str(e)
        state.write(st, path)
        return st
    open_: List[Dict[str, Any]] = [d for d in listing.get("directives") or [] if isinstance(d, dict)]
    pick = next((d for d in open_ if runnable(d, env)), None)
    refused = [{"directive_id": str(d.get("directive_id"))[:64], "reason": why} for d in open_ if (why := refusal(d))]
    st.update({"open": len(open_), "held_back": listing.get("held_back", 0), "refused": refused[:20]})
    if not live:
        st["would_claim"] = summary(pick) if pick else None
        state.write(st, path)
        return st
    st.pop("would_claim", None)
    if pick is None:
        state.write(st, path)
        return st
    try:
        api.claim(pick["directive_id"])
    except ApiError as e:
        st["last_error"] = str(e)
        state.write(st, path)
        return st
    state.claimed(st, _now_ms(), session, env)
    st["claimed"] = summary(pick)
    state.write(st, path)
    try:
        body = execute(pick, env)
        answer = api.submit(body)
    except Exception as e:
        # Fail closed: whatever went wrong, the directive goes back to the queue now.
        kind = str(e) if isinstance(e, (agent.AgentFailed, protocol.FetchFailed, protocol.Blocked, ApiError,
                                        directive.Refused, Stopping)) else type(e).__name__
        try:
            api.release(pick["directive_id"])
            st["last_error"] = f"{pick['directive_id']}: {kind}; released"
        except ApiError as r:
            # A refused submission (contradicts_probe, probe_unverified, ...) has already
            # ended the lease: the server holds none of ours, which is what release wants.
            done = "released" if r.reason == "not_claimed" else f"release failed: {r}"
            st["last_error"] = f"{pick['directive_id']}: {kind}; {done}"
        state.write(st, path)
        return st
    st["last_result"] = {
        "directive_id": pick["directive_id"],
        "submission_id": answer.get("submission_id"),
        "verification": answer.get("verification"),
        "recorded_score": answer.get("recorded_score"),
        "credited_credits": answer.get("credited_credits"),
        "at": _now_ms(),
    }
    state.write(st, path)
    return st


def _lock_self() -> Optional[int]:
    from . import _take_lock

    return _take_lock()


def register_command() -> int:
    """``prowl-provider-hook register``: makes ``PROWL_AGENT_KEY``'s agent a provider."""
    import json

    settings = config.current()
    if not settings.agent_key:
        print("PROWL_AGENT_KEY is not set (register an agent first: POST /v1/auth/agents/register)", file=sys.stderr)
        return 2
    try:
        answer = Api(settings.api_url, settings.agent_key, RUNNER).register()
    except ApiError as e:
        print(str(e), file=sys.stderr)
        return 1
    print(json.dumps(answer))
    return 0


def main(argv: List[str]) -> int:
    """Entry of the detached process: argv[0] is the inherited lock descriptor, if any."""
    fd = int(argv[0]) if argv and argv[0].isdigit() else _lock_self()
    session = argv[1] if len(argv) > 1 and state.valid_session_key(argv[1]) else None
    if fd is None:
        return 0
    if sys.platform == "win32":  # os.name == "nt", spelled so type checkers know msvcrt is there
        try:
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except (ImportError, OSError):
            return 0
    try:
        run_once(session=session)
    except Exception:
        return 1
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
