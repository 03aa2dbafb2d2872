"""The file IO the core's plans ask for (the spool's and node.json's; lowdown-core
``files::Step``): each step is done here and what happened is fed back, until a step this
module does not perform (``deliver``, ``identity``, ``done``, ``failed``). Which file, and
what an error or a race means, is the plan's."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

from . import _native

Step = Dict[str, Any]
#: What :func:`run` drives: a core plan.
Plan = Union[_native.SpoolClaim, _native.SpoolWrite, _native.NodeIdentityLoad]


def _result(err: OSError) -> Literal["missing", "exists", "failed"]:
    if err.errno == errno.ENOENT:
        return "missing"
    return "exists" if err.errno == errno.EEXIST else "failed"


def run(d: Path, plan: Plan, first: Optional[Step] = None) -> Tuple[Step, Optional[OSError]]:
    """Runs ``plan`` in ``d`` from ``first`` (its first step by default) until a step this
    module does not perform; that step and the last IO error seen (for ``failed``)."""
    error: Optional[OSError] = None
    step = plan.start() if first is None else first
    while True:
        try:
            nxt = _perform(d, plan, step)
        except OSError as err:
            error = err
            nxt = plan.feed(_result(err))
        if nxt is None:
            return step, error
        step = nxt


def _mtime_ms(p: Path) -> Optional[float]:
    try:
        return p.stat().st_mtime * 1000
    except OSError:
        return None  # gone meanwhile


def _perform(d: Path, plan: Plan, step: Step) -> Optional[Step]:
    kind = step["step"]
    if kind == "list":
        if isinstance(plan, _native.NodeIdentityLoad):
            raise OSError("this plan takes no listing")
        names: List[str] = os.listdir(d)
        return plan.listed([(n, _mtime_ms(d / n)) for n in names])
    if kind == "read":
        return plan.feed("ok", (d / step["name"]).read_bytes().decode("utf-8", "replace"))
    if kind == "write":
        if not d.is_dir():
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(d, 0o700)
        fd = os.open(d / step["name"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(fd, 0o600)
            f.write(step["text"])
    elif kind == "rename":
        os.replace(d / step["from"], d / step["to"])
    elif kind == "claim":
        os.rename(d / step["from"], d / step["to"])
        os.utime(d / step["to"])
    elif kind == "link":
        os.link(d / step["from"], d / step["to"])
    elif kind == "delete":
        try:
            (d / step["name"]).unlink(missing_ok=True)
        except OSError:
            pass  # whatever happened, the plan goes on
    else:
        return None
    return plan.feed("ok")
