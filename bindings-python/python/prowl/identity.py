"""The node identity (SPEC §3.5): ``LOWDOWN_HOME/node.json``, shared with the npm proxy.

The file's format, the state directory and how the file is loaded (created exclusively on
first use, the winner of a race, replaced when corrupt) are the core's (``identity``,
``settings``); this module runs the plan (:mod:`prowl._files` does the IO, file mode 0600,
directory 0700), as the proxy's ``home.js`` does, so a machine running both has one identity.

Loaded lazily, once per process, by the sender thread (:func:`node_id`), never on the
caller's path; when the home cannot be written, records are sent without ``node_id``.
"""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Optional, Tuple

from . import _contract, _core, _files, _native

#: Environment variable naming the state directory.
HOME_ENV = _native.HOME_ENV
#: The identity file's name inside the state directory.
FILE_NAME = _contract.NODE_FILE


@dataclass(frozen=True)
class NodeIdentity:
    """This machine's identity: ``node_id``, ``created_at``, and whether this call ``created`` it."""

    node_id: str
    created_at: str
    created: bool


def lowdown_home(env: Optional[Mapping[str, str]] = None) -> Path:
    """The state directory: ``$LOWDOWN_HOME`` (made absolute), else ``~/.lowdown``."""
    env = os.environ if env is None else env
    return Path(_native.settings_from_env(dict(env), str(Path.home()), "telemetry")["home"]).absolute()


def load_node_identity(home: Path) -> NodeIdentity:
    """Reads ``<home>/node.json``, creating it (mode 0600, atomically) on first use and
    replacing it when corrupt, as the core's plan says. Raises ``OSError`` when the home
    cannot be written."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    plan = _native.NodeIdentityLoad(secrets.token_hex(6), now, os.getpid(), secrets.token_hex(4))
    step, error = _files.run(home, plan)
    if step["step"] != "identity":
        raise error or OSError(f"cannot load {home / FILE_NAME}")
    return NodeIdentity(step["node_id"], step["created_at"], step["created"])


_lock = threading.Lock()
_cached: Optional[Tuple[Optional[str]]] = None


def node_id() -> Optional[str]:
    """This process's node id, loaded (or created) on first call and then remembered;
    ``None`` when the home is unwritable or the id fails the core's validation. Never raises."""
    global _cached
    cached = _cached
    if cached is not None:
        return cached[0]
    with _lock:
        if _cached is None:
            try:
                loaded = load_node_identity(lowdown_home()).node_id
                _core.validate_node_id(loaded)
                nid: Optional[str] = loaded
            except Exception:
                nid = None
            _cached = (nid,)
        return _cached[0]


def reset() -> None:
    """Forget the remembered id so the next :func:`node_id` reads the home again (tests)."""
    global _cached
    with _lock:
        _cached = None
