"""Shared fixtures: a real upstream, a byte-capturing collector, a real lowdown-server, and
prowl pointed at one of them with a clean queue."""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, Iterator, Optional, Sequence

import pytest

import prowl
from prowl import identity
from prowl.sender import SENDER

from provider_support import Everything, Recorder, Server, engines
from servers import Collector, Upstream, free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]

# The test process's own state dir (node id, spool): never the developer's ~/.lowdown.
os.environ["LOWDOWN_HOME"] = tempfile.mkdtemp(prefix="prowl-test-home-")
PROWL_ENV = (
    "PROWL_API_URL",
    "LOWDOWN_API_URL",
    "PROWL_AGENT_KEY",
    "PROWL_TELEMETRY",
    "PROWL_TELEMETRY_ALLOWLIST",
    "PROWL_TELEMETRY_ALLOW_PRIVATE",
)


@pytest.fixture(autouse=True)
def lowdown_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own ``LOWDOWN_HOME`` (never the developer's ``~/.lowdown``) and a
    node identity that prowl loads afresh from it."""
    home = tmp_path / "lowdown-home"
    monkeypatch.setenv("LOWDOWN_HOME", str(home))
    identity.reset()
    yield home
    identity.reset()


@pytest.fixture(params=["httpx", "httpx2"])
def lib(request: pytest.FixtureRequest) -> ModuleType:
    """The HTTP library a test runs with: httpx, and httpx2 (what the MCP SDK 2.x uses)."""
    return importlib.import_module(request.param)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No PROWL_*/LOWDOWN_API_URL from the developer's shell leaks into a test."""
    for k in PROWL_ENV:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def _point_at(url: str, monkeypatch: pytest.MonkeyPatch, allow_private: bool = True) -> None:
    monkeypatch.setenv("PROWL_API_URL", url)
    if allow_private:
        monkeypatch.setenv("PROWL_TELEMETRY_ALLOW_PRIVATE", "1")
    prowl.configure()
    SENDER.reset()


@pytest.fixture
def point_prowl(clean_env: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Points prowl's telemetry at a URL (loopback hosts allowed) with an empty queue."""
    return lambda url: _point_at(url, clean_env)


@pytest.fixture
def telemetry(collector: Collector, clean_env: pytest.MonkeyPatch) -> Iterator[Collector]:
    """prowl reporting to ``collector``, with loopback hosts allowed (the upstream is local)."""
    _point_at(collector.url, clean_env)
    yield collector
    prowl.unobserve()
    prowl.flush(1.0)
    SENDER.reset()


@pytest.fixture
def telemetry_private_blocked(collector: Collector, clean_env: pytest.MonkeyPatch) -> Iterator[Collector]:
    """prowl reporting to ``collector`` with the default privacy block in force."""
    _point_at(collector.url, clean_env, allow_private=False)
    yield collector
    prowl.flush(1.0)
    SENDER.reset()


class LowdownServer:
    """A real lowdown-server on a free loopback port with its own SQLite file."""

    def __init__(self, args: Sequence[str] = (), env: Optional[Dict[str, str]] = None, db: Optional[Path] = None) -> None:
        self.home = tempfile.mkdtemp(prefix="prowl-test-")
        self.db = db or Path(self.home) / "x.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # The upstreams these tests call are on loopback, which a real server refuses to
        # store: the tests lift that block, as SPEC §4's test-only flag allows.
        self.proc, self.log = start_server(
            ["serve", "--listen", f"127.0.0.1:{self.port}", "--db", str(self.db), "--unsafe-allow-private-hosts", *args],
            self.home, self.port, dict(LOWDOWN_HOME=self.home, **(env or {})),
        )

    def get(self, path: str, headers: Optional[Dict[str, str]] = None) -> Any:
        req = urllib.request.Request(self.url + path, headers=headers or {})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.loads(resp.read() or b"null")

    def post(self, path: str, body: Any) -> Any:
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.loads(resp.read() or b"null")

    def close(self) -> None:
        stop_server(self.proc, self.log)


@pytest.fixture(params=engines())
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    s = Server(request.param)
    yield s
    s.close()


@pytest.fixture
def recorder(server: Server) -> Iterator[Recorder]:
    r = Recorder(server.url)
    yield r
    r.close()


@pytest.fixture(scope="module")
def everything() -> Iterator[Everything]:
    """The real server-everything over streamable HTTP (the provider suites' MCP server)."""
    e = Everything()
    yield e
    e.close()


@pytest.fixture(scope="session")
def lowdown_server() -> Iterator[LowdownServer]:
    server = LowdownServer()
    yield server
    server.close()


@pytest.fixture
def to_lowdown(lowdown_server: LowdownServer, clean_env: pytest.MonkeyPatch) -> Iterator[LowdownServer]:
    """prowl reporting to the real lowdown-server, loopback hosts allowed."""
    _point_at(lowdown_server.url, clean_env)
    yield lowdown_server
    prowl.unobserve()
    prowl.flush(1.0)
    SENDER.reset()


def hook_command() -> list:
    """The installed ``prowl-claude-hook`` console script (next to this interpreter)."""
    script = Path(sys.executable).with_name("prowl-claude-hook")
    assert script.exists(), f"console script missing: {script} (is prowl installed in this venv?)"
    return [str(script)]
