"""What the pyo3 binding itself promises, beyond the golden vectors: stubs that match the
module (mypy.stubtest: names and signatures), errors a caller can branch on, misuse refused,
and error text that never carries the caller's data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from prowl import _native

CANARY = "CANARY_7f3a9c_SECRET"
STUB = Path(__file__).resolve().parents[1] / "python" / "prowl" / "_native.pyi"


def _stubtest(env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy.stubtest", "prowl._native"], env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_stub_matches_the_module() -> None:
    # mypy.stubtest, as pydantic-core runs it: every name (and __all__) in both, each
    # function's and constructor's parameters (names, kinds, defaults), and final classes.
    done = _stubtest(dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 1 module" in done.stdout


def test_stubtest_refuses_a_stub_whose_signature_drifted(tmp_path: Path) -> None:
    # The check above can fail: the same stub with one parameter renamed, found first on
    # MYPYPATH, is refused by name.
    drifted = STUB.read_text().replace("def validate_node_id(node_id: str)", "def validate_node_id(id: str)")
    assert drifted != STUB.read_text()
    (tmp_path / "prowl").mkdir()
    (tmp_path / "prowl" / "__init__.pyi").write_text("")
    (tmp_path / "prowl" / "_native.pyi").write_text(drifted)
    done = _stubtest({**os.environ, "MYPYPATH": str(tmp_path)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "prowl._native.validate_node_id is inconsistent" in done.stdout


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
