"""The package's runner (SPEC §11): the drop-in hook's IO (:mod:`prowl.prowl_provider_hook`:
the API calls, the probe's and the bridge's sockets, the ``claude`` run, the worker pass)
with every decision asked of the compiled core instead of the file's ports: which
directives may run (:func:`prowl._native.check_directive`), which URLs and addresses may be
reached (``probe_url_host``, ``check_probe_address``), reading an answer, the probe and its
score (``AnswerReader``, ``Probe``), the agent verdict (``agent_verdict``).

An ``agent`` run's one MCP server is ``python -m prowl.provider.bridge``; the API address is
prowl's (``PROWL_API_URL``, then ``LOWDOWN_API_URL``, then the stored ``api-url``, then the
local node).
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any, Dict, List, Mapping, Tuple

from .. import __version__, _native
from .. import prowl_provider_hook as hook


class Stopping(Exception):
    """The service running the pass was asked to stop (``prowl-provider daemon``)."""

    def __str__(self) -> str:
        return "stopped"


class Core(hook.Runner):
    """:class:`prowl.prowl_provider_hook.Runner` answered by the compiled core."""

    name = f"prowl-provider-hook/{__version__}"
    version = __version__
    bridge_usage = "usage: python -m prowl.provider.bridge [--unsafe-allow-loopback] -- <https url>"

    def api(self, env: Mapping[str, str]) -> Tuple[str, str]:
        from .. import config

        settings = config.Settings.from_env(env)
        return settings.api_url, settings.agent_key or ""

    def url_host(self, url: str, allow_loopback: bool) -> str:
        try:
            return _native.probe_url_host(url, allow_loopback)
        except _native.LowdownError as e:
            raise hook.Blocked(e.type) from None

    def address_allowed(self, ip: str, allow_loopback: bool) -> bool:
        try:
            _native.check_probe_address(ipaddress.ip_address(ip), allow_loopback)
            return True
        except _native.LowdownError:
            return False

    def check_directive(self, body: Any) -> Dict[str, Any]:
        try:
            return _native.check_directive(body)
        except _native.LowdownError as e:
            raise hook.Refused(e.type, (e.details or {}).get("field", "?")) from None

    def probe(self) -> _native.Probe:
        return _native.Probe(self.version)

    def reader(self, content_type: str | None, rid: int, cap: int) -> _native.AnswerReader:
        return _native.AnswerReader(content_type, rid, cap)

    def answer(self, reader: Any) -> hook.Answer:
        try:
            answer = json.loads(reader.answer())
        except _native.LowdownError as e:
            return None, e.type
        return (answer if isinstance(answer, dict) else None), None

    def agent_verdict(self, answer: str, contains: List[str], latency_ms: float) -> Dict[str, Any]:
        return _native.agent_verdict(answer, contains, latency_ms)

    def bridge_args(self, url: str, allow_loopback: bool) -> List[str]:
        return ["-m", "prowl.provider.bridge", *(["--unsafe-allow-loopback"] if allow_loopback else []), "--", url]

    def failure(self, e: Exception) -> str:
        known = (hook.AgentFailed, hook.FetchFailed, hook.Blocked, hook.ApiError, hook.Refused, Stopping)
        return str(e) if isinstance(e, known) else type(e).__name__


#: The package's runner.
CORE = Core()

