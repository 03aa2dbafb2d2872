"""The golden vectors (tests/vectors/*.json) of every operation the pyo3 build
(``prowl._native``) exposes, run against it; Rust runs all of them.

One test per case (id ``<file>::<case name>``). A case listed under ``python`` in xfail.json is
marked ``xfail(strict=True)``, so it is reported and fails the run once it passes; a vector file
whose ``operation`` is in neither :data:`OPERATIONS` nor :data:`NOT_EXPOSED` (with a reason)
fails, so a new operation cannot be skipped silently, and an operation in NOT_EXPOSED must
really be absent from the module (one test per file says so, naming the reason).
The expansion of ``$repeat``/``$concat``/``$seq``/``$bytes_hex``/``$bytes`` mirrors
core/tests/common/mod.rs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

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


def number(v: Any) -> float:
    """Vector numbers may be written as the strings NaN, Infinity and -Infinity."""
    return float(v) if isinstance(v, str) else v


def gateway_router(n: Any, i: Dict[str, Any]) -> Any:
    """Scripted steps against one Router, one result each."""
    st = i["settings"]
    r = n.Router(st.get("agent_key"), st.get("gateway_url"), st.get("services"))
    text = lambda v: v if isinstance(v, str) else json.dumps(v)  # noqa: E731
    out: List[Any] = []
    for s in i["steps"]:
        [(op, a)] = s.items()
        if op == "wants_fetch":
            out.append(r.wants_fetch(a))
        elif op == "loaded":
            out.append(r.loaded(a[0], text(a[1]), text(a[2])))
        elif op == "fetch_failed":
            out.append(r.fetch_failed(a))
        elif op == "select":
            out.append(r.select(a))
        elif op == "route":
            got = r.route(*a)
            out.append(None if got is None else {**got, "headers": [list(h) for h in got["headers"]]})
        elif op == "refused":
            out.append(r.refused(*a))
        elif op == "status":
            out.append(r.status(a))
        else:
            raise ValueError(op)
    return out


def telemetry_budget(n: Any, i: Dict[str, Any]) -> Any:
    """Scripted steps against one TelemetryBudget; the results of ``take`` and ``wait``."""
    b = n.TelemetryBudget(i["with_agent_key"])
    out: List[Any] = []
    for s in i["steps"]:
        if "take" in s:
            out.append(b.take(s["take"][0], s["take"][1]))
        elif "refused" in s:
            b.refused(s["refused"][0], number(s["refused"][1]))
        elif "answered" in s:
            delivered, throttled, failed = b.answered(*s["answered"])
            out.append({"delivered": delivered, "throttled": throttled, "failed": failed})
        elif "wait" in s:
            out.append(b.wait_ms(s["wait"]))
    return out


def plan(make: Callable[[Any, Dict[str, Any]], Any]) -> Callable[[Any, Dict[str, Any]], Any]:
    """spool_claim, spool_write, node_identity_load: one plan, started, then fed what the host
    saw (a listing, a read's text, an IO result, a delivery's finish); the step after each."""

    def run(n: Any, i: Dict[str, Any]) -> Any:
        p = make(n, i["plan"])
        out = [p.start()]
        for f in i["feed"]:
            if "listing" in f:
                out.append(p.listed([(name, mtime) for name, mtime in f["listing"]]))
            elif "finish" in f:
                out.append(p.finish(f["finish"]))
            else:
                out.append(p.feed(f.get("result", "ok"), f.get("text")))
        return out

    return run


def delivery(n: Any, i: Dict[str, Any]) -> Any:
    """What an ingest answer means for a batch, as the core's serde output shapes it."""
    delivered, duplicates, rejected, keep, limited, pause_ms, reason = n.delivery(i["len"], i.get("status"), i.get("retry_after"), i.get("body"))
    return {"delivered": delivered, "duplicates": duplicates, "rejected": rejected, "keep": keep, "limited": limited, "pause_ms": pause_ms, "reason": reason}


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


#: ``operation`` → ``(native module, expanded input) -> result``: every operation the module
#: exposes, which are those the ``prowl`` package calls.
OPERATIONS: Dict[str, Callable[[Any, Dict[str, Any]], Any]] = {
    "agent_verdict": lambda n, i: n.agent_verdict(i["answer"], i["contains"], number(i["latency_ms"])),
    "benchmark_directive": lambda n, i: n.check_directive(i["body"]),
    "conformance": conformance,
    "delivery": delivery,
    "destination": lambda n, i: n.destination(i["settings"], i["stored"], i["announcement"]),
    "node_identity_load": plan(lambda n, p: n.NodeIdentityLoad(p["random_hex"], p["now_iso"], p["pid"], p["token"])),
    "prepare_observation": lambda n, i: n.prepare_observation(
        as_str(i["url"]), as_str(i["method"]), i.get("status"), number(i["latency_ms"]),
        i.get("response_bytes"), i["source"], n.HostPolicy(i.get("allowlist"), i.get("allow_private"))),
    "settings": lambda n, i: n.settings_from_env(i["env"], i["user_home"], i["client"]),
    "spool_claim": plan(lambda n, p: n.SpoolClaim(p["pid"], p["now_ms"])),
    "spool_write": plan(lambda n, p: n.SpoolWrite(p["records"], p["seq"], p["pid"], p["now_ms"], p["now_iso"], p["token"])),
    "gateway_router": gateway_router,
    "gateway_vendor_location": lambda n, i: n.Router("ak", i["gateway_url"]).vendor_location(i["vendor"], i["slug"], i["location"]),
    "telemetry_budget": telemetry_budget,
    "validate_node_id": lambda n, i: n.validate_node_id(as_str(i["node_id"])),
    "validate_records": lambda n, i: n.validate_records(i["body"]),
}


#: Operations the module does not expose: ``operation`` → (the name it would have, why prowl
#: does not need it). A dotted name is a method of an exposed class. Their vectors run in
#: Rust (and in JavaScript where its hosts use them); the test checks the name really is
#: absent, so an operation cannot be exposed without its vectors running here.
NOT_EXPOSED: Dict[str, Tuple[str, str]] = {
    "spool": ("spool_entry", "SpoolClaim and SpoolWrite apply the spool format themselves"),
    "stored_settings": ("stored_get", "lowdown-proxy config writes config.json; prowl reads it through destination"),
    "node_identity": ("parse_node_identity", "NodeIdentityLoad reads and writes node.json itself"),
    "append_text_item": ("append_text_item", "the proxy answers with log lines; prowl relays no MCP session"),
    "build_record": ("build_record", "prowl records no MCP sessions; the proxy's Recorder does"),
    "canonical_json": ("canonical_json", "the hash rules run inside the core: Recorder, Scanner"),
    "classify": ("Classifier", "prowl records no MCP sessions; the proxy's Recorder does"),
    "compare": ("compare", "the server ranks"),
    "expand_path": ("expand_path", "--watch-log is the proxy's"),
    "host_from_url": ("host_from_url", "prepare_observation keeps only the host itself"),
    "host_policy": ("HostPolicy.to_dict", "HostPolicy is opaque to prowl; prepare_observation's vectors apply it"),
    "host_verdict": ("host_verdict", "prepare_observation applies the verdict itself"),
    "is_blocked_ip": ("is_blocked_ip", "prepare_observation applies the host rules itself"),
    "is_private_name": ("is_private_name", "prepare_observation applies the host rules itself"),
    "latency_bucket": ("latency_bucket", "the server keeps latency histograms"),
    "logdiff": ("LogDiff", "--watch-log is the proxy's"),
    "message": ("message", "the server writes answers"),
    "outcome_class": ("outcome_class", "the server counts"),
    "redact": ("redact", "LogDiff redacts what it quotes; prowl quotes nothing"),
    "salt_epochs": ("salt_epoch", "the server rotates salts"),
    "sample_verify": ("verify", "the server verifies"),
    "sanitize_server_version": ("sanitize_server_version", "Recorder sanitises what it records"),
    "schema_hash": ("hash_tools", "Recorder hashes tools/list itself; prowl sees no tools/list"),
    "status_class": ("status_class", "the server counts"),
    "summarize": ("summarize", "the server writes answers"),
    "summarize_telemetry": ("TelemetryRollup", "the server writes answers"),
    "target_label": ("target_label", "the proxy and wrap label the servers they launch"),
    "validate_observations": ("validate_observations", "prepare_observation builds only valid observations; the server validates"),
    "weight": ("weight", "the server weighs"),
    "key_weight": ("key_tier", "the server weighs"),
    # The sampling gateway's rules run in the server; clients route with Router, which applies
    # the decision, the allow rules, the header allowlist and PROWL_GATEWAY_SERVICES itself.
    "sample_decide": ("decide", "Router decides"),
    "gateway_route": ("GatewayRules", "Router applies the allow rules"),
    "gateway_request_headers": ("GatewayRules", "Router says which request headers go to the gateway"),
    "gateway_service_selected": ("gateway_service_selected", "Router applies PROWL_GATEWAY_SERVICES"),
    "salt_days": ("salt_state", "the gateway checks salt days; clients follow valid_until"),
    "decision_check": ("check_decision", "the gateway checks decisions"),
    "gateway_forward_headers": ("forward_request_header", "the gateway filters what crosses it; prowl sends what Router.route keeps"),
    "audit": ("audit", "the server audits services"),
    "probe_health": ("probe_health", "the server computes probe health"),
    "live_score": ("live_score", "the server computes the live score"),
    "receipt": ("parse_statement", "the server verifies receipts"),
    "reputation": ("reputation", "the server computes agent reputation"),
    "benchmark_displace": ("displace", "the server keeps the displayed benchmark score"),
    "provider_order": ("provider_rank", "the server orders providers for critical directives"),
    "benchmark_submission": ("check_submission", "the server checks submissions"),
    "benchmark_verify": ("verify_submission", "the server checks protocol submissions against its own probe"),
    "benchmark_agreement": ("settle_agreement", "the server settles agent results across networks"),
    "provider_exclusion": ("excluded_until", "the server excludes providers that keep disagreeing"),
}


def exported(dotted: str) -> bool:
    """Whether the module has ``dotted`` (``name`` or ``Class.method``)."""
    obj: Any = _native
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


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


def _files() -> List[Tuple[str, Dict[str, Any]]]:
    return [(p.name, json.loads(p.read_text(encoding="utf-8")))
            for p in sorted(VECTORS.glob("*.json")) if p.name != "xfail.json"]


def _params() -> List[Any]:
    """One param per case of every file whose operation is not in NOT_EXPOSED."""
    xfail = json.loads((VECTORS / "xfail.json").read_text()).get("python", {})
    params: List[Any] = []
    for file, doc in _files():
        if doc["operation"] in NOT_EXPOSED and doc["operation"] not in OPERATIONS:
            continue
        known = xfail.get(file, {})
        known = dict.fromkeys(known, "listed in xfail.json") if isinstance(known, list) else known
        names = {c["name"] for c in doc["cases"]}
        for name in known:
            params.append(pytest.param(file, doc["operation"], {"name": name, "stale_xfail": name not in names},
                                       id=f"{file}::xfail entry {name}"))
        for case in doc["cases"]:
            marks = [pytest.mark.xfail(strict=True, reason=known[case["name"]])] if case["name"] in known else []
            params.append(pytest.param(file, doc["operation"], case, marks=marks, id=f"{file}::{case['name']}"))
    return params


def _not_exposed() -> List[Any]:
    """One param per file whose operation is in NOT_EXPOSED, named with the reason."""
    return [pytest.param(file, doc["operation"],
                         id=f"{file}::not exposed ({NOT_EXPOSED[doc['operation']][1]}): {len(doc['cases'])} cases run in Rust")
            for file, doc in _files() if doc["operation"] in NOT_EXPOSED and doc["operation"] not in OPERATIONS]


@pytest.mark.parametrize(("file", "operation", "case"), _params())
def test_vector(file: str, operation: str, case: Dict[str, Any]) -> None:
    assert operation in OPERATIONS, f"{file}: operation {operation!r} is in neither OPERATIONS nor NOT_EXPOSED"
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
            details = caught.value.details
            assert details.get("path", details.get("field")) == case["error_path"], str(caught.value)
    else:
        got = run(_native, inputs)
        assert same(got, case["expected"]), f"got {json.dumps(got)[:2000]}"


@pytest.mark.parametrize(("file", "operation"), _not_exposed())
def test_not_exposed(file: str, operation: str) -> None:
    name, _why = NOT_EXPOSED[operation]
    assert not exported(name), f"{name} is exported: move {operation!r} into OPERATIONS so its vectors run"
    stale = json.loads((VECTORS / "xfail.json").read_text()).get("python", {}).get(file)
    assert not stale, f"xfail.json lists cases of {file}, whose operation Python does not run"


def test_the_tables_name_each_operation_once_and_only_real_ones() -> None:
    operations = {doc["operation"] for _, doc in _files()}
    assert set(OPERATIONS) & set(NOT_EXPOSED) == set(), "an operation is both exposed and not"
    assert set(OPERATIONS) - operations == set(), "OPERATIONS names an operation with no vector file"
    assert set(NOT_EXPOSED) - operations == set(), "NOT_EXPOSED names an operation with no vector file"


def test_there_are_vectors() -> None:
    assert len(_params()) > 0 and len(_not_exposed()) > 0
