"""``provider_state.json``, the single-flight lock, and the pacing rules read from the state
(SPEC §11).

Both live in the user's own directory, ``$XDG_CONFIG_HOME/prowl/`` (``~/.config/prowl/`` by
default), created 0700 (tightened to 0700 when found looser, refused when another user
owns it), never in a shared temp directory where another local user could create or hold
the lock first. The state is written atomically with mode 0600 and holds what the hook
did last: when it polled, what it would
have claimed (scout) or claimed (live), the last result or error. Never the agent key, a
prompt, an answer or a tool definition.

Pacing: a run polls at most once per ``PROWL_PROVIDER_POLL_SECONDS`` (default 60). Live mode
claims at most once per ``PROWL_PROVIDER_MIN_GAP_SECONDS`` (default 3600) per Claude Code
session (the hook's ``session_id``, kept only as a hash), and at most once per
``PROWL_PROVIDER_MACHINE_GAP_SECONDS`` (default 600) on the machine, however many sessions
are open: a ceiling of six claims an hour. Without a session (the daemon, an event without
one) the claim gap applies to the machine. Gaps count from the last claim whatever became of
it. All are checked by the hook before it spawns a worker (so idle Stop events cost one small
file read) and again by the worker under the lock.

This module is the hook's fast path only; the worker reads and writes the state with the
drop-in hook's functions (:mod:`prowl.prowl_provider_hook`), which this module never imports
(they cost the hook milliseconds).
"""

from __future__ import annotations

import os
import time

# No `typing` or `json` at import: the hook reads its two numbers with `peek` and returns;
# annotations are never evaluated (postponed), so builtin generics serve every version.
# Type checkers treat any `TYPE_CHECKING` as true, so the names below cost nothing at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    #: The environment the pacing rules read (``os.environ`` by default).
    Env = Mapping[str, str]
    #: The state file's JSON object.
    State = dict[str, Any]

#: Seconds between claims of one session by default (one per hour).
DEFAULT_MIN_GAP_S = 3600.0
#: Seconds between any two claims on the machine by default (six an hour at most).
DEFAULT_MACHINE_GAP_S = 600.0
#: The prefix of a session's last-claim key (then the session's hash).
SESSION_CLAIM = "claim_at:"
#: Seconds between polls of the directive list by default.
DEFAULT_POLL_S = 60.0
#: The file's name.
FILE_NAME = "provider_state.json"
#: The single-flight lock's name, beside the state.
LOCK_NAME = "prowl-provider.lock"


def provider_dir(env: Env | None = None) -> str:
    """``$XDG_CONFIG_HOME/prowl``, else ``~/.config/prowl``."""
    base = (os.environ if env is None else env).get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "prowl")


def state_path(env: Env | None = None) -> str:
    """``provider_state.json`` in :func:`provider_dir`."""
    return os.path.join(provider_dir(env), FILE_NAME)


def lock_path(env: Env | None = None) -> str:
    """``prowl-provider.lock`` in :func:`provider_dir`."""
    return os.path.join(provider_dir(env), LOCK_NAME)


def private_dir(path: str) -> str:
    """Creates ``path`` (mode 0700) or makes an existing one 0700; raises ``PermissionError``
    when another user owns it."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.name == "posix":
        st = os.stat(path)
        if st.st_uid != os.getuid():
            raise PermissionError(f"{path} belongs to another user")
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)
    return path


def _seconds(env: Env, name: str, default: float) -> float:
    try:
        v = float(env.get(name, ""))
    except ValueError:
        return default
    return v if v >= 0 else default


def min_gap_s(env: Env | None = None) -> float:
    """``PROWL_PROVIDER_MIN_GAP_SECONDS`` (default 3600)."""
    return _seconds(os.environ if env is None else env, "PROWL_PROVIDER_MIN_GAP_SECONDS", DEFAULT_MIN_GAP_S)


def machine_gap_s(env: Env | None = None) -> float:
    """``PROWL_PROVIDER_MACHINE_GAP_SECONDS`` (default 600)."""
    return _seconds(os.environ if env is None else env, "PROWL_PROVIDER_MACHINE_GAP_SECONDS", DEFAULT_MACHINE_GAP_S)


def session_key(event: bytes) -> str | None:
    """The key of the Claude Code session a hook event names (16 hex digits of a sha256 of
    its ``session_id`` text), or ``None`` when it names none. Read without parsing JSON (the
    hook's fast path): the id's raw text up to its closing quote is all a key needs."""
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
    import hashlib

    return hashlib.sha256(rest[1:end]).hexdigest()[:16]


def poll_s(env: Env | None = None) -> float:
    """``PROWL_PROVIDER_POLL_SECONDS`` (default 60)."""
    return _seconds(os.environ if env is None else env, "PROWL_PROVIDER_POLL_SECONDS", DEFAULT_POLL_S)


def peek(path: str | None = None, session: str | None = None) -> State:
    """``last_poll_at``, ``last_claim_at`` and ``session``'s last claim read from the file as
    the worker writes it (:func:`prowl.prowl_provider_hook.write_state`), without parsing
    JSON (the hook's fast path); anything unexpected reads as absent."""
    try:
        with open(path or state_path(), "r") as f:
            text = f.read(1 << 16)
    except (OSError, ValueError):
        return {}
    out: State = {}
    keys = ["last_claim_at", "last_poll_at"] + ([SESSION_CLAIM + session] if session else [])
    for key in keys:
        at = text.find(f'"{key}"')
        if at < 0:
            continue
        rest = text[at + len(key) + 2:].lstrip()
        if not rest.startswith(":"):
            continue
        rest = rest[1:].lstrip()
        n = 0
        while n < len(rest) and "0" <= rest[n] <= "9":
            n += 1
        # Whole JSON integers only, compact or indented: `123}` and `123,` end the number.
        if n and (n == len(rest) or rest[n] in ",} \t\r\n"):
            out[key] = int(rest[:n])
    return out


def due(state: State, live: bool, env: Env | None = None, now_s: float | None = None,
        session: str | None = None) -> bool:
    """Whether a run may poll now: the poll interval has passed, and in live mode the gaps
    since the machine's last claim and ``session``'s (without a session, the claim gap
    applies to the machine)."""
    now = time.time() if now_s is None else now_s

    def since(key: str) -> float:
        v = state.get(key)
        return now - v / 1000.0 if isinstance(v, (int, float)) else float("inf")

    if since("last_poll_at") < poll_s(env):
        return False
    if not live:
        return True
    if session is None:
        return since("last_claim_at") >= min_gap_s(env)
    return since("last_claim_at") >= machine_gap_s(env) and since(SESSION_CLAIM + session) >= min_gap_s(env)
