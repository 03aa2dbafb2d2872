"""An ``agent`` directive (SPEC §11): the directive's prompt run by the provider's own
``claude --print`` with the directive's remote MCP server, judged by the core
(:func:`prowl._native.agent_verdict`: passed when the answer contains every expected
string).

How it runs, and why:
- The directive is checked first by the core's rule (:mod:`.directive`): its server is an
  https URL, never a program; the URL must pass the Scanner's SSRF rules here too. Nothing
  is started for a directive that fails either.
- Claude is given one MCP server, ``prowl_bench``: Lowdown's own stdio bridge
  (``python -m prowl.provider.bridge -- <url>``, :mod:`.bridge`), which alone connects to
  the remote, to an address resolved once and checked, without redirects, under caps.
- ``claude`` runs with :data:`CLAUDE_FLAGS`: only that server (``--strict-mcp-config``), no
  settings files of the user (``--setting-sources ""``: no hooks, permissions, env blocks,
  CLAUDE.md or plugins from them), no built-in tools (``--tools ""``), only the bridge's
  tools allowed and anything else denied without a prompt (``--permission-mode dontAsk``),
  no skills or slash commands, no session written to disk, a turn and dollar budget; the
  prompt on stdin, in an empty directory of its own.
- Its environment is only :data:`CHILD_ENV` taken from the hook's (the path, the home where
  the CLI keeps its login, the locale, the Anthropic credentials and endpoint); SSH agents,
  cloud credentials, tokens and every ``PROWL_*``/``LOWDOWN_*`` variable stay behind.
- ``PROWL_CLAUDE_CMD`` replaces ``claude`` (split like a shell would; tests use a stand-in).
- At most ``PROWL_PROVIDER_RUN_TIMEOUT_SECONDS`` (default 600; the lease is 30 minutes):
  past it the whole process group is killed.

Any failure (a refused directive, no CLI, a crash, a hang, output that is not the CLI's JSON
result) raises :class:`AgentFailed`; the worker then releases the directive. What is
submitted is the verdict: which expected strings were found and how long the run took.
Never the answer.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional

from .. import _native
from . import directive, protocol

#: The name the benchmark server gets in the MCP config (its tools are mcp__prowl_bench__*).
SERVER_NAME = "prowl_bench"
#: Default seconds an agent run may take.
DEFAULT_TIMEOUT_S = 600.0
#: Largest CLI output read.
MAX_OUTPUT = 8 << 20
#: Default dollar budget of one run (``--max-budget-usd``; ``PROWL_PROVIDER_MAX_BUDGET_USD``).
DEFAULT_BUDGET_USD = 0.25
#: The flags every run gets, after ``--mcp-config <file>`` (each checked against the real
#: CLI's ``--help`` by the tests).
CLAUDE_FLAGS = ("--print", "--output-format", "json", "--strict-mcp-config", "--setting-sources", "",
                "--tools", "", "--allowedTools", f"mcp__{SERVER_NAME}", "--permission-mode", "dontAsk",
                "--disable-slash-commands", "--no-session-persistence", "--max-turns", "8")
#: What the CLI keeps of the hook's environment: where to find programs and its own login,
#: the locale, the Anthropic credentials and endpoint (and Windows' essentials).
CHILD_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
             "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
             "CLAUDE_CONFIG_DIR", "SYSTEMROOT", "USERPROFILE", "APPDATA", "LOCALAPPDATA")


class AgentFailed(Exception):
    """The run produced no verdict; the message is a stable kind (``local_command_refused: …``
    and the directive's other refusals, ``blocked_url``, ``no_claude_cli``, ``crashed``,
    ``timeout``, ``unreadable_output``)."""


def claude_command(env: Mapping[str, str]) -> List[str]:
    """``PROWL_CLAUDE_CMD`` split like a shell would, else ``["claude"]``."""
    raw = env.get("PROWL_CLAUDE_CMD", "").strip()
    return shlex.split(raw) if raw else ["claude"]


def _timeout(env: Mapping[str, str]) -> float:
    try:
        v = float(env.get("PROWL_PROVIDER_RUN_TIMEOUT_SECONDS", ""))
        return v if v > 0 else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def _budget(env: Mapping[str, str]) -> str:
    try:
        v = float(env.get("PROWL_PROVIDER_MAX_BUDGET_USD", ""))
    except ValueError:
        v = DEFAULT_BUDGET_USD
    return f"{v if 0 < v <= 100 else DEFAULT_BUDGET_USD:g}"


def mcp_config(url: str, allow_loopback: bool) -> Dict[str, Any]:
    """The ``--mcp-config`` document: the bridge to ``url`` as the one stdio server, after
    the URL passed the SSRF rules here (the bridge checks again and pins the address)."""
    try:
        tls, host, port, _ = protocol.target(url, allow_loopback)
        protocol.addresses(host, port, allow_loopback)
    except (protocol.Blocked, OSError):
        raise AgentFailed("blocked_url") from None
    flag = ["--unsafe-allow-loopback"] if allow_loopback else []
    bridge = {"type": "stdio", "command": sys.executable, "args": ["-m", "prowl.provider.bridge", *flag, "--", url],
              "env": {}}
    return {"mcpServers": {SERVER_NAME: bridge}}


def command(argv: List[str], config_file: str, env: Mapping[str, str]) -> List[str]:
    """The CLI's whole command line: ``argv`` (the resolved CLI and its own arguments), the
    MCP config, :data:`CLAUDE_FLAGS` and the dollar budget."""
    return [*argv, "--mcp-config", config_file, *CLAUDE_FLAGS, "--max-budget-usd", _budget(env)]


def child_env(env: Mapping[str, str], work: str) -> Dict[str, str]:
    """The CLI's environment: :data:`CHILD_ENV` only, its temp directory its own."""
    out = {k: env[k] for k in CHILD_ENV if k in env}
    out.update(TMPDIR=work, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return out


def _answer(stdout: bytes) -> str:
    """The answer text of ``claude --print --output-format json``."""
    try:
        out = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise AgentFailed("unreadable_output") from None
    if isinstance(out, list):  # some versions print the whole message list
        out = next((m for m in reversed(out) if isinstance(m, dict) and m.get("type") == "result"), None)
    result = out.get("result") if isinstance(out, dict) else None
    if not isinstance(out, dict) or out.get("is_error") or not isinstance(result, str):
        raise AgentFailed("unreadable_output")
    return result


def run(d: Dict[str, Any], env: Mapping[str, str], allow_loopback: bool) -> Dict[str, Any]:
    """Runs directive ``d`` and returns its verdict (passed, dimensions, overall_score,
    test_results)."""
    try:
        spec = directive.check(d)
    except directive.Refused as e:
        raise AgentFailed(str(e)) from None
    config = mcp_config(spec["mcp_server"]["url"], allow_loopback)
    argv = claude_command(env)
    exe = shutil.which(argv[0], path=env.get("PATH")) if argv else None
    if not exe:
        raise AgentFailed("no_claude_cli")
    with tempfile.TemporaryDirectory(prefix="prowl-bench-") as work:
        cfg = os.path.join(work, "mcp.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        cmd = command([exe, *argv[1:]], cfg, env)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    cwd=work, env=child_env(env, work), start_new_session=True)
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
