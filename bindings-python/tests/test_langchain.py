"""ProwlCallbackHandler with real langchain-core tools and fake chat models."""

from __future__ import annotations

import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, List

import pytest
from pydantic import ValidationError
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException, tool

import prowl
from prowl.langchain import ProwlCallbackHandler
from servers import Collector

ARG_CANARY = "CANARYARG4242"
OUT_CANARY = "CANARYOUT5353"
ERR_CANARY = "CANARYERR6464"


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    time.sleep(0.02)
    return f"sunny in {city} {OUT_CANARY}"


@tool
def broken_tool(city: str) -> str:
    """Always raises."""
    raise ValueError(f"database password is {ERR_CANARY}")


@tool
def slow_tool(city: str) -> str:
    """Times out."""
    raise TimeoutError(ERR_CANARY)


@tool
def soft_fail(city: str) -> str:
    """Fails with a ToolException the tool itself handles."""
    raise ToolException(f"upstream said {ERR_CANARY}")


soft_fail.handle_tool_error = True


@tool
def returns_error_message(city: str) -> ToolMessage:
    """Returns an error-status ToolMessage itself."""
    return ToolMessage(content=f"no such city {ERR_CANARY}", tool_call_id="call_x", status="error")


def _records(collector: Collector) -> List[dict]:
    assert prowl.flush(2.0)
    return collector.interactions()


def _pyproject_version() -> str:
    text = (Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)  # type: ignore[union-attr]


def _call(name: str, args: dict, call_id: str = "call_1") -> dict:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def test_tool_success_is_one_record_with_target_task_outcome_latency(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    assert get_weather.invoke({"city": ARG_CANARY}, config={"callbacks": [handler]}).startswith("sunny")
    [rec] = _records(telemetry)
    assert rec["target"] == "get_weather" and rec["task_type"] == "get_weather"
    assert rec["target_type"] == "tool" and rec["request_kind"] == "tool"
    assert rec["outcome"] == "success" and rec["failure_type"] is None
    assert rec["latency_ms"] >= 20
    assert rec["actor"] == "anonymous" and rec["source"] == "organic"
    assert rec["record_id"].startswith("lc_")
    assert rec["recorder_version"] == f"prowl/{_pyproject_version()}", "who made it: <recorder>/<version>"


def test_tool_errors_are_failures_and_the_exception_is_unchanged(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    with pytest.raises(ValueError, match=ERR_CANARY):
        broken_tool.invoke({"city": "x"}, config={"callbacks": [handler]})
    with pytest.raises(TimeoutError):
        slow_tool.invoke({"city": "x"}, config={"callbacks": [handler]})
    with pytest.raises(ValidationError):  # a missing argument
        get_weather.invoke({}, config={"callbacks": [handler]})
    recs = _records(telemetry)
    assert [(r["target"], r["outcome"], r["failure_type"], r["error_layer"]) for r in recs] == [
        ("broken_tool", "failure", "tool_error", "tool"),
        ("slow_tool", "failure", "timeout", "server"),
        ("get_weather", "failure", "invalid_arguments", "request"),
    ]


def test_error_status_tool_messages_are_failures(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    msg = soft_fail.invoke(_call("soft_fail", {"city": "x"}), config={"callbacks": [handler]})
    assert isinstance(msg, ToolMessage) and msg.status == "error"
    msg2 = returns_error_message.invoke(_call("returns_error_message", {"city": "x"}), config={"callbacks": [handler]})
    assert msg2.status == "error"
    ok = get_weather.invoke(_call("get_weather", {"city": "x"}), config={"callbacks": [handler]})
    assert ok.status == "success"
    recs = _records(telemetry)
    assert [(r["target"], r["outcome"], r["failure_type"]) for r in recs] == [
        ("soft_fail", "failure", "tool_error"),
        ("returns_error_message", "failure", "tool_error"),
        ("get_weather", "success", None),
    ]


def test_chat_model_runs_are_reported_by_model_name(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    assert FakeListChatModel(responses=[f"hello {OUT_CANARY}"]).invoke(ARG_CANARY, config={"callbacks": [handler]}).content
    generic = GenericFakeChatModel(messages=iter([AIMessage(content="hi")]))
    generic.invoke("q", config={"callbacks": [handler]})
    recs = _records(telemetry)
    assert [(r["target"], r["target_type"], r["task_type"], r["outcome"]) for r in recs] == [
        ("FakeListChatModel", "service", "chat", "success"),
        ("GenericFakeChatModel", "service", "chat", "success"),
    ]


class _TimingOutModel(FakeListChatModel):
    def _call(self, *args: Any, **kwargs: Any) -> str:
        raise TimeoutError(ERR_CANARY)


def test_chat_model_failures_are_reported(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    with pytest.raises(TimeoutError):
        _TimingOutModel(responses=["x"]).invoke("q", config={"callbacks": [handler]})
    [rec] = _records(telemetry)
    assert (rec["outcome"], rec["failure_type"], rec["error_layer"]) == ("failure", "timeout", "server")


def test_a_model_that_calls_a_tool_reports_both(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler(actor="agent-7", source="synthetic")
    model = GenericFakeChatModel(messages=iter([AIMessage(content="", tool_calls=[_call("get_weather", {"city": ARG_CANARY})])]))
    ai = model.invoke("weather?", config={"callbacks": [handler]})
    for call in ai.tool_calls:
        get_weather.invoke(call, config={"callbacks": [handler]})
    recs = _records(telemetry)
    assert [(r["target"], r["actor"], r["source"]) for r in recs] == [
        ("GenericFakeChatModel", "agent-7", "synthetic"),
        ("get_weather", "agent-7", "synthetic"),
    ]


def test_report_models_false_reports_tools_only(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler(report_models=False)
    FakeListChatModel(responses=["x"]).invoke("q", config={"callbacks": [handler]})
    get_weather.invoke({"city": "x"}, config={"callbacks": [handler]})
    assert [r["target"] for r in _records(telemetry)] == ["get_weather"]


def test_async_runs_in_parallel_are_each_reported_once(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()

    async def main() -> None:
        await asyncio.gather(*(get_weather.ainvoke({"city": str(i)}, config={"callbacks": [handler]}) for i in range(25)))
        with pytest.raises(ValueError):
            await broken_tool.ainvoke({"city": "x"}, config={"callbacks": [handler]})

    asyncio.run(main())
    recs = _records(telemetry)
    assert len(recs) == 26 and len({r["record_id"] for r in recs}) == 26
    assert sorted(r["outcome"] for r in recs).count("failure") == 1
    assert handler._runs == {}  # every run that started ended


def test_threads_share_one_handler_safely(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: get_weather.invoke({"city": str(i)}, config={"callbacks": [handler]}), range(80)))
    recs = _records(telemetry)
    assert len(recs) == 80 and len({r["record_id"] for r in recs}) == 80
    assert prowl.stats()["invalid"] == 0


def test_arguments_results_and_error_text_never_leave(telemetry: Collector) -> None:
    handler = ProwlCallbackHandler()
    get_weather.invoke({"city": ARG_CANARY}, config={"callbacks": [handler]})
    with pytest.raises(ValueError):
        broken_tool.invoke({"city": ARG_CANARY}, config={"callbacks": [handler]})
    soft_fail.invoke(_call("soft_fail", {"city": ARG_CANARY}), config={"callbacks": [handler]})
    FakeListChatModel(responses=[OUT_CANARY]).invoke(ARG_CANARY, config={"callbacks": [handler]})
    assert len(_records(telemetry)) == 4
    raw = telemetry.raw_bytes()
    for canary in (ARG_CANARY, OUT_CANARY, ERR_CANARY):
        assert canary.encode() not in raw


def test_a_record_the_core_refuses_is_counted_and_never_poisons_a_batch(telemetry: Collector) -> None:
    bad = ProwlCallbackHandler(actor="x" * 5000)  # longer than the core allows an actor
    good = ProwlCallbackHandler()
    get_weather.invoke({"city": "a"}, config={"callbacks": [bad]})
    get_weather.invoke({"city": "b"}, config={"callbacks": [good]})
    recs = _records(telemetry)
    assert [r["actor"] for r in recs] == ["anonymous"]
    assert prowl.stats()["invalid"] == 1


def test_bad_source_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="source"):
        ProwlCallbackHandler(source="made-up")
