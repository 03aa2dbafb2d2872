"""The detached worker of ``prowl-provider-hook`` (SPEC §11), started with the single-flight
lock already held (its descriptor is the one argument).

One run: check the pacing again under the lock; list the open directives; pick the first
this machine can run (``protocol`` always; ``agent`` when the ``claude`` command resolves)
among those the core's rule accepts (one the API should never have listed, such as a
program to run, is skipped and named in ``refused``). Live mode talks to an https API only
(http to loopback alone, for a local server).
Scout stops there and writes what it would have claimed. Live claims it, writes the claim
time at once (a crash still counts toward the hourly gap), runs it, submits it, and on any
failure releases it at once (fails closed). Everything it learns goes to
``provider_state.json``; nothing is printed (stdio is ``/dev/null``).

The pass is the drop-in hook's (:func:`prowl.prowl_provider_hook.run_once`), its decisions
the core's (:data:`.core.CORE`). Run by hand: ``python -m prowl.provider.worker`` takes the
lock itself.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Mapping, Optional

from .. import prowl_provider_hook as hook
from .core import CORE


def run_once(env: Optional[Mapping[str, str]] = None, session: Optional[str] = None) -> Dict[str, Any]:
    """One pass (the lock is held) for the Claude Code session of key ``session``, if any;
    returns the state written."""
    return hook.run_once(dict(os.environ if env is None else env), session, CORE)


def register_command() -> int:
    """``prowl-provider-hook register``: makes ``PROWL_AGENT_KEY``'s agent a provider."""
    return hook.register(os.environ, CORE)


def main(argv: List[str]) -> int:
    """Entry of the detached process: argv[0] is the inherited lock descriptor, if any."""
    return hook.worker(argv, CORE)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
