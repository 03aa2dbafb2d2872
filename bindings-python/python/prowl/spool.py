"""The spool for interaction records the API could not take (SPEC §3).

Its format, names, bounds and claims are the core's (``record::spool``, shared with
``lowdown-proxy``): prowl and the proxy write the same files under ``LOWDOWN_HOME/spool/``,
and whichever starts next delivers them. This module only does the IO: write, rename, read
and delete. Nothing here raises into a caller: a spool that cannot be written is skipped.
"""

from __future__ import annotations

import itertools
import os
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from . import _contract, _native, identity

_seq = itertools.count(1)


def spool_dir() -> Path:
    """``LOWDOWN_HOME/spool`` (default ``~/.lowdown/spool``)."""
    return identity.lowdown_home() / _contract.SPOOL_DIR


def write(records: Sequence[str]) -> int:
    """Writes records (JSON texts) to the spool, at most the core's per-file count a file,
    then trims the spool to its bound. Returns how many were written (0 on failure)."""
    if not records:
        return 0
    d = spool_dir()
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        per_file = _native.SPOOL_MAX_RECORDS_PER_FILE
        for i in range(0, len(records), per_file):
            name = _native.spool_file_name(int(time.time() * 1000), next(_seq), os.getpid(), secrets.token_hex(4))
            tmp = d / f".{name}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(_native.spool_encode(list(records[i : i + per_file])))
            os.replace(tmp, d / name)
        _enforce_bound(d)
    except OSError:
        return 0
    return len(records)


def _enforce_bound(d: Path) -> None:
    dropped = 0
    for name in _native.spool_over_bound(os.listdir(d)):
        try:
            dropped += len(_native.spool_decode((d / name).read_text(encoding="utf-8"))[0])
            (d / name).unlink()
        except OSError:
            pass  # taken by another host meanwhile
    if dropped:
        f = d / _contract.DROPPED_FILE
        try:
            previous: Optional[str] = f.read_text(encoding="utf-8")
        except OSError:
            previous = None
        now = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
        f.write_text(_native.spool_dropped(previous, dropped, now), encoding="utf-8")
        os.chmod(f, 0o600)


def claim_next() -> Optional[Tuple[List[str], Callable[[], None], Callable[[], None]]]:
    """Claims the oldest spool file: ``(records, done, release)``, or ``None`` when there
    is nothing to deliver. ``done`` deletes the file, ``release`` puts it back."""
    d = spool_dir()
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return None
    now = time.time()
    for name in names:
        kind, _pid, original = _native.spool_entry(name)
        if kind == "other":
            continue
        full = d / name
        if kind == "claimed":
            try:
                if (now - full.stat().st_mtime) * 1000 < _native.SPOOL_STALE_CLAIM_MS:
                    continue
            except OSError:
                continue
        base = original if kind == "claimed" and original is not None else name
        claimed = d / _native.spool_claim_name(base, os.getpid())
        try:
            os.rename(full, claimed)
            os.utime(claimed)
            records, _corrupt = _native.spool_decode(claimed.read_text(encoding="utf-8"))
        except OSError:
            continue  # another host took it first
        if not records:
            claimed.unlink(missing_ok=True)
            continue

        def done(p: Path = claimed) -> None:
            p.unlink(missing_ok=True)

        def release(p: Path = claimed, back: Path = d / base) -> None:
            try:
                os.rename(p, back)
            except OSError:
                pass

        return records, done, release
    return None
