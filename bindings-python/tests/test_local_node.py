"""The local node (SPEC §2) from prowl: with no deployment configured and nothing answering,
the sender starts the installed lowdown-server (here the debug build, named by
LOWDOWN_SERVER_BIN) and the records reach it; LOWDOWN_AUTOSTART=0 and a binary that cannot
start leave them in the spool."""

from __future__ import annotations

import json
import logging
import os
import signal
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

import prowl
from prowl.sender import SENDER
from servers import server_binary, wait_for

TARGET = "npm:prowl-local-target"


def _record(i: int) -> dict:
    return {"actor": "agent:test", "target": TARGET, "target_type": "tool", "task_type": "lookup",
            "outcome": "success", "source": "organic", "record_id": f"prowl-local-{i}", "latency_ms": 3.0}


def _announcement(home: Path) -> Optional[dict]:
    try:
        return json.loads((home / "local-node.json").read_text())
    except (OSError, ValueError):
        return None


@pytest.fixture
def unconfigured(clean_env: pytest.MonkeyPatch, lowdown_home: Path) -> Iterator[pytest.MonkeyPatch]:
    """A user who configured nothing; the node a test starts is ended after it."""
    clean_env.setenv(prowl._node.BIN_ENV, str(server_binary()))
    SENDER.reset()
    yield clean_env
    node = _announcement(lowdown_home)
    if node:
        os.kill(node["pid"], signal.SIGTERM)
        wait_for(lambda: not (lowdown_home / "local-node.json").exists(), "the node ended", 10)
    SENDER.reset()
    prowl.configure()


def test_nothing_configured_starts_the_local_node_and_the_records_reach_it(unconfigured: pytest.MonkeyPatch, lowdown_home: Path) -> None:
    settings = prowl.configure()
    assert (settings.may_start, settings.api_url) == (True, "http://127.0.0.1:7077")
    for i in range(3):
        SENDER.submit_record(_record(i))
    prowl.flush(2.0)
    node = wait_for(lambda: _announcement(lowdown_home), "a node announced", 60)
    assert Path(f"/proc/{node['pid']}/cwd").resolve() == lowdown_home.resolve()

    def answered() -> Any:
        prowl.flush(1.0)
        with urllib.request.urlopen(f"{node['url']}/api/reputation/{TARGET}", timeout=5) as r:
            a = json.loads(r.read())
        return a if a.get("interactions") == 3 else None

    answer = wait_for(answered, "the three records at the node", 60)
    assert answer["rated_interactions"] == 3, "loopback is trusted: nothing capped"
    assert not list((lowdown_home / "spool").glob("*.jsonl")), "nothing left waiting"


@pytest.mark.parametrize("case", ["autostart_off", "no_binary"])
def test_no_node_leaves_the_records_in_the_spool(case: str, unconfigured: pytest.MonkeyPatch, lowdown_home: Path, caplog: pytest.LogCaptureFixture) -> None:
    if case == "autostart_off":
        unconfigured.setenv("LOWDOWN_AUTOSTART", "0")
    else:
        unconfigured.setenv(prowl._node.BIN_ENV, str(lowdown_home / "no-such-lowdown-server"))
    prowl.configure()
    with caplog.at_level(logging.INFO, logger="prowl"):
        for round_ in range(2):
            SENDER.submit_record(_record(round_))
            prowl.flush(2.0)
    assert _announcement(lowdown_home) is None
    assert len(list((lowdown_home / "spool").glob("*.jsonl"))) >= 1
    said = [r.getMessage() for r in caplog.records]
    if case == "autostart_off":
        assert said == []
    else:
        assert len(said) == 1 and said[0].startswith("prowl: no Lowdown node to report to ("), said


def test_an_api_url_that_is_not_one_is_said_and_the_records_wait(unconfigured: pytest.MonkeyPatch, lowdown_home: Path, caplog: pytest.LogCaptureFixture) -> None:
    unconfigured.setenv("PROWL_API_URL", "lowdown.example.org")
    with caplog.at_level(logging.WARNING, logger="prowl"):
        settings = prowl.configure()
    assert settings.may_start is False
    assert [r.getMessage() for r in caplog.records] == [
        'prowl: the API URL "lowdown.example.org" must start with http:// or https://; records wait in the spool'
    ]
    SENDER.submit_record(_record(0))
    prowl.flush(1.0)
    assert len(list((lowdown_home / "spool").glob("*.jsonl"))) == 1
    assert _announcement(lowdown_home) is None
