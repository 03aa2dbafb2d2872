"""prowl_telemetry_hook.py, the drop-in hook: one file on the standard library, downloaded
from a real lowdown-server and run as the page's settings.json tells Claude Code to run it.

Its privacy rules are a port of the core's, so the core's host vectors run against it here.
"""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import LowdownServer
from prowl import prowl_telemetry_hook as hook
from servers import Collector, dead_url
from test_vectors import VECTORS, expand, number

SAMPLES = Path(__file__).parent / "fixtures" / "claude_hook"
SOURCE = Path(hook.__file__)
PLACEHOLDER = "/abs/path/to/prowl_telemetry_hook.py"


def _cases(name: str) -> List[Dict[str, Any]]:
    return [dict(c, input=expand(c["input"])) for c in json.loads((VECTORS / f"{name}.json").read_text())["cases"]]


def _policy(i: Dict[str, Any]) -> Dict[str, Any]:
    return hook.host_policy(i.get("allowlist"), i.get("allow_private"))


RULES = {
    "host_from_url": lambda i: hook.host_from_url(i["url"]),
    "blocked_ip": lambda i: hook.is_blocked_ip(i["ip"]),
    "private_name": lambda i: hook.is_private_name(i["host"]),
    "host_policy": lambda i: _policy(i),
    "host_verdict": lambda i: hook.host_verdict(i["host"], _policy(i)),
    "prepare_observation": lambda i: hook.prepare_observation(
        i["url"], i["method"], i["status"], number(i["latency_ms"]), i["response_bytes"], i["source"], _policy(i)
    ),
}


@pytest.mark.parametrize(
    "vector,case", [(v, c) for v in RULES for c in _cases(v)], ids=lambda x: x if isinstance(x, str) else x["name"]
)
def test_the_file_keeps_the_cores_privacy_rules(vector: str, case: Dict[str, Any]) -> None:
    assert RULES[vector](case["input"]) == case["expected"]


def test_it_imports_nothing_but_the_standard_library() -> None:
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported - set(sys.stdlib_module_names)


def _payload(name: str, **changes: Any) -> Dict[str, Any]:
    p: Dict[str, Any] = json.loads((SAMPLES / name).read_text())
    p.update(changes)
    return p


def _post_without_duration() -> Dict[str, Any]:
    """The recorded Post event without the tool's own duration: the latency must come from
    the Pre/Post pair."""
    p = _payload("webfetch_success.json")
    del p["duration_ms"]
    del p["tool_response"]["durationMs"]
    return p


def test_a_pre_post_pair_gives_the_latency_and_leaves_no_note(tmp_path: Path) -> None:
    env = {"LOWDOWN_HOME": str(tmp_path), "PROWL_API_URL": dead_url()}
    assert hook.observation(_payload("webfetch_pre.json"), env, 5_000_000_000) is None
    [note] = (tmp_path / "prowl-hook").glob("*.pre")
    assert stat.S_IMODE(note.stat().st_mode) == 0o600
    obs = hook.observation(_post_without_duration(), env, 5_250_500_000)
    assert obs == {"host": "docs.stripe.com", "method": "GET", "status": 200, "latency_ms": 250.5,
                   "response_bytes": 48213, "source": "prowl_telemetry_hook"}
    assert list((tmp_path / "prowl-hook").iterdir()) == []
    # The tool's own duration, when Claude Code gives it, is the latency; a Post without
    # its Pre and without a duration sends nothing rather than a made-up latency.
    assert hook.observation(_payload("webfetch_success.json"), env, 9)["latency_ms"] == 1312.0  # type: ignore[index]
    assert hook.observation(_post_without_duration(), env, 9) is None


def test_notes_stay_inside_their_directory_are_pruned_and_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook, "PENDING_MAX", 20)
    env = {"LOWDOWN_HOME": str(tmp_path)}
    notes = tmp_path / "prowl-hook"
    hostile = _payload("webfetch_pre.json", tool_use_id="../../../../etc/passwd", session_id="../x")
    hook.observation(hostile, env, 1)
    assert [p.parent for p in tmp_path.rglob("*") if p.is_file()] == [notes]
    stale = notes / "stale.pre"
    stale.write_text("1")
    os.utime(stale, (0, 0))
    for i in range(hook.PENDING_MAX + 5):
        hook.observation(_payload("webfetch_pre.json", tool_use_id=f"toolu_{i}"), env, 1)
    assert not stale.exists()
    assert len(list(notes.glob("*.pre"))) == hook.PENDING_MAX


def _download(server: LowdownServer, into: Path) -> Path:
    with urllib.request.urlopen(server.url + "/hooks/prowl_telemetry_hook.py", timeout=5) as res:
        assert res.headers["Content-Type"].startswith("text/x-python")
        body = res.read()
    assert body == SOURCE.read_bytes(), "the server serves the file the wheel ships"
    path = into / "prowl_telemetry_hook.py"
    path.write_bytes(body)
    path.chmod(0o755)  # the page: chmod +x
    return path


def _claude_code(settings: Dict[str, Any], payload: Dict[str, Any], env: Dict[str, str]) -> None:
    """Runs what ``settings`` registers for ``payload``'s event as Claude Code does: each
    command whose matcher matches the tool, in a shell, the event's JSON on stdin, within
    the hook's timeout."""
    for entry in settings["hooks"].get(payload["hook_event_name"], []):
        if entry.get("matcher") not in (None, "", "*", payload["tool_name"]):
            continue
        for h in entry["hooks"]:
            res = subprocess.run(h["command"], shell=True, input=json.dumps(payload).encode(), env=env,
                                 capture_output=True, timeout=h["timeout"])
            assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")


def _settings(path: Path) -> Dict[str, Any]:
    text = (SAMPLES / "settings_telemetry_hook.json").read_text()
    assert text.count(PLACEHOLDER) == 2
    return json.loads(text.replace(PLACEHOLDER, str(path)))


def _with_failures(settings: Dict[str, Any]) -> Dict[str, Any]:
    """The page's settings with the PostToolUseFailure block of docs/contribute-telemetry.md."""
    return {"hooks": {**settings["hooks"], "PostToolUseFailure": settings["hooks"]["PostToolUse"]}}


def _env(home: Path, api_url: str, **extra: str) -> Dict[str, str]:
    # The base interpreter, not this venv's (no prowl), and the hook's own variables.
    python = Path(sys.base_prefix) / "bin" / "python3"
    bin_dir = home / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python3").unlink(missing_ok=True)
    (bin_dir / "python3").symlink_to(python)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "LOWDOWN_HOME": str(home / "lowdown"),
            "PROWL_API_URL": api_url, "PYTHONNOUSERSITE": "1", **extra}


def test_the_pages_settings_run_the_downloaded_file_and_only_the_host_leaves(
    lowdown_server: LowdownServer, tmp_path: Path
) -> None:
    path = _download(lowdown_server, tmp_path)
    settings = _settings(path)
    collector = Collector()
    try:
        env = _env(tmp_path, collector.url, PROWL_AGENT_KEY="ak_CANARYKEY")
        _claude_code(settings, _payload("webfetch_pre.json"), env)
        _claude_code(settings, _post_without_duration(), env)
        _claude_code(settings, _payload("webfetch_private_host.json"), env)
        _claude_code(settings, _payload("bash_tool.json"), env)
        # The page registers no PostToolUseFailure, so a failed fetch is reported only with
        # the block docs/contribute-telemetry.md adds.
        _claude_code(settings, _payload("webfetch_failure.json"), env)
        assert collector.wait_requests(1)
        _claude_code(_with_failures(settings), _payload("webfetch_failure.json"), env)
        assert collector.wait_requests(2)
        [ok, failed] = collector.observations()
        assert set(ok) == {"host", "method", "status", "latency_ms", "response_bytes", "source"}
        assert (ok["host"], ok["status"], ok["response_bytes"]) == ("docs.stripe.com", 200, 48213)
        assert ok["latency_ms"] > 0, "the latency of the Pre/Post pair"
        assert (failed["host"], failed["status"], failed["latency_ms"]) == ("status.example-vendor.io", None, 30004.0)
        raw = collector.raw_bytes()
        assert b"x-agent-key: ak_canarykey" in raw.lower(), "the agent key goes along"
        for canary in (b"CANARYQUERY", b"CANARYPROMPT", b"CANARYRESULT", b"CANARYPATH", b"CANARYERROR", b"/api/charges", b"toolu_"):
            assert canary not in raw, canary
        assert list((tmp_path / "lowdown" / "prowl-hook").glob("*.pre")) == []
    finally:
        collector.close()


def test_at_a_real_server_a_pair_is_one_observation(lowdown_server: LowdownServer, tmp_path: Path) -> None:
    path = _download(lowdown_server, tmp_path)
    settings = _settings(path)
    host = "hook-e2e.stripe.com"
    url = f"https://{host}/v1/charges?CANARYQUERY=1"
    pre = _payload("webfetch_pre.json", tool_input={"url": url, "prompt": "x"}, tool_use_id="toolu_e2e")
    post = _post_without_duration()
    post.update(tool_input=pre["tool_input"], tool_use_id="toolu_e2e")
    env = _env(tmp_path, lowdown_server.url)
    _claude_code(settings, pre, env)
    _claude_code(settings, post, env)
    tel = lowdown_server.get("/api/reputation/" + urllib.parse.quote(host, safe=""))["telemetry"]
    assert (tel["observations"], tel["status_codes"]) == (1, {"200": 1})


@pytest.mark.parametrize(
    "stdin,extra",
    [
        (b"", {}),
        (b"{not json", {}),
        (b"[]", {}),
        (json.dumps({"hook_event_name": "PostToolUse", "tool_name": "WebFetch", "tool_input": {"url": 7}}).encode(), {}),
        ((SAMPLES / "webfetch_success.json").read_bytes(), {"PROWL_API_URL": "file:///etc/passwd"}),
        ((SAMPLES / "webfetch_success.json").read_bytes(), {"PROWL_API_URL": dead_url()}),
        (b'{"pad": "' + b"x" * (9 * 1024 * 1024) + b'"}', {}),
    ],
    ids=["empty", "not json", "not an object", "url not a string", "not an http url", "api down", "over 8 MiB"],
)
def test_bad_input_and_a_dead_api_exit_0_silently(stdin: bytes, extra: Dict[str, str], tmp_path: Path) -> None:
    env = _env(tmp_path, dead_url(), **extra)
    res = subprocess.run([sys.executable, "-I", "-S", str(SOURCE)], input=stdin, env=env, capture_output=True, timeout=10)
    assert (res.returncode, res.stdout, res.stderr) == (0, b"", b"")


def test_prowl_telemetry_0_sends_nothing(tmp_path: Path) -> None:
    collector = Collector()
    try:
        env = _env(tmp_path, collector.url, PROWL_TELEMETRY="0")
        hook.run((SAMPLES / "webfetch_success.json").read_bytes(), env, 1)
        assert hook.run((SAMPLES / "webfetch_success.json").read_bytes(), {**env, "PROWL_TELEMETRY": "1"}, 1) is not None
        assert len(collector.observations()) == 1
    finally:
        collector.close()
