"""The spool for interaction records the API could not take (SPEC §3).

Its format, names, bounds and claims, and the plans for writing and claiming (which file,
what an empty, corrupt, stale or raced file means), are the core's (``record::spool``,
shared with ``lowdown-proxy``): prowl and the proxy write the same files under
``LOWDOWN_HOME/spool/``, and whichever starts next delivers them. This module runs the
plans (:mod:`prowl._files` does the IO). Nothing here raises into a caller: a spool that
cannot be written is skipped.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from . import _contract, _files, _native, identity

_lock = threading.Lock()
_seq = 0  # the last sequence number this process put in a file name


def spool_dir() -> Path:
    """``LOWDOWN_HOME/spool`` (default ``~/.lowdown/spool``)."""
    return identity.lowdown_home() / _contract.SPOOL_DIR


def write(records: Sequence[str]) -> int:
    """Writes records (JSON texts) to the spool, then trims the spool to its bound. Returns
    how many were written (0 on failure)."""
    global _seq
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    with _lock:
        plan = _native.SpoolWrite(list(records), _seq, os.getpid(), int(time.time() * 1000), now, secrets.token_hex(4))
        _seq = plan.seq()
        step, _ = _files.run(spool_dir(), plan)
    return 0 if step["step"] == "failed" else len(records)


def claim_next() -> Optional[Tuple[List[str], Callable[[], None], Callable[[], None]]]:
    """Claims the next spool file: ``(records, done, release)``, or ``None`` when there is
    nothing to deliver. ``done`` deletes the file (taken), ``release`` puts it back."""
    d = spool_dir()
    plan = _native.SpoolClaim(os.getpid(), time.time() * 1000)
    step, _ = _files.run(d, plan)
    if step["step"] != "deliver":
        return None

    def done() -> None:
        _files.run(d, plan, plan.finish(True))

    def release() -> None:
        _files.run(d, plan, plan.finish(False))

    return list(step["records"]), done, release
