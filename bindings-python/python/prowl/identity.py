"""The node identity (SPEC §3.5): ``LOWDOWN_HOME/node.json``, shared with the npm proxy.

The file's format and the state directory are the core's (``identity``, ``settings``); this
module does the IO: create it on first use (file mode 0600, directory 0700), replace it when
the core reads no identity in it, with the same atomic write as the proxy's ``home.js``, so
a machine running both has one identity.

Loaded lazily, once per process, by the sender thread (:func:`node_id`), never on the
caller's path; when the home cannot be written, records are sent without ``node_id``.
"""

from __future__ import annotations

import errno
import os
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Optional, Tuple

from . import _contract, _core, _native

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
    replacing it when corrupt. Raises ``OSError`` when the home cannot be written."""
    file = home / FILE_NAME
    existing, missing = _read(file)
    if existing is not None:
        return NodeIdentity(existing[0], existing[1], False)
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    body = _native.new_node_identity(secrets.token_hex(6), now)
    fresh = _native.parse_node_identity(body)
    if fresh is None:  # the core reads back what it wrote; never None
        raise RuntimeError("the core's new node.json does not parse")
    identity = NodeIdentity(fresh["node_id"], fresh["created_at"], True)
    if not home.is_dir():
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(home, 0o700)
    tmp = home / f"{FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, body.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if missing:
            # First run: create exclusively, so two processes starting at once agree on one id.
            try:
                os.link(tmp, file)
            except OSError as err:
                if err.errno != errno.EEXIST:
                    raise
                winner, _ = _read(file)
                if winner is not None:
                    return NodeIdentity(winner[0], winner[1], False)
                os.replace(tmp, file)
        else:
            os.replace(tmp, file)  # corrupt: replace atomically
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return identity


def _read(file: Path) -> Tuple[Optional[Tuple[str, str]], bool]:
    """``((node_id, created_at), False)`` when valid; ``(None, missing)`` otherwise."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, True
    except (OSError, UnicodeDecodeError):
        return None, False
    found = _native.parse_node_identity(text)
    return ((found["node_id"], found["created_at"]) if found else None), False


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
