"""One agent session for ``bench.py``'s exit measurement: ``N`` httpx requests and ``N``
LangChain tool runs, with or without prowl, then a normal interpreter exit.

Prints ``time.monotonic()`` when the work is done, so the parent can tell the session's
work from what happens at exit (prowl's ``atexit`` delivery, bounded by its exit budget).
Usage: ``session.py URL N plain|prowl``.
"""

from __future__ import annotations

import sys
import time

import httpx
from langchain_core.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def main() -> None:
    url, n, variant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    client = httpx.Client(base_url=url)
    config = {}
    if variant == "prowl":
        import prowl
        from prowl.langchain import ProwlCallbackHandler

        client = prowl.observe(client)
        config = {"callbacks": [ProwlCallbackHandler()]}
    for _ in range(n):
        client.get("/x")
        add.invoke({"a": 1, "b": 2}, config=config)
    print(time.monotonic(), flush=True)


if __name__ == "__main__":
    main()
