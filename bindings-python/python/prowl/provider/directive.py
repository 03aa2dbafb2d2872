"""What the hook accepts of a listed directive (SPEC §11): the core's rule, the same one the
server applies on create (:func:`prowl._native.check_directive`). The worker never claims,
and :mod:`.agent` never starts anything for, a directive it refuses, whatever the API sent:
an ``agent`` directive names a remote MCP server by https URL, never a program to run."""

from __future__ import annotations

from typing import Any, Dict

from .. import _native

#: The fields of a listed directive the rule reads.
FIELDS = ("service_id", "kind", "spec", "price_credits", "critical")


class Refused(Exception):
    """The directive breaks the rule; the message is ``<kind>: <field>`` (``local_command_refused:
    spec.mcp_server.command``, ``mcp_server_not_https: spec.mcp_server.url``, ``invalid: …``)."""


def check(d: Dict[str, Any]) -> Dict[str, Any]:
    """The directive's checked ``spec``; raises :class:`Refused`."""
    try:
        spec: Dict[str, Any] = _native.check_directive({k: d.get(k) for k in FIELDS if d.get(k) is not None})["spec"]
        return spec
    except _native.LowdownError as e:
        raise Refused(f"{e.type}: {(e.details or {}).get('field', '?')}") from None
