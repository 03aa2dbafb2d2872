"""The README's examples run: its Python blocks execute (in order, in one fresh process)
against a real lowdown-server, and its settings.json snippet is valid hook config."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import LowdownServer

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang: str) -> list:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def test_python_blocks_run_and_report_to_lowdown(lowdown_server: LowdownServer, tmp_path: Path) -> None:
    code = "\n".join(_blocks("python"))
    assert code.count("prowl.observe(") >= 2
    ast.parse(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROWL_", "LOWDOWN_API"))}
    env["PROWL_API_URL"] = lowdown_server.url
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, timeout=60)
    assert res.returncode == 0, res.stderr.decode()
    out = res.stdout.decode()
    stats = ast.literal_eval(out.splitlines()[0])
    assert stats["sent"] == 2 and stats["failed"] == 0 and stats["pending"] == 0, out
    telemetry_line = out.splitlines()[1]
    assert telemetry_line not in ("None", "{}"), out
    rep = lowdown_server.get("/api/reputation/api.stripe.com")
    assert rep["telemetry"], rep
    tool = lowdown_server.get("/api/reputation/get_weather")
    assert tool["interactions"] >= 1


def test_settings_json_snippets_are_valid_hook_configs() -> None:
    report, preflight = _blocks("json")
    hooks = json.loads(report)["hooks"]
    for event in ("PostToolUse", "PostToolUseFailure"):
        [entry] = hooks[event]
        assert entry["matcher"] == "WebFetch"
        assert entry["hooks"] == [{"type": "command", "command": "prowl-claude-hook", "timeout": 5}]
    [entry] = json.loads(preflight)["hooks"]["PreToolUse"]
    assert re.fullmatch(entry["matcher"], "mcp__weather__get_forecast") and not re.fullmatch(entry["matcher"], "WebFetch")
    assert entry["hooks"] == [{"type": "command", "command": "prowl-claude-hook preflight", "timeout": 5}]


def test_every_documented_variable_is_one_prowl_reads() -> None:
    documented = set(re.findall(r"`((?:PROWL|LOWDOWN)_[A-Z_]+)", README.read_text()))
    from prowl import _core

    source = "".join(p.read_text() for p in (README.parent / "python" / "prowl").rglob("*.py"))
    read = set(re.findall(r'"((?:PROWL|LOWDOWN)_[A-Z_]+)"', source)) | {_core.API_URL_ENV, _core.PROWL_API_URL_ENV}
    # Read through the core's settings (core/src/settings.rs), as every host reads them.
    from pathlib import Path

    from prowl import config, identity

    assert config.Settings.from_env({"PROWL_TELEMETRY": "0"}).enabled is False
    assert identity.lowdown_home({"LOWDOWN_HOME": "/srv/ld"}) == Path("/srv/ld")
    nowhere = {"LOWDOWN_HOME": "/nonexistent/lowdown-home"}
    assert config.Settings.from_env({**nowhere, "LOWDOWN_AUTOSTART": "0"}).may_start is False
    assert config.Settings.from_env(nowhere).may_start is True
    read |= {"PROWL_TELEMETRY", "LOWDOWN_HOME", "LOWDOWN_AUTOSTART"}
    assert documented <= read, f"README documents variables prowl never reads: {documented - read}"
    assert {"PROWL_API_URL", "PROWL_AGENT_KEY", "PROWL_TELEMETRY", "PROWL_TELEMETRY_ALLOWLIST", "PROWL_TELEMETRY_ALLOW_PRIVATE"} <= documented
