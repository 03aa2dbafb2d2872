"""prowl_provider_hook.py, the drop-in provider hook: one file on the standard library that
carries a port of the core's rules (what a directive may ask, which hosts and addresses
the probe may reach, reading a JSON or SSE answer, the Scanner's probe, the schema hash and
canonical JSON, the conformance score). The core's vectors run against each port here, so
a rule stays defined once; end-to-end runs are in ``test_provider_hook_file_e2e.py``.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from prowl import _native
from prowl import prowl_provider_hook as hook
from test_vectors import VECTORS, as_bytes, expand

SOURCE = Path(hook.__file__)


def _cases(name: str) -> List[Dict[str, Any]]:
    return [dict(c, input=expand(c["input"])) for c in json.loads((VECTORS / f"{name}.json").read_text())["cases"]]


def _ids(x: Any) -> str:
    return x if isinstance(x, str) else x["name"]


def _outcome(f: Any) -> Tuple[str, Any]:
    try:
        return "ok", f()
    except hook.JsonError as e:
        return "error", str(e)


def _expected(case: Dict[str, Any]) -> Tuple[str, Any]:
    return ("error", case["error"]) if "error" in case else ("ok", case["expected"])


def _bytes_input(v: Any) -> bytes:
    return as_bytes(v)


@pytest.mark.parametrize("case", _cases("canonical_json"), ids=_ids)
def test_canonical_json_is_the_cores(case: Dict[str, Any]) -> None:
    assert _outcome(lambda: hook.canonical_json(_bytes_input(case["input"]["json"]))) == _expected(case)


@pytest.mark.parametrize("case", _cases("schema_hash"), ids=_ids)
def test_schema_hash_is_the_cores(case: Dict[str, Any]) -> None:
    i = case["input"]
    if "tools_json" in i:
        run = lambda: hook.hash_tools_value(hook.js_parse(_bytes_input(i["tools_json"])))  # noqa: E731
    else:
        run = lambda: hook.hash_tools_result(_bytes_input(i["result_json"]))  # noqa: E731
    assert _outcome(run) == _expected(case)


@pytest.mark.parametrize("case", _cases("blocked_ip"), ids=_ids)
def test_blocked_addresses_are_the_cores(case: Dict[str, Any]) -> None:
    assert (not hook.address_allowed(case["input"]["ip"], False)) == case["expected"]


@pytest.mark.parametrize("case", _cases("host_from_url"), ids=_ids)
def test_the_host_of_a_url_is_read_as_the_core_reads_it(case: Dict[str, Any]) -> None:
    assert hook.host_from_url(case["input"]["url"]) == case["expected"]


@pytest.mark.parametrize("case", _cases("benchmark_directive"), ids=_ids)
def test_the_directive_rule_is_the_cores(case: Dict[str, Any]) -> None:
    try:
        got: Tuple[str, Any] = ("ok", hook.check_directive(case["input"]["body"]))
    except hook.Refused as e:
        got = ("error", e.kind)
        if "error_path" in case:
            assert e.field == case["error_path"]
    assert got == _expected(case)


def replay(replies: List[Dict[str, Any]], probe: Any, reader: Any, sent: Optional[List[Any]] = None) -> Dict[str, Any]:
    """Runs ``probe`` over scripted replies as the core's vector harness does (the file's
    Probe and the core's alike); its last step. ``sent`` collects the requests."""
    step = probe.start()
    left = list(replies)
    while "done" not in step:
        assert left, "the probe sent more requests than replies"
        if sent is not None:
            sent.append((step["method"], list(step["headers"]), step["body"], step["answer"]))
        r = left.pop(0)
        if "failed" in r:
            step = probe.on_failed(r["failed"])
            continue
        got = None
        if step["answer"] is not None and 200 <= r["status"] < 300:
            got = reader(r.get("content_type"), *step["answer"])
            got.feed((r.get("body") or "").encode("utf-8"))
        step = probe.on_response(r["status"], r.get("session_id"), False, r.get("elapsed_ms", 0.0), got)
    assert not left, "replies left over: the probe stopped early"
    return step["done"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", _cases("conformance"), ids=_ids)
def test_the_probe_and_its_score_are_the_cores(case: Dict[str, Any]) -> None:
    assert replay(case["input"]["replies"], hook.Probe("0.1.0"), hook.AnswerReader) == case["expected"]


def test_the_probe_sends_what_the_cores_probe_sends() -> None:
    """Request by request against the core's own Probe, over the recorded server-everything
    conversation: the same methods, headers and bodies."""
    replies = _cases("conformance")[0]["input"]["replies"]
    mine: List[Any] = []
    core: List[Any] = []
    assert replay(replies, hook.Probe("0.1.0"), hook.AnswerReader, mine) == replay(
        replies, _native.Probe("0.1.0"), _native.AnswerReader, core)
    assert mine == core


SSE = (b": ping\r\nevent: message\r\nid: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n\r\n"
       b"data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":3,\"result\":{\"tools\":[]}}\r\r")


@pytest.mark.parametrize("cut", range(1, len(SSE)))
def test_an_sse_answer_split_anywhere_reads_the_same(cut: int) -> None:
    r = hook.AnswerReader("text/event-stream; charset=utf-8", 3, 1 << 20)
    assert not r.feed(SSE[:cut]) or cut >= len(SSE) - 2
    r.feed(SSE[cut:])
    assert r.finish() == ({"jsonrpc": "2.0", "id": 3.0, "result": {"tools": []}}, None)


@pytest.mark.parametrize("content_type,chunks,rid,cap,why", [
    ("application/json", [b'{"jsonrpc":"2.0","id":1,"result":{}}'], 9, 1 << 20, "no_answer"),
    ("text/html", [b"<html>hello</html>"], 1, 1 << 20, "not_json_rpc"),
    (None, [b'{"jsonrpc":"2.0","id":1,"result":{}}'], 1, 10, "too_large"),
    ("text/event-stream", [b'data: {"jsonrpc":"2.0","method":"n"}\n\n'], 3, 1 << 20, "no_answer"),
    ("text/event-stream", [b"<html>"], 3, 1 << 20, "not_json_rpc"),
    ("application/json", [b'{"jsonrpc":"2.0","id":true,"result":{}}'], 1, 1 << 20, "no_answer"),
])
def test_answers_that_are_not_the_answer_are_named_as_the_core_names_them(
        content_type: Optional[str], chunks: List[bytes], rid: int, cap: int, why: str) -> None:
    mine = hook.AnswerReader(content_type, rid, cap)
    core = _native.AnswerReader(content_type, rid, cap)
    for c in chunks:
        mine.feed(c)
        core.feed(c)
    assert mine.finish() == (None, why)
    with pytest.raises(_native.LowdownError) as e:
        core.answer()
    assert e.value.type == why


URLS = [
    "https://mcp.example.com/mcp", "HTTPS://MCP.Example.com:8443/mcp?x=1", "http://mcp.example.com/mcp",
    "https://user:pw@mcp.example.com/mcp", "https://localhost/mcp", "https://127.0.0.1/mcp",
    "http://127.0.0.1:9/mcp", "https://[::1]/mcp", "https://10.0.0.1/", "https://169.254.169.254/latest",
    "https://0x7f000001/", "https://127.1/", "https://printer.local/", "https://fileserver/",
    "https://[::ffff:10.0.0.1]/", "https://[fd00::1]/", "https://mcp.example.com /x", "https://a\tb.com/",
    "ftp://mcp.example.com/", "https://@mcp.example.com/", "https:\\\\mcp.example.com\\x",
    "https://mcp.example.com\\@evil.com/", "//mcp.example.com/mcp", "https://xn--nxasmq6b.com/",
    "https://ｌｏｃａｌｈｏｓｔ/", "https://1.1.1.1/", "https://[2606:4700::1111]/", "",
]


@pytest.mark.parametrize("loopback", [False, True])
@pytest.mark.parametrize("url", URLS)
def test_probe_urls_are_judged_as_the_core_judges_them(url: str, loopback: bool) -> None:
    try:
        core: Optional[str] = _native.probe_url_host(url, loopback)
    except _native.LowdownError:
        core = None
    try:
        mine: Optional[str] = hook.check_url_text(url, loopback)
    except hook.Blocked:
        mine = None
    assert mine == core


@pytest.mark.parametrize("ip", ["127.0.0.1", "::1", "::ffff:127.0.0.1", "10.0.0.1", "1.1.1.1", "169.254.169.254"])
def test_loopback_alone_is_lifted_for_tests(ip: str) -> None:
    try:
        _native.check_probe_address(__import__("ipaddress").ip_address(ip), True)
        core = True
    except _native.LowdownError:
        core = False
    assert hook.address_allowed(ip, True) == core


def test_it_imports_nothing_but_the_standard_library() -> None:
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported - set(sys.stdlib_module_names)


def test_its_pacing_and_session_keys_are_the_packages() -> None:
    from prowl.provider import state

    event = b'{"session_id": "abc-\\"123", "hook_event_name": "Stop"}'
    assert hook.session_key(event) == state.session_key(event)
    env = {"PROWL_PROVIDER_MIN_GAP_SECONDS": "3600", "PROWL_PROVIDER_MACHINE_GAP_SECONDS": "600"}
    for st in ({}, {"last_poll_at": 1_000_000}, {"last_claim_at": 1_000_000 - 700_000},
               {"last_claim_at": 1_000_000 - 700_000, "claim_at:0123456789abcdef": 1_000_000 - 700_000}):
        for live in (False, True):
            for session in (None, "0123456789abcdef"):
                assert hook.due(st, live, env, session, now_s=1_000.0) == state.due(st, live, env, 1_000.0, session)


@pytest.mark.parametrize("case", _cases("agent_verdict"), ids=_ids)
def test_the_agent_verdict_is_the_cores(case: Dict[str, Any]) -> None:
    i = case["input"]
    assert hook.agent_verdict(i["answer"], i["contains"], i["latency_ms"]) == case["expected"]


def test_its_version_is_the_packages() -> None:
    # The release in pyproject.toml (what the wheel carries; `make test-contracts` holds it
    # and this file's VERSION to the core's), not the installed metadata, which a dev venv
    # may have from an older build.
    pyproject = (Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    release = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)  # type: ignore[union-attr]
    assert hook.VERSION == release
    assert hook.RUNNER == f"prowl_provider_hook.py/{release}"
