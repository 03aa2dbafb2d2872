"""An ``agent`` directive (SPEC §11): the directive's prompt run by the provider's own
``claude --print`` with the directive's MCP server configured, judged by the core
(:func:`prowl._native.agent_verdict`: passed when the answer contains every expected
string).

How it runs, and why:
- ``claude --print --output-format json --strict-mcp-config --mcp-config <file> --tools ""
  --allowedTools mcp__prowl_bench --max-turns 8``, the prompt on stdin, in an empty
  temporary directory: only the benchmark server's tools are available (no Bash, no file
  tools, none of the user's own MCP servers), so a directive's prompt cannot reach the
  provider's files.
- ``PROWL_CLAUDE_CMD`` replaces ``claude`` (split like a shell would; tests use a stand-in).
- A stdio server runs only when its command is in ``PROWL_PROVIDER_COMMANDS`` (default
  ``npx,uvx``: package runners); a URL server must pass the Scanner's SSRF rules.
- The environment passed on has every ``PROWL_*`` and ``LOWDOWN_*`` variable removed (the
  agent key stays with the hook).
- At most ``PROWL_PROVIDER_RUN_TIMEOUT_SECONDS`` (default 600; the lease is 30 minutes):
  past it the whole process group is killed.

Any failure (no CLI, a crash, a hang, output that is not the CLI's JSON result) raises
:class:`AgentFailed`; the worker then releases the directive. What is submitted is the
verdict: which expected strings were found and how long the run took. Never the answer.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional

from .. import _native
from . import protocol

#: The name the benchmark server gets in the MCP config (its tools are mcp__prowl_bench__*).
SERVER_NAME = "prowl_bench"
#: Default seconds an agent run may take.
DEFAULT_TIMEOUT_S = 600.0
#: Largest CLI output read.
MAX_OUTPUT = 8 << 20


class AgentFailed(Exception):
    """The run produced no verdict; the message is a stable kind (``no_claude_cli``,
    ``command_not_allowed``, ``blocked_url``, ``crashed``, ``timeout``, ``unreadable_output``)."""


def claude_command(env: Mapping[str, str]) -> List[str]:
    """``PROWL_CLAUDE_CMD`` split like a shell would, else ``["claude"]``."""
    raw = env.get("PROWL_CLAUDE_CMD", "").strip()
    return shlex.split(raw) if raw else ["claude"]


def allowed_commands(env: Mapping[str, str]) -> List[str]:
    """``PROWL_PROVIDER_COMMANDS`` (default ``npx,uvx``)."""
    raw = env.get("PROWL_PROVIDER_COMMANDS", "npx,uvx")
    return [c.strip() for c in raw.split(",") if c.strip()]


def _timeout(env: Mapping[str, str]) -> float:
    try:
        v = float(env.get("PROWL_PROVIDER_RUN_TIMEOUT_SECONDS", ""))
        return v if v > 0 else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def mcp_config(server: Dict[str, Any], env: Mapping[str, str], allow_loopback: bool) -> Dict[str, Any]:
    """The ``--mcp-config`` document for the directive's server, after the safety checks."""
    if "url" in server:
        try:
            tls, host, port, _ = protocol.target(server["url"], allow_loopback)
            protocol.addresses(host, port, allow_loopback)
        except (protocol.Blocked, OSError):
            raise AgentFailed("blocked_url") from None
        entry: Dict[str, Any] = {"type": "http", "url": server["url"]}
    else:
        command = server.get("command", "")
        if os.path.basename(command) not in allowed_commands(env) or os.path.basename(command) != command:
            raise AgentFailed("command_not_allowed")
        entry = {"command": command, "args": list(server.get("args") or [])}
    return {"mcpServers": {SERVER_NAME: entry}}


def _answer(stdout: bytes) -> str:
    """The answer text of ``claude --print --output-format json``."""
    try:
        out = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise AgentFailed("unreadable_output") from None
    if isinstance(out, list):  # some versions print the whole message list
        out = next((m for m in reversed(out) if isinstance(m, dict) and m.get("type") == "result"), None)
    if not isinstance(out, dict) or out.get("is_error") or not isinstance(out.get("result"), str):
        raise AgentFailed("unreadable_output")
    return out["result"]


def run(spec: Dict[str, Any], env: Mapping[str, str], allow_loopback: bool) -> Dict[str, Any]:
    """Runs the directive and returns its verdict (passed, dimensions, overall_score,
    test_results)."""
    config = mcp_config(spec["mcp_server"], env, allow_loopback)
    argv = claude_command(env)
    exe = shutil.which(argv[0], path=env.get("PATH")) if argv else None
    if not exe:
        raise AgentFailed("no_claude_cli")
    child_env = {k: v for k, v in env.items() if not k.startswith(("PROWL_", "LOWDOWN_"))}
    with tempfile.TemporaryDirectory(prefix="prowl-bench-") as work:
        cfg = os.path.join(work, "mcp.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        cmd = [exe, *argv[1:], "--print", "--output-format", "json", "--strict-mcp-config",
               "--mcp-config", cfg, "--tools", "", "--allowedTools", f"mcp__{SERVER_NAME}", "--max-turns", "8"]
        start = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    cwd=work, env=child_env, start_new_session=True)
        except OSError:
            raise AgentFailed("no_claude_cli") from None
        try:
            stdout, _ = proc.communicate(spec["prompt"].encode("utf-8"), timeout=_timeout(env))
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise AgentFailed("timeout") from None
        finally:
            _kill(proc)
        elapsed_ms = (time.monotonic() - start) * 1000.0
    if proc.returncode != 0:
        raise AgentFailed("crashed")
    if len(stdout) > MAX_OUTPUT:
        raise AgentFailed("unreadable_output")
    return _native.agent_verdict(_answer(stdout), list(spec["expect"]["contains"]), elapsed_ms)


def _kill(proc: "subprocess.Popen[bytes]") -> None:
    """Ends the CLI and everything it started (its MCP server)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def configured_command(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The CLI the worker would run, resolved on ``PATH``, or ``None``."""
    env = os.environ if env is None else env
    argv = claude_command(env)
    return shutil.which(argv[0], path=env.get("PATH")) if argv else None
