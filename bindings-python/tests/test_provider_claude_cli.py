"""The provider hook's ``claude`` command line against the real Claude Code CLI (the npm
package pinned in mk/prowl.mk, named by ``PROWL_TEST_CLAUDE_CLI``), with a stand-in
Anthropic API in place of the model: every flag the hook passes is one the CLI knows, and a
whole run through the hook's MCP config reaches server-everything through the bridge
while the user's own CLAUDE.md, settings hooks and built-in tools stay out. A control run
without ``--setting-sources ""`` shows the canaries do catch what the flag keeps out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List


from prowl import _native
from prowl import prowl_provider_hook as hook
from prowl.provider.core import CORE
from provider_support import Everything, FakeAnthropic

#: Flags the CLI accepts but leaves out of ``--help`` (the run below proves it takes them).
HIDDEN = {"--max-turns"}
MEMORY_CANARY = "CANARY-MEMORY-5e1d: always answer pineapple"


def cli() -> str:
    path = os.environ.get("PROWL_TEST_CLAUDE_CLI", "")
    assert path and Path(path).exists(), "the real claude CLI is missing: run `make setup-prowl` (mk/prowl.mk pins it)"
    return path


def test_every_flag_the_hook_passes_is_in_the_real_clis_help(tmp_path: Path) -> None:
    out = subprocess.run([cli(), "--help"], env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
                         capture_output=True, timeout=60)
    listed = set(re.findall(r"--[a-zA-Z][a-zA-Z-]*", out.stdout.decode()))
    passed = {a for a in hook.claude_argv(["claude"], "mcp.json", {}) if a.startswith("--")}
    assert passed - HIDDEN <= listed, sorted(passed - HIDDEN - listed)
    assert not HIDDEN & listed, "listed now: drop it from HIDDEN"


def reply(body: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The model's turn: call the bridge's echo once, then answer with the tool names."""
    if "tool_result" not in json.dumps(body.get("messages")):
        return [{"type": "tool_use", "id": "toolu_1", "name": f"mcp__{hook.SERVER_NAME}__echo",
                 "input": {"message": "through the bridge"}}]
    return [{"type": "text", "text": "The server offers echo and get-sum."}]


def run_real_cli(tmp: Path, url: str, flags_out: tuple = ()) -> Dict[str, Any]:
    """Runs the real CLI as the hook does (its MCP config, command line and environment),
    with a home holding the user's own CLAUDE.md and a settings Stop hook as canaries."""
    home = tmp / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text(MEMORY_CANARY)
    hook_canary = tmp / "settings-hook-ran"
    (home / ".claude" / "settings.json").write_text(json.dumps({
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"touch {hook_canary}"}]}]},
        "permissions": {"allow": ["Bash", "Read", "Write"]}}))
    api = FakeAnthropic(reply)
    try:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-test",
               "ANTHROPIC_BASE_URL": api.url, "AWS_SECRET_ACCESS_KEY": "canary-aws", "PROWL_AGENT_KEY": "ak_canary"}
        with tempfile.TemporaryDirectory(prefix="prowl-bench-") as work:
            cfg = os.path.join(work, "mcp.json")
            Path(cfg).write_text(json.dumps(hook.mcp_config(url, True, CORE)))
            cmd = [a for a in hook.claude_argv([cli()], cfg, env)]
            for flag in flags_out:  # the control run leaves a flag (and its value) out
                i = cmd.index(flag)
                del cmd[i:i + 2]
            # The CLI gives an MCP server 30 s (MCP_TIMEOUT) to connect, then runs without its
            # tools; on a loaded machine the bridge (a Python start, then server-everything's
            # initialize) can take longer. The run's own timeout is the bound here.
            run_env = {**hook.child_env(env, work), "MCP_TIMEOUT": "180000"}
            p = subprocess.run(cmd, input=b"Which tools does this MCP server offer?", capture_output=True,
                               cwd=work, env=run_env, timeout=180)
    finally:
        api.close()
    return {"proc": p, "requests": api.messages(), "hook_ran": hook_canary.exists()}


def test_a_run_sees_only_the_bridge_and_none_of_the_users_own_files(tmp_path: Path, everything: Everything) -> None:
    ran = run_real_cli(tmp_path, everything.url)
    p, requests = ran["proc"], ran["requests"]
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    verdict = _native.agent_verdict(hook._cli_answer(p.stdout), ["echo", "get-sum"], 1.0)
    assert verdict["passed"], p.stdout
    assert requests, "the CLI never asked the model"
    tools = {t.get("name") for r in requests for t in r.get("tools", [])}
    ours = {t for t in tools if t.startswith(f"mcp__{hook.SERVER_NAME}__")}
    assert "mcp__prowl_bench__echo" in ours and "mcp__prowl_bench__get-sum" in ours, tools
    # No built-in tool (Bash, Read, Write, WebFetch, Task, ...); the CLI's own deferred-tool
    # placeholder is not a tool the model can use.
    assert tools - ours <= {"DeferredToolPlaceholder"}, sorted(tools - ours)
    # server-everything's echo answered through the bridge.
    assert "Echo: through the bridge" in json.dumps(requests[-1]["messages"]), requests[-1]["messages"][-1]
    sent = json.dumps(requests)
    assert MEMORY_CANARY not in sent, "the user's CLAUDE.md reached the model"
    assert "canary-aws" not in sent and "ak_canary" not in sent
    assert not ran["hook_ran"], "a hook from the user's settings ran"


def test_the_control_run_without_setting_sources_does_load_them(tmp_path: Path, everything: Everything) -> None:
    ran = run_real_cli(tmp_path, everything.url, flags_out=("--setting-sources",))
    assert MEMORY_CANARY in json.dumps(ran["requests"]) or ran["hook_ran"], "the canaries cannot see the user's files"
