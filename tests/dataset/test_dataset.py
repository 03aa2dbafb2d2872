"""The published dataset as its users read it: a real ``lowdown-server`` scans fixture MCP
servers listed by a fixture Registry on three days (40 days ago, yesterday, today: the
process clock is moved, never slept), ``lowdown-server publish`` writes the git repository
and the Hugging Face layout, and the real ``datasets`` and ``pyarrow`` packages load the
layout, by its card's configs and by a ``data_files`` glob. Every row must be the CSV's row,
and every target's rows must say what the API answers (``scanner.observations_30d`` and
``scanner.latest``).

Nothing leaves the machine: the fixtures are on 127.0.0.1 and the Hugging Face libraries
run offline with a cache of their own.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
DAY_MS = 86_400_000
OFFSET_ENV = "LOWDOWN_UNSAFE_TEST_CLOCK_OFFSET_MS"
NAME = "lowdown dataset test"


def server_binary() -> Path:
    """The lowdown-server that `make test-dataset` builds (or LOWDOWN_SERVER_BIN)."""
    explicit = os.environ.get("LOWDOWN_SERVER_BIN")
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = Path(explicit) if explicit else target / "debug" / "lowdown-server"
    assert binary.exists(), f"{binary} missing: run `cargo build -p lowdown-server` (make test-dataset does)"
    return binary


class Fixtures:
    """An MCP server per path (``/mcp/<name>``) and a Registry listing them.

    ``tools[name]`` is how many tools ``tools/list`` returns; ``status[name]`` an HTTP status
    answered instead of JSON-RPC (a 401 as an authenticating server sends).
    """

    def __init__(self) -> None:
        self.tools: Dict[str, int] = {}
        self.status: Dict[str, int] = {}
        self.entries: List[Dict[str, Any]] = []
        fixtures = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: Any, extra: Tuple[Tuple[str, str], ...] = ()) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urllib.parse.urlparse(self.path)
                if url.path != "/v0.1/servers":
                    self._json(404, {"error": "not found"})
                    return
                self._json(200, {"servers": fixtures.entries, "metadata": {"nextCursor": None, "count": len(fixtures.entries)}})

            def do_POST(self) -> None:
                name = self.path.rsplit("/", 1)[-1]
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                if name in fixtures.status:
                    self._json(fixtures.status[name], {"error": "unauthorized"}, (("www-authenticate", 'Bearer realm="fixture"'),))
                    return
                method = body.get("method", "")
                if "id" not in body:
                    self.send_response(202)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                if method == "initialize":
                    result = {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": f"fixture-{name}", "version": "1.4.2"},
                    }
                    self._json(200, {"jsonrpc": "2.0", "id": body["id"], "result": result}, (("mcp-session-id", "s1"),))
                elif method == "tools/list":
                    tools = [
                        {"name": f"tool{i}", "description": "a fixture tool", "inputSchema": {"type": "object", "properties": {}}}
                        for i in range(fixtures.tools.get(name, 1))
                    ]
                    self._json(200, {"jsonrpc": "2.0", "id": body["id"], "result": {"tools": tools}})
                else:
                    self._json(200, {"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "no such method"}})

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def list(self, names: List[str], refused_port: int) -> None:
        """The Registry lists ``names`` (each an MCP server here) and one refused remote."""
        remotes = [(n, f"{self.url}/mcp/{n}") for n in names] + [("down", f"http://127.0.0.1:{refused_port}/mcp")]
        self.entries = [
            {
                "server": {
                    "name": f"io.fixture/{n}",
                    "description": "a fixture server",
                    "version": "1.0.0",
                    "remotes": [{"type": "streamable-http", "url": url}],
                },
                "_meta": {
                    "io.modelcontextprotocol.registry/official": {
                        "status": "active",
                        "publishedAt": "2026-09-01T10:00:00Z",
                        "updatedAt": "2026-09-02T10:00:00Z",
                        "isLatest": True,
                    }
                },
            }
            for n, url in remotes
        ]

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lowdown(args: List[str], offset_days: int = 0) -> Dict[str, Any]:
    """``lowdown-server ARGS`` to its end, its clock ``offset_days`` away; stdout as JSON."""
    env = {**os.environ, OFFSET_ENV: str(offset_days * DAY_MS), "RUST_LOG": "off"}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([str(server_binary()), *args], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    """Three days of scans, published; and the API serving the same database."""
    base = tmp_path_factory.mktemp("dataset")
    db = str(base / "lowdown.db")
    fx = Fixtures()
    refused = free_port()
    try:
        fx.tools = {"weather": 2, "maps": 1, "flaky": 4}
        fx.list(["weather", "maps", "flaky"], refused)
        scan = ["scan", "--db", db, "--registry-url", fx.url, "--unsafe-allow-loopback", "--skip-packages"]
        for days in (-40, -1):
            assert lowdown(scan, days)["status"] == "completed"
        # Today: weather lists a third tool, flaky wants a login, maps left the Registry.
        fx.tools["weather"] = 3
        fx.status["flaky"] = 401
        fx.list(["weather", "flaky"], refused)
        assert lowdown(scan)["status"] == "completed"
        out = base / "published repo"
        said = lowdown(["publish", "--db", db, "--name", NAME, "--out", str(out)])
        port = free_port()
        log = open(base / "serve.log", "wb")
        proc = subprocess.Popen(
            [str(server_binary()), "serve", "--listen", f"127.0.0.1:{port}", "--db", db, "--name", NAME],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "LOWDOWN_HOME": str(base), "RUST_LOG": "lowdown_server=warn"},
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (base / "serve.log").read_text()
            assert time.monotonic() < deadline, "lowdown-server did not start"
            time.sleep(0.05)
        try:
            yield {"said": said, "dir": out, "hf": out / "huggingface", "api": url, "base": base}
        finally:
            proc.terminate()
            proc.wait(timeout=20)
            log.close()
    finally:
        fx.close()


@pytest.fixture(scope="module")
def hf_env(published: Dict[str, Any]) -> Iterator[None]:
    """The Hugging Face libraries offline, with a cache in the test's directory."""
    keys = ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HOME", "HF_DATASETS_CACHE"]
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HOME=str(published["base"] / "hf-home"),
        HF_DATASETS_CACHE=str(published["base"] / "hf-cache"),
    )
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def iso(ts: dt.datetime) -> str:
    """A timestamp as the CSV and the API write it: ISO-8601 UTC with milliseconds."""
    return ts.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


COLUMNS = "id,scan_run_id,target_id,observed_at,remote_url,http_status,reached_level,latency_ms,error_type,tool_count,server_version,schema_hash".split(",")


def as_csv(row: Dict[str, Any]) -> List[str]:
    """A loaded row as the CSV writes its fields (null: empty; numbers as stored)."""
    out = []
    for c in COLUMNS:
        v = row[c]
        if v is None:
            out.append("")
        elif c == "observed_at":
            out.append(iso(v))
        elif c == "latency_ms":
            out.append(repr(v).removesuffix(".0") if float(v).is_integer() else repr(v))
        else:
            out.append(str(v))
    return out


def card_front_matter(hf: Path) -> Dict[str, Any]:
    import yaml

    text = (hf / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_the_card_declares_the_licence_and_a_config_covering_every_month(published: Dict[str, Any]) -> None:
    hf = published["hf"]
    meta = card_front_matter(hf)
    assert meta["license"] == "cc-by-4.0"
    assert meta["pretty_name"] == f"Lowdown Scanner observations: {NAME}"
    [config] = meta["configs"]
    assert config["config_name"] == "scanner_observations"
    [files] = config["data_files"]
    matched = sorted(str(p.relative_to(hf)) for p in hf.glob(files["path"]))
    assert matched == published["said"]["parquet"]
    assert len(matched) >= 2, "40 days ago is another month"
    assert (hf / "REPORT.md").read_bytes() == (published["dir"] / "REPORT.md").read_bytes(), "the daily report travels with the copy"
    text = (hf / "README.md").read_text()
    assert "CC BY 4.0" in text and "https://creativecommons.org/licenses/by/4.0/" in text
    # The card and the Parquet files are beside the repository, not in its commits.
    tree = subprocess.run(["git", "-C", str(published["dir"]), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True).stdout.split()
    assert "LICENSE" in tree and "REPORT.md" in tree
    assert not [p for p in tree if p.startswith("huggingface")]


def test_pyarrow_reads_typed_columns_and_the_csv_rows(published: Dict[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    hf, repo = published["hf"], published["dir"]
    expected = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("scan_run_id", pa.string(), nullable=False),
            pa.field("target_id", pa.string(), nullable=False),
            pa.field("observed_at", pa.timestamp("ms", tz="UTC"), nullable=False),
            pa.field("remote_url", pa.string(), nullable=False),
            pa.field("http_status", pa.int64()),
            pa.field("reached_level", pa.int64(), nullable=False),
            pa.field("latency_ms", pa.float64()),
            pa.field("error_type", pa.string()),
            pa.field("tool_count", pa.int64()),
            pa.field("server_version", pa.string()),
            pa.field("schema_hash", pa.string()),
        ]
    )
    total = 0
    for rel in published["said"]["parquet"]:
        table = pq.read_table(hf / rel)
        assert table.schema.remove_metadata() == expected, table.schema
        month = Path(rel).stem
        with open(repo / "scanner_observations" / f"{month}.csv", newline="") as f:
            rows = list(csv.reader(f))
        assert rows[0] == COLUMNS
        assert [as_csv(r) for r in table.to_pylist()] == rows[1:], month
        total += table.num_rows
    assert total == published["said"]["export"]["rows"]


def test_datasets_loads_the_layout_by_its_card_and_by_a_glob(published: Dict[str, Any], hf_env: None) -> None:
    import datasets

    hf = published["hf"]
    by_card = datasets.load_dataset(str(hf), "scanner_observations", split="train")
    by_glob = datasets.load_dataset("parquet", data_files=str(hf / "data" / "scanner_observations" / "*.parquet"), split="train")
    assert by_card.num_rows == by_glob.num_rows == published["said"]["export"]["rows"]
    assert by_card.column_names == COLUMNS
    feats = by_card.features
    assert feats["id"] == datasets.Value("int64")
    assert feats["http_status"] == datasets.Value("int64")
    assert feats["latency_ms"] == datasets.Value("float64")
    assert feats["observed_at"] == datasets.Value("timestamp[ms, tz=UTC]")
    assert feats["target_id"] == datasets.Value("string")
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(by_card.to_list(), key=key) == sorted(by_glob.to_list(), key=key)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def test_every_target_in_the_dataset_says_what_the_api_answers(published: Dict[str, Any], hf_env: None) -> None:
    import datasets

    rows = datasets.load_dataset(str(published["hf"]), "scanner_observations", split="train").to_list()
    today = dt.datetime.now(dt.timezone.utc).date()
    window = today - dt.timedelta(days=29)
    targets = sorted({r["target_id"] for r in rows})
    assert targets == ["mcp:io.fixture/down", "mcp:io.fixture/flaky", "mcp:io.fixture/maps", "mcp:io.fixture/weather"]
    for target in targets:
        mine = [r for r in rows if r["target_id"] == target]
        answer = get_json(published["api"] + "/api/reputation/" + urllib.parse.quote(target, safe=""))
        scanner = answer["scanner"]
        in_window = [r for r in mine if r["observed_at"].date() >= window]
        assert scanner["observations_30d"] == len(in_window), (target, scanner)
        newest = max(mine, key=lambda r: r["observed_at"])
        latest = scanner["latest"]
        seen = {k: newest[k] for k in ("reached_level", "http_status", "tool_count", "server_version", "error_type")}
        assert {k: latest.get(k) for k in seen} == seen, (target, latest, newest)
        assert latest["observed_at"] == iso(newest["observed_at"])
        if newest["latency_ms"] is None:
            assert latest["latency_ms"] is None, (target, latest)
        else:
            assert latest["latency_ms"] == pytest.approx(newest["latency_ms"], abs=0.5), (target, latest)
    # The day's changes are in the data: weather lists three tools, flaky answers 401.
    latest_of = {t: max((r for r in rows if r["target_id"] == t), key=lambda r: r["observed_at"]) for t in targets}
    assert latest_of["mcp:io.fixture/weather"]["tool_count"] == 3
    assert (latest_of["mcp:io.fixture/flaky"]["http_status"], latest_of["mcp:io.fixture/flaky"]["reached_level"]) == (401, 0)
    assert latest_of["mcp:io.fixture/down"]["error_type"] == "conn_refused"
    assert latest_of["mcp:io.fixture/maps"]["observed_at"].date() == today - dt.timedelta(days=1)
