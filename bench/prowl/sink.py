"""A minimal keep-alive HTTP/1.1 server for the benchmark, run in its own process so it
never competes with the measured client for the GIL. Answers every request ``200 ok``
(telemetry POSTs included). Prints its port on stdout, serves until stdin closes."""

from __future__ import annotations

import asyncio
import sys

REPLY = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
JSON_REPLY = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'


class Sink(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.t = transport
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].lower()
            length = 0
            i = head.find(b"content-length:")
            if i >= 0:
                length = int(head[i + 15 :].split(b"\r\n", 1)[0])
            if len(self.buf) < end + 4 + length:
                return
            self.buf = self.buf[end + 4 + length :]
            self.t.write(JSON_REPLY if head.startswith(b"post") else REPLY)  # type: ignore[attr-defined]


async def main() -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Sink, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
