"""The provider routes of the Lowdown API (SPEC §11), as the worker calls them: one fresh
connection per call, a timeout on every call, ``X-Agent-Key`` on each."""

from __future__ import annotations

import http.client
import ipaddress
import json
from typing import Any, Dict, Optional, Tuple
from urllib.parse import quote, urlsplit

#: Seconds one API call may take.
TIMEOUT_S = 10.0
#: Seconds a submission may take: the server probes a ``protocol`` remote itself before it
#: answers (the Scanner's probe: 10 s per request, up to 23 requests).
SUBMIT_TIMEOUT_S = 240.0
#: Largest answer read.
MAX_ANSWER = 4 << 20


def live_url_refusal(base_url: str) -> Optional[str]:
    """Why live mode may not use ``base_url``, or ``None``: https, or http to a loopback
    host only (127.0.0.0/8, ::1, ``localhost``), since whoever can rewrite a plain-http
    answer on the path could hand the hook any directive."""
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
    except ValueError:
        return f"PROWL_API_URL is not a URL: {base_url!r}"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http":
        try:
            if host == "localhost" or ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            pass
    return (f"PROWL_API_URL must be https in live mode (http only to 127.0.0.1, ::1 or localhost), "
            f"not {parts.scheme}://{host}: nothing was claimed or run")


class ApiError(Exception):
    """The API answered with a refusal (or not at all); ``status`` is ``None`` for a
    network failure, ``reason`` the refusal's stable kind when it gave one."""

    def __init__(self, status: Optional[int], reason: Optional[str], message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class Api:
    """The API at ``base_url`` with the agent key ``key``."""

    def __init__(self, base_url: str, key: str, user_agent: str) -> None:
        self.base = base_url.rstrip("/")
        self.key = key
        self.user_agent = user_agent

    def _call(self, method: str, path: str, body: Optional[Any] = None, timeout: float = TIMEOUT_S) -> Tuple[int, Any]:
        parts = urlsplit(self.base)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"X-Agent-Key": self.key, "User-Agent": self.user_agent, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, parts.path.rstrip("/") + path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read(MAX_ANSWER)
        except (OSError, http.client.HTTPException) as e:
            raise ApiError(None, None, f"{method} {path}: {type(e).__name__}") from None
        finally:
            conn.close()
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = None
        if resp.status >= 400:
            reason = answer.get("reason") if isinstance(answer, dict) else None
            error = answer.get("error") if isinstance(answer, dict) else None
            raise ApiError(resp.status, reason, f"{method} {path}: {resp.status} {error or ''}".strip())
        return resp.status, answer

    def _object(self, method: str, path: str, body: Optional[Any] = None, timeout: float = TIMEOUT_S) -> Dict[str, Any]:
        """:meth:`_call` for a route that answers a JSON object; any other answer (none, a
        list, not JSON) is an :class:`ApiError` like a refusal, not a crash of the caller."""
        status, answer = self._call(method, path, body, timeout)
        if not isinstance(answer, dict):
            raise ApiError(status, None, f"{method} {path}: {status} answer is not a JSON object")
        return answer

    def register(self) -> Dict[str, Any]:
        """``POST /v1/provider/register``."""
        return self._object("POST", "/v1/provider/register")

    def directives(self) -> Dict[str, Any]:
        """``GET /v1/provider/directives``."""
        return self._object("GET", "/v1/provider/directives")

    def claim(self, directive_id: str) -> Dict[str, Any]:
        """``POST /v1/provider/directives/{id}/claim``."""
        return self._object("POST", f"/v1/provider/directives/{quote(directive_id, safe='')}/claim")

    def release(self, directive_id: str) -> None:
        """``POST /v1/provider/directives/{id}/release``."""
        self._call("POST", f"/v1/provider/directives/{quote(directive_id, safe='')}/release")

    def submit(self, submission: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/provider/submit`` (waits for the server's own probe of a ``protocol``
        remote)."""
        return self._object("POST", "/v1/provider/submit", submission, SUBMIT_TIMEOUT_S)
