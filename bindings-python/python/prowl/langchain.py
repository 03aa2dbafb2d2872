"""``ProwlCallbackHandler``: LangChain tool and model runs reported as interactions.

Import this module only when you use LangChain (``pip install 'prowl[langchain]'``); the rest
of ``prowl`` never imports ``langchain_core``.

Each tool run and each LLM/chat-model run becomes one interaction record (SPEC §3.2) sent to
``POST /api/interactions`` by the background sender: target from the tool or model name,
``task_type`` the tool name (``chat`` or ``llm`` for models), the outcome (including tools
that fail through ``on_tool_error`` and through an error-status ``ToolMessage``) and the
latency from run start to end, keyed by ``run_id``, and this machine's ``node_id``
(SPEC §3.5, added by the sender thread from ``LOWDOWN_HOME/node.json``, see
:mod:`prowl.identity`; left out, and counted in ``prowl.stats()["no_node_id"]``, when the home
cannot be written). Inputs, outputs and error text are never
recorded. Each record is validated by the core's record validation before it joins a batch
(on the sender thread; a refused record is counted in ``prowl.stats()["invalid"]`` and never
sent). The handler runs inline (no executor hop in async chains) and only does dictionary
work and a queue append, so it is safe under threads and in async chains.
"""

from __future__ import annotations

import time
from typing import Any, Dict, Literal, Optional, Tuple
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import ToolMessage

from . import config
from ._contract import PROWL_RECORDER, SOURCE_VALUES, InteractionRecord
from ._core import Source
from .sender import SENDER

try:  # pydantic is a dependency of langchain-core; both majors raise these on bad tool input
    from pydantic import ValidationError as _ValidationError
    from pydantic.v1 import ValidationError as _ValidationErrorV1

    _INVALID_ARGS: Tuple[type, ...] = (_ValidationError, _ValidationErrorV1)
except ImportError:  # pragma: no cover - pydantic always ships with langchain-core
    _INVALID_ARGS = ()

_perf = time.perf_counter

#: Runs started but never ended are forgotten past this many, oldest first.
MAX_OPEN_RUNS = 10_000

# The contract's values for these fields (mypy checks them against InteractionRecord).
_TargetType = Literal["tool", "service"]
_Layer = Literal["tool", "request", "server"]
_FailureType = Literal["invalid_arguments", "timeout", "server_error", "tool_error", "unknown"]
_Outcome = Tuple[Literal["success", "failure"], Optional[_FailureType], Optional[_Layer]]
_SUCCESS: _Outcome = ("success", None, None)


def _failure_of(error: BaseException, default_layer: _Layer, default_type: _FailureType) -> _Outcome:
    """Classify an exception without reading its message."""
    if isinstance(error, TimeoutError):
        return ("failure", "timeout", "server")
    if _INVALID_ARGS and isinstance(error, _INVALID_ARGS):
        return ("failure", "invalid_arguments", "request")
    return ("failure", default_type, default_layer)


def _model_name(serialized: Optional[Dict[str, Any]], metadata: Optional[Dict[str, Any]], kwargs: Dict[str, Any]) -> str:
    meta = metadata or {}
    name = meta.get("ls_model_name")
    if not isinstance(name, str) or not name:
        params = kwargs.get("invocation_params") or {}
        name = params.get("model") or params.get("model_name")
    if not isinstance(name, str) or not name:
        ser = serialized or {}
        ids = ser.get("id")
        name = ser.get("name") or (ids[-1] if isinstance(ids, list) and ids else None)
    return name if isinstance(name, str) and name else "unknown-model"


class ProwlCallbackHandler(BaseCallbackHandler):
    """A LangChain callback handler that reports tool and model runs to Lowdown.

    ``actor`` names who acted (default ``anonymous``); ``source`` is ``organic`` (default),
    ``seeded`` or ``synthetic``; ``report_models=False`` reports tool runs only.
    Pass it in ``callbacks=[...]`` of any invoke, or in a chain's config.
    """

    run_inline = True
    raise_error = False

    def __init__(self, *, actor: str = "anonymous", source: Optional[Source] = None, report_models: bool = True) -> None:
        super().__init__()
        if source is not None and source not in SOURCE_VALUES:
            raise ValueError(f"source must be organic, seeded or synthetic, got {source!r}")
        self.actor = actor
        self.source = source
        self.report_models = report_models
        self._runs: Dict[UUID, Tuple[float, str, _TargetType, str]] = {}

    # Chains and retrievers are not reported: LangChain skips their callbacks entirely.
    # (Not `ignore_agent`: LangChain gates the tool callbacks on it.)
    @property
    def ignore_chain(self) -> bool:  # noqa: D102 - LangChain's own hook
        return True

    @property
    def ignore_retriever(self) -> bool:  # noqa: D102
        return True

    @property
    def ignore_custom_event(self) -> bool:  # noqa: D102
        return True

    # -- bookkeeping ------------------------------------------------------------------------

    def _start(self, run_id: UUID, target: str, target_type: _TargetType, task_type: str) -> None:
        runs = self._runs
        if len(runs) >= MAX_OPEN_RUNS:
            try:
                runs.pop(next(iter(runs)))
            except (StopIteration, KeyError, RuntimeError):
                pass
        runs[run_id] = (_perf(), target, target_type, task_type)

    def _end(self, run_id: UUID, outcome: _Outcome) -> None:
        t1 = _perf()
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        try:
            settings = config.current()
            if not settings.enabled:
                return
            t0, target, target_type, task_type = run
            record: InteractionRecord = {
                "record_id": f"lc_{run_id.hex}",
                "actor": self.actor,
                "target": target,
                "target_type": target_type,
                "task_type": task_type,
                "outcome": outcome[0],
                "failure_type": outcome[1],
                "error_layer": outcome[2],
                "request_kind": "tool",
                "latency_ms": round((t1 - t0) * 1000.0, 3),
                "source": self.source or settings.source,
                # Who made it: ``prowl/<version>``, decided by the core (SPEC §3.2).
                "recorder_version": PROWL_RECORDER,
            }
            SENDER.submit_record(record)  # validated by the core on the sender thread
        except Exception:  # never raise into the chain
            pass

    # -- tools ------------------------------------------------------------------------------

    def on_tool_start(self, serialized: Dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any) -> None:
        """Remember when and which tool started (never its input)."""
        name = (serialized or {}).get("name") or kwargs.get("name") or "unknown-tool"
        self._start(run_id, str(name), "tool", str(name))

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Report success, or failure when the tool returned an error-status ``ToolMessage``."""
        if isinstance(output, ToolMessage) and output.status == "error":
            self._end(run_id, ("failure", "tool_error", "tool"))
        else:
            self._end(run_id, _SUCCESS)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Report the failure; its kind comes from the exception's type, never its text."""
        self._end(run_id, _failure_of(error, "tool", "tool_error"))

    # -- models -----------------------------------------------------------------------------

    def on_chat_model_start(
        self, serialized: Dict[str, Any], messages: Any, *, run_id: UUID, metadata: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> None:
        """Remember when and which chat model started (never the messages)."""
        if self.report_models:
            self._start(run_id, _model_name(serialized, metadata, kwargs), "service", "chat")

    def on_llm_start(
        self, serialized: Dict[str, Any], prompts: Any, *, run_id: UUID, metadata: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> None:
        """Remember when and which completion model started (never the prompts)."""
        if self.report_models:
            self._start(run_id, _model_name(serialized, metadata, kwargs), "service", "llm")

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Report a model run that finished."""
        self._end(run_id, _SUCCESS)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Report a model run that failed (server layer unless it was bad input or a timeout)."""
        self._end(run_id, _failure_of(error, "server", "server_error"))
