"""Records real sessions of the official Python MCP SDK client (``mcp`` 2.3.0 from PyPI).

Each session launches ``tap.mjs`` as its server; the tap runs the real server and writes
every line that crossed the pipes to a JSONL file next to this script (see README.md).

    python tests/recordings/record_python.py       # with mcp==2.3.0 and mcp-server-time==2026.10.19

Sessions:

* ``python-sdk-time-legacy.jsonl``: ``stdio_client`` + ``ClientSession`` (the initialize
  handshake) with ``mcp-server-time``: a good call, a call without its required argument,
  a bad time, an unknown tool.
* ``python-sdk-time-modern.jsonl``: ``mcp.Client(..., mode="auto")`` with
  ``mcp-server-time``, which negotiates 2026-07-28 through ``server/discover``.
* ``python-sdk-auto-everything.jsonl``: ``mode="auto"`` against the legacy
  ``server-everything``: the ``server/discover`` probe is refused and the client falls back
  to ``initialize``.
* ``python-sdk-fetch-lowlevel.jsonl``: ``ClientSession`` with ``mcp-server-fetch`` 2025.4.7
  on the 1.x SDK's low-level server (``mcp==1.30.0``), whose input validation answers a
  call without its required argument with ``Input validation error: …``. That server runs
  from another virtualenv, named by ``MCP1_PYTHON`` (its ``python``); without it the
  session is skipped. No network is used: the call never gets past validation.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
TAP = HERE / "tap.mjs"
EVERYTHING = HERE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
# A fixed local timezone: the tool descriptions name it, so the schema hash stays the same
# wherever the recording is made.
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def tapped(out: str, command: list[str]) -> StdioServerParameters:
    """The tap, recording to ``out``, as the server the client launches."""
    return StdioServerParameters(command="node", args=[str(TAP), str(HERE / out), "--", *command])


async def time_legacy() -> None:
    async with stdio_client(tapped("python-sdk-time-legacy.jsonl", TIME_SERVER)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            await session.call_tool("get_current_time", {"timezone": "Europe/Lisbon"})
            # The caller's mistake: the required argument is missing.
            await session.call_tool("get_current_time", {})
            # The tool's own check refuses a time that is not HH:MM.
            await session.call_tool(
                "convert_time", {"source_timezone": "UTC", "time": "25:99", "target_timezone": "Asia/Tokyo"}
            )
            try:
                await session.call_tool("get_time", {"timezone": "UTC"})
            except MCPError:
                pass


async def time_modern() -> None:
    async with Client(tapped("python-sdk-time-modern.jsonl", TIME_SERVER), mode="auto") as client:
        await client.list_tools()
        await client.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
        await client.call_tool("get_current_time", {})
        await client.call_tool(
            "convert_time", {"source_timezone": "Europe/Lisbon", "time": "09:30", "target_timezone": "America/New_York"}
        )


async def everything_auto() -> None:
    server = tapped("python-sdk-auto-everything.jsonl", ["node", str(EVERYTHING), "stdio"])
    async with Client(server, mode="auto") as client:
        await client.list_tools()
        await client.call_tool("echo", {"message": "hello from the Python SDK"})
        await client.call_tool("get-sum", {"a": "two", "b": 3})


async def fetch_lowlevel(python: str) -> None:
    server = tapped("python-sdk-fetch-lowlevel.jsonl", [python, "-m", "mcp_server_fetch"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            await session.call_tool("fetch", {"max_length": 100})


async def main() -> None:
    await time_legacy()
    await time_modern()
    await everything_auto()
    if python := os.environ.get("MCP1_PYTHON"):
        await fetch_lowlevel(python)
    else:
        print("MCP1_PYTHON not set: python-sdk-fetch-lowlevel.jsonl not recorded", file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)
