"""``python -m prowl.provider.bridge [--unsafe-allow-loopback] -- <url>``: the one MCP server
an ``agent`` directive's ``claude --print`` is given (SPEC §11).

Claude speaks MCP over stdio to this bridge (one JSON-RPC message per line); the bridge
forwards each of Claude's messages to the directive's remote over Streamable HTTP with the
probe's client rules (:mod:`prowl.provider.protocol`): the URL judged by the core's SSRF
rules, the name resolved once at start and every address checked, each connection made to
that pinned address (TLS and ``Host`` still the name), no redirect followed, no proxy, every
answer read under a cap and a timeout. Claude never connects anywhere itself, so a DNS
rebind or a redirect cannot take it to the provider's localhost or LAN.

Only the answer to each of Claude's requests is passed back (under Claude's own id; the
remote sees the bridge's ids). Whatever else the remote streams (its own requests such as
``sampling/createMessage``, notifications) is dropped: the remote can ask Claude for
nothing. ``--unsafe-allow-loopback`` admits http and loopback addresses, for tests only;
the hook passes it only when its own ``PROWL_UNSAFE_ALLOW_LOOPBACK`` is set, never from a
directive.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from .. import __version__, _native
from . import protocol

#: Seconds one request may take, answer included (a tool call may be slow; the hook's run
#: timeout bounds the whole run).
REQUEST_TIMEOUT_S = 60.0
#: Largest answer read from the remote (the Scanner's ``tools/list`` cap).
BODY_CAP = 4 << 20
#: Longest message read from Claude.
MAX_LINE = 4 << 20
USER_AGENT = f"prowl-provider-bridge/{__version__}"


class Remote:
    """The directive's remote, resolved and checked once; every request goes to that address."""

    def __init__(self, url: str, allow_loopback: bool) -> None:
        self.where = protocol.target(url, allow_loopback)
        self.ip = protocol.addresses(self.where[1], self.where[2], allow_loopback)[0]
        self.session: Optional[str] = None
        self.version: Optional[str] = None
        self.last_id = 0

    def _headers(self) -> Dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "User-Agent": USER_AGENT}
        if self.session:
            h["Mcp-Session-Id"] = self.session
        if self.version:
            h["MCP-Protocol-Version"] = self.version
        return h

    def send(self, method: str, body: Optional[bytes], answer_id: Optional[int]) -> Tuple[int, Optional[Dict[str, Any]]]:
        """One HTTP exchange; ``(status, answer)``, the answer read only for 2xx and an id."""
        tls, host, port, path = self.where
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        conn = protocol._Pinned(host, port, self.ip, tls, deadline)
        try:
            conn.request(method, path, body=body, headers=self._headers())
            resp = conn.getresponse()
            session = resp.getheader("mcp-session-id")
            if session and self.session is None:
                self.session = session
            if answer_id is None or not 200 <= resp.status < 300:
                return resp.status, None
            reader = _native.AnswerReader(resp.getheader("content-type"), answer_id, BODY_CAP)
            protocol.read_answer(conn, resp, reader, deadline)
            answer = json.loads(reader.answer())
            return resp.status, answer if isinstance(answer, dict) else None
        finally:
            conn.close()

    def call(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        """Forwards one of Claude's requests; the answer under Claude's id, or an error."""
        self.last_id += 1
        rid = self.last_id
        body = json.dumps({**msg, "id": rid}, separators=(",", ":")).encode()
        try:
            status, answer = self.send("POST", body, rid)
        except _native.LowdownError as e:
            return _error(msg["id"], f"the remote's answer was refused: {e.type}")
        except Exception as e:
            return _error(msg["id"], f"the remote gave no answer: {protocol.error_type(e)}")
        if answer is None:
            moved = " (redirects are not followed)" if 300 <= status < 400 else ""
            return _error(msg["id"], f"the remote answered HTTP {status}{moved}")
        if msg.get("method") == "initialize" and isinstance(answer.get("result"), dict):
            v = answer["result"].get("protocolVersion")
            self.version = v if isinstance(v, str) and v.isprintable() and len(v) < 32 else None
        return {**answer, "id": msg["id"]}

    def notify(self, msg: Dict[str, Any]) -> None:
        try:
            self.send("POST", json.dumps(msg, separators=(",", ":")).encode(), None)
        except Exception:
            pass

    def close(self) -> None:
        if self.session:
            try:
                self.send("DELETE", None, None)
            except Exception:
                pass


def _error(rid: Any, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"prowl bridge: {message}"}}


def serve(remote: Remote, stdin: Any, stdout: Any) -> None:
    """Relays Claude's messages until its stdin closes."""
    while True:
        line = stdin.readline(MAX_LINE)
        if not line:
            break
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
            continue  # answers to requests the remote never got to send
        if "id" in msg:
            stdout.write(json.dumps(remote.call(msg), separators=(",", ":")).encode() + b"\n")
            stdout.flush()
        else:
            remote.notify(msg)
    remote.close()


def main(argv: List[str]) -> int:
    loopback = argv[:1] == ["--unsafe-allow-loopback"]
    rest = argv[1:] if loopback else argv
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if len(rest) != 1:
        print("usage: python -m prowl.provider.bridge [--unsafe-allow-loopback] -- <https url>", file=sys.stderr)
        return 2
    try:
        remote = Remote(rest[0], loopback)
    except (protocol.Blocked, OSError) as e:
        print(f"prowl bridge: refused {rest[0]!r}: {protocol.error_type(e)}", file=sys.stderr)
        return 2
    serve(remote, sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
