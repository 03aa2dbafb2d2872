"""The node identity (SPEC §3.5): ``LOWDOWN_HOME/node.json`` created, reused, regenerated,
shared with the npm proxy, and carried as ``node_id`` on every LangChain record."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import urllib.parse
from datetime import datetime
from pathlib import Path
from typing import List

import httpx
import pytest
from langchain_core.tools import tool

import prowl
from conftest import ROOT, LowdownServer
from prowl import identity
from prowl.langchain import ProwlCallbackHandler
from servers import Collector, Upstream

NODE_ID = re.compile(r"^ld_[0-9a-f]{12}$")
HOME_JS = ROOT / "npm" / "lowdown-proxy" / "src" / "record" / "home.js"


@tool
def identity_probe(q: str) -> str:
    """Answers anything."""
    return "ok"


def _send_records(collector: Collector, n: int = 1) -> List[dict]:
    handler = ProwlCallbackHandler()
    for i in range(n):
        identity_probe.invoke({"q": str(i)}, config={"callbacks": [handler]})
    assert prowl.flush(3.0)
    return collector.interactions()


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_first_record_creates_the_identity_private_and_well_formed(telemetry: Collector, lowdown_home: Path) -> None:
    assert not lowdown_home.exists()
    recs = _send_records(telemetry, 3)
    file = lowdown_home / "node.json"
    assert (_mode(lowdown_home), _mode(file)) == (0o700, 0o600)
    text = file.read_text()
    data = json.loads(text)
    assert set(data) == {"node_id", "created_at"} and NODE_ID.match(data["node_id"]), text
    assert datetime.fromisoformat(data["created_at"].replace("Z", "+00:00")).tzinfo is not None
    assert text == json.dumps(data, separators=(",", ":")) + "\n"  # the proxy's exact layout
    assert [r["node_id"] for r in recs] == [data["node_id"]] * 3
    assert prowl.stats()["no_node_id"] == 0
    assert [p.name for p in lowdown_home.iterdir()] == ["node.json"]  # no temp file left behind


def test_telemetry_observations_carry_no_node_id(telemetry: Collector, upstream: Upstream) -> None:
    client = prowl.observe(httpx.Client())
    client.get(upstream.url + "/ok")
    recs = _send_records(telemetry)
    [obs] = telemetry.observations()
    assert "node_id" not in obs and NODE_ID.match(recs[0]["node_id"])


RUN = """
import prowl
from langchain_core.tools import tool
from prowl.langchain import ProwlCallbackHandler

@tool
def identity_probe(q: str) -> str:
    '''Answers anything.'''
    return "ok"

identity_probe.invoke({"q": "x"}, config={"callbacks": [ProwlCallbackHandler()]})
assert prowl.flush(3.0)
"""


def _run_process(url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_API"))}
    env["PROWL_API_URL"] = url
    res = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode()


def test_the_identity_is_reused_across_runs(collector: Collector, clean_env: pytest.MonkeyPatch, lowdown_home: Path) -> None:
    _run_process(collector.url)
    first = (lowdown_home / "node.json").read_bytes()
    _run_process(collector.url)
    assert (lowdown_home / "node.json").read_bytes() == first
    ids = [r["node_id"] for r in collector.interactions()]
    assert ids == [json.loads(first)["node_id"]] * 2


@pytest.mark.parametrize(
    "corrupt",
    [
        b"",
        b"not json",
        b"\xff\xfe\x00garbage",
        b"[]",
        b'{"node_id": "ld_0123456789AB", "created_at": "2026-01-01T00:00:00.000Z"}',
        b'{"node_id": "ld_0123456789ab"}',
        b'{"node_id": "ld_0123456789abc", "created_at": "2026-01-01T00:00:00.000Z"}',
        b'{"node_id": 7, "created_at": "2026-01-01T00:00:00.000Z"}',
    ],
)
def test_a_corrupt_identity_is_regenerated(telemetry: Collector, lowdown_home: Path, corrupt: bytes) -> None:
    lowdown_home.mkdir(mode=0o700)
    file = lowdown_home / "node.json"
    file.write_bytes(corrupt)
    [rec] = _send_records(telemetry)
    data = json.loads(file.read_text())
    assert NODE_ID.match(data["node_id"]) and rec["node_id"] == data["node_id"]
    assert _mode(file) == 0o600
    assert prowl.stats()["no_node_id"] == 0


def test_an_identity_in_the_proxys_format_is_reused_as_is(telemetry: Collector, lowdown_home: Path) -> None:
    lowdown_home.mkdir(mode=0o700)
    file = lowdown_home / "node.json"
    written = b'{"node_id":"ld_00aa11bb22cc","created_at":"2026-01-02T03:04:05.678Z"}\n'
    file.write_bytes(written)
    os.chmod(file, 0o600)
    [rec] = _send_records(telemetry)
    assert rec["node_id"] == "ld_00aa11bb22cc"
    assert file.read_bytes() == written


def _proxy_load(home: Path) -> dict:
    """The npm proxy's own loadNodeIdentity (npm/lowdown-proxy/src/record/home.js) run on ``home``."""
    node = shutil.which("node")
    assert node is not None, "node is needed to check the file format shared with the proxy (make setup installs it)"
    script = f"import({json.dumps(HOME_JS.as_uri())}).then(m => console.log(JSON.stringify(m.loadNodeIdentity({json.dumps(str(home))}))))"
    res = subprocess.run([node, "-e", script], capture_output=True, timeout=30)
    assert res.returncode == 0, res.stderr.decode()
    return json.loads(res.stdout)


def test_prowl_and_the_proxy_share_one_identity_both_ways(telemetry: Collector, lowdown_home: Path, tmp_path: Path) -> None:
    # The proxy created it: prowl reuses it, byte for byte.
    made = _proxy_load(lowdown_home)
    before = (lowdown_home / "node.json").read_bytes()
    assert made["created"] is True
    [rec] = _send_records(telemetry)
    assert rec["node_id"] == made["node_id"]
    assert (lowdown_home / "node.json").read_bytes() == before
    # prowl created it: the proxy reads it unchanged.
    other = tmp_path / "other-home"
    mine = identity.load_node_identity(other)
    theirs = _proxy_load(other)
    assert mine.created and theirs == {"node_id": mine.node_id, "created_at": mine.created_at, "created": False}


def test_concurrent_first_loads_agree_on_one_id(tmp_path: Path) -> None:
    home = tmp_path / "racing"
    results: List[str] = []
    barrier = threading.Barrier(8)

    def load() -> None:
        barrier.wait()
        results.append(identity.load_node_identity(home).node_id)

    threads = [threading.Thread(target=load) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and len(set(results)) == 1
    assert json.loads((home / "node.json").read_text())["node_id"] == results[0]


def test_an_unwritable_home_still_sends_records_without_node_id(
    telemetry: Collector, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("LOWDOWN_HOME", str(blocker / "home"))  # cannot be created, even by root
    identity.reset()
    recs = _send_records(telemetry, 2)
    assert len(recs) == 2 and all(r.get("node_id") is None for r in recs)
    stats = prowl.stats()
    assert (stats["sent"], stats["no_node_id"], stats["invalid"]) == (2, 2, 0)


def test_the_default_home_is_dot_lowdown() -> None:
    assert identity.lowdown_home({}) == Path.home() / ".lowdown"
    assert identity.lowdown_home({"LOWDOWN_HOME": "rel"}) == Path("rel").absolute()


def test_the_server_treats_the_node_as_a_contributor(to_lowdown: LowdownServer, lowdown_home: Path) -> None:
    @tool
    def contributor_probe(q: str) -> str:
        """Fails on demand."""
        if q == "fail":
            raise RuntimeError("no")
        return "ok"

    handler = ProwlCallbackHandler()
    contributor_probe.invoke({"q": "a"}, config={"callbacks": [handler]})
    with pytest.raises(RuntimeError):
        contributor_probe.invoke({"q": "fail"}, config={"callbacks": [handler]})
    assert prowl.flush(3.0) and prowl.stats()["sent"] == 2
    nid = json.loads((lowdown_home / "node.json").read_text())["node_id"]
    path = "/api/reputation/" + urllib.parse.quote("contributor_probe", safe="")
    assert "task_breakdown" not in to_lowdown.get(path)
    rep = to_lowdown.get(path, headers={"x-lowdown-node-id": nid})
    task = rep["task_breakdown"]["contributor_probe"]
    assert (task["success"], task["failure"]) == (1, 1), rep
    node = to_lowdown.get("/api/node/" + nid)
    assert node["status"] == "active" and node["contribution"]["interactions"] >= 2
