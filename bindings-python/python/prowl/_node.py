"""The local node (SPEC §2): with no deployment configured and nothing answering, prowl
starts the installed ``lowdown-server`` (the ``lowdown-server`` wheel, ``pip install
'prowl[node]'``) in the background, as the proxy does; ``LOWDOWN_AUTOSTART=0`` says no.
Whether it may, and where the node then listens, are the core's (``destination``); this is
the IO: finding the binary and starting it detached."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Optional

from . import _contract

#: Names a binary to start instead of the installed one (as the proxy reads it).
BIN_ENV = "LOWDOWN_SERVER_BIN"


def binary() -> Optional[str]:
    """The ``lowdown-server`` to start: ``$LOWDOWN_SERVER_BIN``, else the one installed beside
    this interpreter (the wheel's script), else one on ``PATH``; ``None`` when there is none."""
    named = os.environ.get(BIN_ENV)
    if named:
        return named
    beside = Path(sysconfig.get_path("scripts")) / ("lowdown-server" + (".exe" if os.name == "nt" else ""))
    if beside.is_file():
        return str(beside)
    return shutil.which("lowdown-server")


def start(home: Path) -> str:
    """Starts the local node of ``home`` detached (its own session, output appended to the log
    beside it, on SQLite in ``home``); returns its binary. A node already running makes this
    one exit at once. Raises ``OSError`` saying why none could start."""
    bin_path = binary()
    if bin_path is None:
        raise OSError("no lowdown-server installed (pip install 'prowl[node]')")
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["LOWDOWN_HOME"] = str(home)
    fd = os.open(home / _contract.LOCAL_NODE_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        subprocess.Popen(  # noqa: S603 - the user's own installed binary
            [bin_path, "serve", "--local-node"],
            cwd=str(home), env=env, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
            start_new_session=True, close_fds=True,
        )
    finally:
        os.close(fd)
    return bin_path
