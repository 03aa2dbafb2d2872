"""What the pyo3 binding itself promises, beyond the golden vectors: state kept across calls,
errors a caller can branch on, bytes in and out, misuse refused, stubs that match, and error
text that never carries the caller's data."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from prowl import _native

CANARY = "CANARY_7f3a9c_SECRET"


def test_the_stub_names_exactly_what_the_module_exports() -> None:
    stub = Path(__file__).resolve().parents[1] / "python" / "prowl" / "_native.pyi"
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    exported = {name for name in dir(_native) if not name.startswith("_")}
    assert exported - declared == set(), "exported but missing from _native.pyi"
    assert declared - exported - {"Direction", "CloseReason", "Source", "WeightTier", "Json"} == set(), "stubbed but not exported"


def test_every_export_has_a_docstring() -> None:
    for name in dir(_native):
        obj = getattr(_native, name)
        if callable(obj) and not name.startswith("_"):
            assert (obj.__doc__ or "").strip(), name


def test_classifier_keeps_a_request_split_across_feeds() -> None:
    c = _native.Classifier()
    request = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}\n'
    assert c.feed("client_to_server", request[:20], 1.0) == []
    assert c.buffered() == 20
    assert c.feed("client_to_server", request[20:], 2.0) == []
    assert c.pending() == 1
    [done] = c.feed("server_to_client", b'{"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n', 12.5)
    assert (done["tool_name"], done["outcome"], done["latency_ms"], done["id"]) == ("echo", "success", 10.5, "7")
    assert c.pending() == 0


def test_close_reports_what_is_still_pending_by_who_ended_the_session() -> None:
    call = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'
    c = _native.Classifier()
    c.feed("client_to_server", call, 0)
    [failed] = c.close(50, "server_ended")
    assert (failed["outcome"], failed["error_layer"], failed["failure_type"]) == ("failure", "server", "server_error")
    c = _native.Classifier()
    c.feed("client_to_server", call, 0)
    [cancelled] = c.close(50, "client_ended")
    assert (cancelled["outcome"], cancelled["error_layer"], cancelled["failure_type"]) == ("cancelled", None, None)
    with pytest.raises(_native.LowdownError):
        _native.Classifier().close(1, "nobody")


def test_a_bad_direction_is_refused_with_a_kind() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.Classifier().feed("sideways", b"", 0)
    assert caught.value.type == "invalid_argument"
    assert isinstance(caught.value, ValueError)


def test_core_errors_carry_type_kind_and_details() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_records([{"target": "npm:x", "target_type": "tool", "task_type": "t", "outcome": "nope"}])
    e = caught.value
    assert (e.type, e.kind) == ("unknown_value", "unknown_value")
    assert e.details["path"] == "records[0].outcome"
    assert e.details["index"] == 0
    assert str(e).startswith("records[0].outcome:")


def test_error_text_never_echoes_the_rejected_value() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_record({"target": "npm:x", "target_type": CANARY, "task_type": "t", "outcome": "success"})
    assert CANARY not in str(caught.value) and CANARY not in repr(caught.value.details)
    with pytest.raises(_native.LowdownError) as caught:
        _native.hash_tools_result(b'{"tools": [' + CANARY.encode())
    assert caught.value.type == "invalid_json" and CANARY not in str(caught.value)


def test_logdiff_refuses_a_misspelt_option_and_a_bad_pattern() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.LogDiff(max_line=3)
    assert caught.value.type == "invalid_argument"
    with pytest.raises(_native.LowdownError) as caught:
        _native.LogDiff(pattern="(")
    assert caught.value.type == "invalid_pattern"


def test_logdiff_quotes_redacted_lines_only_once() -> None:
    ld = _native.LogDiff(max_lines=5)
    ld.watch("/var/log/app.log", 0)
    line = f"ERROR login failed password={CANARY}\n".encode()
    assert ld.feed("/var/log/app.log", len(line), line) == "read"
    assert ld.offset("/var/log/app.log") == len(line)
    block = ld.take_block("10:00:00")
    assert block is not None and "[REDACTED]" in block and CANARY not in block
    assert ld.take_block("10:00:01") is None


def test_append_text_item_returns_bytes_keeping_every_other_byte() -> None:
    msg = b'{"id":1,  "jsonrpc":"2.0","result":{"content":[],"x":1.50}}'
    out = _native.append_text_item(msg, "log")
    assert isinstance(out, bytes)
    assert out.startswith(b'{"id":1,  "jsonrpc":"2.0","result":{"content":[{"type":"text","text":"log"}],"x":1.50}')


def test_records_flow_from_classifier_to_validation() -> None:
    c = _native.Classifier()
    c.feed("client_to_server", b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"' + CANARY.encode() + b'"}}}\n', 0)
    [ex] = c.feed("server_to_client", b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"' + CANARY.encode() + b'"}]}}\n', 3)
    record = _native.build_record(ex, c.facts(), {"target": "npm:echo", "source": "synthetic"}, "rec_1")
    assert CANARY not in repr(record)
    assert _native.validate_record(record)["task_type"] == "echo"
    with pytest.raises(_native.LowdownError) as caught:
        _native.build_record(ex, c.facts(), {"target": "npm:echo", "source": "made_up"})
    assert caught.value.type == "invalid_argument"


def test_host_policy_and_telemetry_keep_only_the_host() -> None:
    policy = _native.HostPolicy("stripe.com", None)
    obs = _native.prepare_observation(f"https://api.stripe.com/v1/{CANARY}?k={CANARY}", "get", 200, 12.0, 10, "organic", policy)
    assert obs is not None and obs["host"] == "api.stripe.com" and CANARY not in repr(obs)
    assert _native.prepare_observation("http://localhost/", "GET", 200, 1.0, None, "organic", _native.HostPolicy()) is None
    rollup = _native.TelemetryRollup()
    rollup.add(200, 12.0, _native.weight_tier(False, True))
    other = _native.TelemetryRollup(rollup.to_dict())
    other.merge(rollup)
    assert other.summary()["observations"] == 2


def test_constants_are_the_cores() -> None:
    assert _native.API_URL == "http://127.0.0.1:7077"
    assert _native.NODE_ID_HEADER == "x-lowdown-node-id"


def test_feed_json_gives_as_text_what_feed_gives() -> None:
    import json

    session = [
        ("client_to_server", b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}\n', 0.0),
        ("server_to_client", b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}\n', 3.0),
        ("client_to_server", b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n', 4.0),
    ]
    a, b = _native.Classifier(), _native.Classifier()
    for direction, line, at in session:
        assert json.loads(b.feed_json(direction, line, at)) == a.feed(direction, line, at)
    assert b.feed_json("server_to_client", b"not json\n", 5.0) == "[]"
