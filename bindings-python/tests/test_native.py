"""What the pyo3 binding itself promises, beyond the golden vectors: stubs that match the
module (names and class members), errors a caller can branch on, misuse refused, and error
text that never carries the caller's data."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Set

import pytest

from prowl import _native

CANARY = "CANARY_7f3a9c_SECRET"
STUB = Path(__file__).resolve().parents[1] / "python" / "prowl" / "_native.pyi"
#: Type aliases the stub declares for its signatures; the module has no such names.
ALIASES = {"Source", "Json"}


def _stub() -> ast.Module:
    return ast.parse(STUB.read_text())


def test_the_stub_names_exactly_what_the_module_exports() -> None:
    tree = _stub()
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    exported = {name for name in dir(_native) if not name.startswith("_")}
    assert exported - declared == set(), "exported but missing from _native.pyi"
    assert declared - exported - ALIASES == set(), "stubbed but not exported"


def test_the_stub_names_exactly_each_classes_methods() -> None:
    stubbed: Dict[str, Set[str]] = {
        c.name: {f.name for f in c.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")}
        for c in _stub().body
        if isinstance(c, ast.ClassDef) and c.name != "LowdownError"
    }
    assert stubbed, "the stub declares classes"
    for name, methods in stubbed.items():
        real = {m for m in dir(getattr(_native, name)) if not m.startswith("_")}
        assert real == methods, f"{name}: the module has {sorted(real)}, the stub {sorted(methods)}"


def test_every_export_has_a_docstring() -> None:
    for name in dir(_native):
        obj = getattr(_native, name)
        if callable(obj) and not name.startswith("_"):
            assert (obj.__doc__ or "").strip(), name


def test_core_errors_carry_type_kind_and_details() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_records([{"target": "npm:x", "target_type": "tool", "task_type": "t", "outcome": "nope"}])
    e = caught.value
    assert isinstance(e, ValueError)
    assert (e.type, e.kind) == ("unknown_value", "unknown_value")
    assert e.details["path"] == "records[0].outcome"
    assert e.details["index"] == 0
    assert str(e).startswith("records[0].outcome:")


def test_one_record_is_validated_as_itself() -> None:
    record = {"target": "npm:x", "target_type": "tool", "task_type": "t", "outcome": "success"}
    [typed] = _native.validate_records(record)
    assert (typed["actor"], typed["source"]) == ("anonymous", "organic")
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_records({**record, "outcome": "nope"})
    assert caught.value.details["path"] == "outcome"


def test_error_text_never_echoes_the_rejected_value() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_records({"target": "npm:x", "target_type": CANARY, "task_type": "t", "outcome": "success"})
    assert CANARY not in str(caught.value) and CANARY not in repr(caught.value.details)
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_node_id(f"ld_{CANARY}/..")
    assert caught.value.type == "invalid_format" and CANARY not in str(caught.value)


def test_a_wrong_shape_or_name_is_refused_with_a_kind() -> None:
    with pytest.raises(_native.LowdownError) as caught:
        _native.prepare_observation("https://api.stripe.com/", "GET", 200, 1.0, None, "made_up", _native.HostPolicy())
    assert caught.value.type == "invalid_argument"
    with pytest.raises(_native.LowdownError) as caught:
        _native.validate_records(object())
    assert caught.value.type == "invalid_argument"


def test_host_policy_and_observations_keep_only_the_host() -> None:
    policy = _native.HostPolicy("stripe.com", None)
    obs = _native.prepare_observation(f"https://api.stripe.com/v1/{CANARY}?k={CANARY}", "get", 200, 12.0, 10, "organic", policy)
    assert obs is not None and obs["host"] == "api.stripe.com" and CANARY not in repr(obs)
    assert _native.prepare_observation("http://localhost/", "GET", 200, 1.0, None, "organic", _native.HostPolicy()) is None
    # Settings returned by prowl.configure() print their policy.
    assert repr(policy) == 'HostPolicy(allowlist=["stripe.com"], allow_private=false)'


def test_constants_are_the_cores() -> None:
    assert _native.API_URL == "http://127.0.0.1:7077"
    assert (_native.API_URL_ENV, _native.PROWL_API_URL_ENV, _native.HOME_ENV) == ("LOWDOWN_API_URL", "PROWL_API_URL", "LOWDOWN_HOME")
    assert _native.AGENT_KEY_HEADER == "x-agent-key"
    assert _native.SPOOL_MAX_RECORDS_PER_FILE > 0 and _native.SPOOL_STALE_CLAIM_MS > 0
