"""``prowl-provider-hook``: provider mode in a developer's idle time (SPEC §11).

Registered as a Claude Code ``Stop`` hook (``timeout: 5, async: true``), it returns at
once and does its work in a fully detached process:

- nothing at all unless ``PROWL_PROVIDER_MODE=1``;
- *scout* (``PROWL_PROVIDER_MODE=1``): lists open directives and writes what it would have
  claimed to ``provider_state.json``; never claims, runs or sends anything else;
- *live* (``PROWL_PROVIDER_MODE=1`` and ``PROWL_PROVIDER_LIVE=1``): also claims one, runs it
  (``protocol`` in-process, ``agent`` through ``claude --print``) and submits it.

The hook process only takes the single-flight lock (``prowl-provider.lock`` beside the
state, in the user's own 0700 directory, never a shared temp directory) without waiting and hands it to the worker it starts in a new session with
stdio on ``/dev/null`` (``os.posix_spawn(setsid=True)``; ``subprocess.Popen`` with the
detaching flags on Windows): a burst of Stop events starts one worker, and Claude never
waits on it. ``prowl-provider-hook register`` makes ``PROWL_AGENT_KEY``'s agent a
provider, once, by hand.

This module imports nothing heavy (no ``subprocess``, no ``tempfile``): the hook's own time
is Python's start-up, one small file read and, when due, one spawn.
"""

from __future__ import annotations

import os
import sys

# No `typing` at import (it costs the hook milliseconds): annotations are postponed strings.

#: Bytes of the hook's event read at most (its session id is near the start).
MAX_EVENT = 64 * 1024
#: Where `nice` may be (POSIX): the worker starts through it.
NICE_PATHS = ("/usr/bin/nice", "/bin/nice")


def _on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _take_lock() -> int | None:
    """The lock file's descriptor, locked, or ``None`` when a worker holds it (or the
    directory is not the user's own)."""
    from . import state

    try:
        state.private_dir(state.provider_dir())
        fd = os.open(state.lock_path(), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
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


def spawn_worker(session: str | None = None) -> bool:
    """Starts the detached worker holding the lock (for the Claude Code session of that key,
    if any); ``False`` when one already runs."""
    fd = _take_lock()
    if fd is None:
        return False
    argv = [sys.executable, "-m", "prowl.provider.worker", str(fd), *([session] if session else [])]
    try:
        if hasattr(os, "posix_spawn"):
            # Only the lock is inherited (Python opens everything else close-on-exec). The
            # worker runs at low priority (nice 10) from its first instruction: it is
            # idle-time work, and never takes the CPU from the hook or the developer.
            nice = next((p for p in NICE_PATHS if os.path.exists(p)), None)
            if nice:
                argv = [nice, "-n", "10", *argv]
            os.set_inheritable(fd, True)
            null = [(os.POSIX_SPAWN_OPEN, n, os.devnull, os.O_RDWR, 0) for n in (0, 1, 2)]
            os.posix_spawn(argv[0], argv, os.environ, file_actions=null, setsid=True)
        else:
            import subprocess

            # DETACHED_PROCESS | NEW_PROCESS_GROUP | BELOW_NORMAL_PRIORITY_CLASS
            subprocess.Popen(argv[:-1], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, close_fds=True,
                             creationflags=0x00000008 | 0x00000200 | 0x00004000)
    finally:
        os.close(fd)
    return True


def main(argv: list[str] | None = None) -> int:
    """The console script. As a hook: start the worker when provider mode is on, exit 0.
    ``register``: make this agent a provider and print the registration."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["register"]:
        from .worker import register_command

        return register_command()
    if not _on("PROWL_PROVIDER_MODE"):
        return 0
    try:
        from . import state

        session = state.session_key(sys.stdin.buffer.read(MAX_EVENT) if sys.stdin else b"")
        if state.due(state.peek(session=session), live=_on("PROWL_PROVIDER_LIVE"), session=session):
            spawn_worker(session)
    except Exception:  # a hook never fails the session it runs in
        pass
    return 0
