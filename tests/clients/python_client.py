"""One MCP session driven by the official Python MCP SDK (``mcp`` 2.3.0), for the real-client
suite (clients.test.mjs). Prints, as one JSON line, what each call came back with.

    python python_client.py MODE CALLS_JSON -- COMMAND [ARGS...]

MODE ``legacy`` uses ``stdio_client`` + ``ClientSession`` (the initialize handshake); MODE
``auto`` uses ``mcp.Client(..., mode="auto")``, which negotiates 2026-07-28 through
``server/discover`` where the server speaks it and falls back to ``initialize``. CALLS_JSON
is ``[[tool, arguments], ...]``. The SDK passes only HOME, LOGNAME, PATH, SHELL, TERM and
USER to the server process, so every ``LOWDOWN_*`` variable is forwarded explicitly.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client


def summary(result) -> dict:
    """What a call came back with: an error flag and its first text."""
    text = next((c.text for c in result.content if getattr(c, "type", None) == "text"), "")
    return {"is_error": bool(result.is_error), "text": text[:200]}


async def legacy(server: StdioServerParameters, calls: list) -> list:
    out = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for name, args in calls:
                try:
                    out.append(summary(await session.call_tool(name, args)))
                except MCPError as e:
                    out.append({"jsonrpc_error": e.error.code})
    return out


async def auto(server: StdioServerParameters, calls: list) -> list:
    out = []
    async with Client(server, mode="auto") as client:
        await client.list_tools()
        for name, args in calls:
            try:
                out.append(summary(await client.call_tool(name, args)))
            except MCPError as e:
                out.append({"jsonrpc_error": e.error.code})
    return out


def main() -> None:
    mode, calls_json, sep, *command = sys.argv[1:]
    assert sep == "--", "usage: python_client.py MODE CALLS_JSON -- COMMAND [ARGS...]"
    env = {k: v for k, v in os.environ.items() if k.startswith("LOWDOWN_")}
    server = StdioServerParameters(command=command[0], args=command[1:], env=env)
    run = {"legacy": legacy, "auto": auto}[mode]
    print(json.dumps(anyio.run(run, server, json.loads(calls_json))))


if __name__ == "__main__":
    main()
