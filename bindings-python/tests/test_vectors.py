"""Every golden vector in tests/vectors/*.json, run against the pyo3 build (``prowl._native``).

One test per case (id ``<file>::<case name>``). A case listed under ``python`` in xfail.json is
marked ``xfail(strict=True)``, so it is reported and fails the run once it passes; a vector file
whose ``operation`` is in neither :data:`OPERATIONS` nor :data:`NOT_EXPOSED` (with a reason)
fails, so a new operation cannot be skipped silently.
The expansion of ``$repeat``/``$concat``/``$seq``/``$bytes_hex``/``$bytes`` mirrors
core/tests/common/mod.rs.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

from prowl import _native

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors"


def as_bytes(v: Any) -> bytes:
    """A byte input from a string, bytes or any ``$`` form."""
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, dict) and "$repeat" in v:
        unit, times = v["$repeat"]
        return as_bytes(unit) * times
    if isinstance(v, dict) and ("$concat" in v or "$bytes" in v):
        return b"".join(as_bytes(p) for p in v.get("$concat", v.get("$bytes")))
    if isinstance(v, dict) and "$seq" in v:
        prefix, start, stop, suffix = v["$seq"]
        head, tail = as_bytes(prefix), as_bytes(suffix)
        return b"".join(head + str(n).encode() + tail for n in range(start, stop + 1))
    if isinstance(v, dict) and "$bytes_hex" in v:
        return bytes.fromhex(v["$bytes_hex"])
    raise TypeError(f"not a string or byte form: {json.dumps(v)[:80]}")


def as_str(v: Any) -> str:
    """A string input from a string or a ``$repeat``/``$concat`` form (must be UTF-8)."""
    return v if isinstance(v, str) else as_bytes(v).decode("utf-8")


def expand(v: Any) -> Any:
    """``$repeat``/``$concat``/``$seq`` become ``str``, ``$bytes``/``$bytes_hex`` become ``bytes``."""
    if isinstance(v, list):
        return [expand(x) for x in v]
    if isinstance(v, dict):
        if len(v) == 1 and ("$repeat" in v or "$concat" in v or "$seq" in v):
            return as_bytes(v).decode("utf-8")
        if len(v) == 1 and ("$bytes" in v or "$bytes_hex" in v):
            return as_bytes(v)
        return {k: expand(x) for k, x in v.items()}
    return v


DIRECTIONS = {"c2s": "client_to_server", "s2c": "server_to_client"}


def number(v: Any) -> float:
    """Vector numbers may be written as the strings NaN, Infinity and -Infinity."""
    return float(v) if isinstance(v, str) else v


def policy(n: Any, i: Dict[str, Any]) -> Any:
    return n.HostPolicy(i.get("allowlist"), i.get("allow_private"))


def classify(n: Any, i: Dict[str, Any]) -> Any:
    """Events fed in order to one Classifier; every exchange, then the facts."""
    c = n.Classifier()
    exchanges: List[Any] = []
    for e in i["events"]:
        if e.get("close") is True:
            exchanges += c.close(e["at_ms"], e["reason"])
        else:
            exchanges += c.feed(DIRECTIONS.get(e["dir"], e["dir"]), as_bytes(e["data"]), e["at_ms"])
    return {"exchanges": exchanges, "facts": c.facts()}


def logdiff(n: Any, i: Dict[str, Any]) -> Any:
    """Scripted steps against one LogDiff; the results of ``offset`` and ``take``."""
    ld = n.LogDiff(**i["options"])
    out: List[Any] = []
    for s in i["steps"]:
        if "watch" in s:
            ld.watch(s["watch"], s.get("size"))
        elif "feed" in s:
            ld.feed(s["feed"], s["size"], as_bytes(s["data"]))
        elif "restart" in s:
            ld.restart(s["restart"])
        elif "offset" in s:
            out.append(ld.offset(s["offset"]))
        elif "take" in s:
            out.append(ld.take_block(s["take"]))
        else:
            raise ValueError(f"unknown logdiff step {s}")
    return out


def summarize_telemetry(n: Any, i: Dict[str, Any]) -> Any:
    """Observations added to one rollup, then its summary (also through its stored form)."""
    r = n.TelemetryRollup()
    for o in i["observations"]:
        r.add(o.get("status"), o["latency_ms"], n.weight_tier(o["valid_agent_key"], o["known_host"]))
    summary = r.summary()
    assert n.summarize_telemetry(n.TelemetryRollup(r.to_dict()).to_dict()) == summary
    return summary


def append_text_item(n: Any, i: Dict[str, Any]) -> Any:
    out = n.append_text_item(as_bytes(i["message"]), as_str(i["text"]))
    return None if out is None else out.decode("utf-8")


#: ``operation`` → ``(native module, expanded input) -> result``.
def telemetry_budget(n: Any, i: Dict[str, Any]) -> Any:
    b = n.TelemetryBudget(i["with_agent_key"])
    out: List[Any] = []
    for s in i["steps"]:
        if "take" in s:
            out.append(b.take(s["take"][0], s["take"][1]))
        elif "refused" in s:
            b.refused(s["refused"][0], number(s["refused"][1]))
        elif "wait" in s:
            out.append(b.wait_ms(s["wait"]))
    return out


def spool(n: Any, i: Dict[str, Any]) -> Any:
    op = i["op"]
    if op == "file_name":
        return n.spool_file_name(i["now_ms"], i["seq"], i["pid"], i["token"])
    if op == "claim_name":
        return n.spool_claim_name(i["name"], i["pid"])
    if op == "entry":
        kind, pid, original = n.spool_entry(i["name"])
        return {"kind": kind, "pid": pid, "original": original} if kind == "claimed" else {"kind": kind}
    if op == "encode":
        return n.spool_encode(i["records"])
    if op == "decode":
        records, corrupt = n.spool_decode(i["text"])
        return {"records": records, "corrupt": corrupt}
    if op == "over_bound":
        return n.spool_over_bound(i["names"])
    if op == "dropped":
        return n.spool_dropped(i["previous"], i["records"], i["now_iso"])
    raise AssertionError(f"unknown spool op {op}")


def conformance(n: Any, i: Dict[str, Any]) -> Any:
    """Drives the binding's Probe with the scripted replies, as the provider hook's HTTP
    driver does, and returns the scored result."""
    replies = iter(i["replies"])
    probe = n.Probe("0.1.0")
    step = probe.start()
    while "done" not in step:
        r = next(replies)
        if "failed" in r:
            step = probe.on_failed(r["failed"])
            continue
        reader = None
        if step["answer"] is not None and 200 <= r["status"] < 300:
            rid, cap = step["answer"]
            reader = n.AnswerReader(r.get("content_type"), rid, cap)
            reader.feed(r.get("body", "").encode("utf-8", "surrogatepass"))
        step = probe.on_response(r["status"], r.get("session_id"), False, r.get("elapsed_ms", 0.0), reader)
    assert next(replies, None) is None, "replies left over: the probe stopped early"
    return step["done"]


OPERATIONS: Dict[str, Callable[[Any, Dict[str, Any]], Any]] = {
    "agent_verdict": lambda n, i: n.agent_verdict(i["answer"], i["contains"], number(i["latency_ms"])),
    "append_text_item": append_text_item,
    "build_record": lambda n, i: n.build_record(i["exchange"], i["facts"], i.get("ctx"), i.get("record_id")),
    "canonical_json": lambda n, i: n.canonical_json(as_bytes(i["json"])),
    "classify": classify,
    "conformance": conformance,
    "compare": lambda n, i: n.compare([(c["target"], n.summarize(c["counts"])) for c in i["candidates"]]),
    "expand_path": lambda n, i: n.expand_path(as_str(i["path"]), i["env"], i.get("home")),
    "host_from_url": lambda n, i: n.host_from_url(as_str(i["url"])),
    "host_policy": lambda n, i: policy(n, i).to_dict(),
    "latency_bucket": lambda n, i: n.latency_bucket(number(i["latency_ms"])),
    "host_verdict": lambda n, i: n.host_verdict(as_str(i["host"]), policy(n, i)),
    "is_blocked_ip": lambda n, i: n.is_blocked_ip(ipaddress.ip_address(i["ip"])),
    "is_private_name": lambda n, i: n.is_private_name(as_str(i["host"])),
    "logdiff": logdiff,
    "message": lambda n, i: n.message(as_str(i["target"]), n.summarize(i["counts"])),
    "outcome_class": lambda n, i: n.outcome_class(i["request_kind"], i["outcome"], i.get("error_layer")),
    "prepare_observation": lambda n, i: n.prepare_observation(
        as_str(i["url"]), as_str(i["method"]), i.get("status"), number(i["latency_ms"]),
        i.get("response_bytes"), i["source"], policy(n, i)),
    "redact": lambda n, i: n.redact(as_str(i["text"])),
    "salt_epochs": lambda n, i: {"epoch": n.salt_epoch(i["now_ms"]), "accepted": n.accepted_epochs(i["now_ms"])},
    "spool": spool,
    "telemetry_budget": telemetry_budget,
    "sample_decide": lambda n, i: n.decide(i["service_id"], i["agent_id"], i["salt_id"], i["salt"], number(i["sampling_rate"])),
    "sample_verify": lambda n, i: n.verify(i["service_id"], i["agent_id"], i["salt_id"], i["salt"],
                                           number(i["sampling_rate"]), i["claimed_roll"], i["claimed_sampled"]),
    "sanitize_server_version": lambda n, i: n.sanitize_server_version(as_str(i["raw"])),
    "schema_hash": lambda n, i: (
        n.hash_tools(as_bytes(i["tools_json"]))
        if "tools_json" in i
        else n.hash_tools_result(as_bytes(i["result_json"]))
    ),
    "status_class": lambda n, i: n.status_class(i.get("status")),
    "summarize": lambda n, i: n.summarize(i["counts"]),
    "summarize_telemetry": summarize_telemetry,
    "target_label": lambda n, i: n.target_label([as_str(a) for a in i["argv"]], i.get("facts")),
    "validate_node_id": lambda n, i: n.validate_node_id(as_str(i["node_id"])),
    "validate_observations": lambda n, i: n.validate_observations(i["body"]),
    "validate_records": lambda n, i: n.validate_records(i["body"]),
    "weight": lambda n, i: n.weight(i["valid_agent_key"], i["known_host"]),
}


# Operations the Python binding does not export: `operation` → (the name it would have, why
# no host needs it). Their vectors run in Rust; once one is exported the test below fails
# until its entry moves into OPERATIONS.
NOT_EXPOSED: Dict[str, Any] = {
    "salt_days": ("salt_state", "the gateway checks salt days; clients follow valid_until"),
    "decision_check": ("check_decision", "the gateway checks decisions"),
    "audit": ("audit", "the server audits services"),
    "probe_health": ("probe_health", "the server computes probe health"),
    "live_score": ("live_score", "the server computes the live score"),
    "receipt": ("parse_statement", "the server verifies receipts"),
    "reputation": ("reputation", "the server computes agent reputation"),
    "benchmark_displace": ("displace", "the server keeps the displayed benchmark score"),
    "provider_order": ("provider_rank", "the server orders providers for critical directives"),
    "benchmark_submission": ("check_submission", "the server checks submissions"),
    "benchmark_directive": ("check_directive", "the server checks directives"),
}


def same(got: Any, want: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), but booleans are not numbers."""
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return got == want
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
    return type(got) is type(want) and got == want


def _params() -> List[Any]:
    xfail = json.loads((VECTORS / "xfail.json").read_text()).get("python", {})
    params: List[Any] = []
    for path in sorted(VECTORS.glob("*.json")):
        if path.name == "xfail.json":
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        known = xfail.get(path.name, {})
        known = dict.fromkeys(known, "listed in xfail.json") if isinstance(known, list) else known
        names = {c["name"] for c in doc["cases"]}
        for name in known:
            params.append(pytest.param(path.name, doc["operation"], {"name": name, "stale_xfail": name not in names},
                                       id=f"{path.name}::xfail entry {name}"))
        for case in doc["cases"]:
            marks = [pytest.mark.xfail(strict=True, reason=known[case["name"]])] if case["name"] in known else []
            params.append(pytest.param(path.name, doc["operation"], case, marks=marks, id=f"{path.name}::{case['name']}"))
    return params


@pytest.mark.parametrize(("file", "operation", "case"), _params())
def test_vector(file: str, operation: str, case: Dict[str, Any]) -> None:
    if operation in NOT_EXPOSED and operation not in OPERATIONS:
        name, _why = NOT_EXPOSED[operation]
        assert not hasattr(_native, name), f"{name} is exported: move {operation!r} into OPERATIONS"
        return
    assert operation in OPERATIONS, f"{file}: operation {operation!r} has no entry in OPERATIONS"
    if "stale_xfail" in case:
        assert not case["stale_xfail"], f"xfail.json names no case {case['name']!r} in {file}"
        return
    run = OPERATIONS[operation]
    inputs = expand(case["input"])
    if "error" in case:
        with pytest.raises(_native.LowdownError) as caught:
            got = run(_native, inputs)
            pytest.fail(f"wanted error {case['error']}, got {json.dumps(got)[:300]}")
        assert caught.value.type == case["error"], f"wanted {case['error']}, got {caught.value.type}: {caught.value}"
        assert caught.value.kind == caught.value.type
        if "error_path" in case:
            assert caught.value.details["path"] == case["error_path"], str(caught.value)
    else:
        got = run(_native, inputs)
        assert same(got, case["expected"]), f"got {json.dumps(got)[:2000]}"


def test_there_are_vectors() -> None:
    assert len(_params()) > 0
