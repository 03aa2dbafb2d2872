"""``python -m prowl.provider.bridge [--unsafe-allow-loopback] -- <url>``: the one MCP server
an ``agent`` directive's ``claude --print`` is given (SPEC §11).

Claude speaks MCP over stdio to this bridge (one JSON-RPC message per line); the bridge
forwards each of Claude's messages to the directive's remote over Streamable HTTP with the
probe's client rules: the URL judged by the core's SSRF rules, the name resolved once at
start and every address checked, each connection made to that pinned address (TLS and
``Host`` still the name), no redirect followed, no proxy, every answer read under a cap and
a timeout. Claude never connects anywhere itself, so a DNS rebind or a redirect cannot take
it to the provider's localhost or LAN.

Only the answer to each of Claude's requests is passed back (under Claude's own id; the
remote sees the bridge's ids). Whatever else the remote streams (its own requests such as
``sampling/createMessage``, notifications) is dropped: the remote can ask Claude for
nothing. ``--unsafe-allow-loopback`` admits http and loopback addresses, for tests only;
the hook passes it only when its own ``PROWL_UNSAFE_ALLOW_LOOPBACK`` is set, never from a
directive. The IO is the drop-in hook's ``bridge`` (:func:`prowl.prowl_provider_hook.bridge`),
its decisions the core's (:data:`.core.CORE`).
"""

from __future__ import annotations

import sys

from .. import prowl_provider_hook as hook
from .core import CORE

if __name__ == "__main__":
    sys.exit(hook.bridge(sys.argv[1:], CORE))
