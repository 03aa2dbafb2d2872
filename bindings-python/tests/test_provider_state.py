"""The hook's fast read of ``provider_state.json`` (``state.peek``): it must see the pacing
times in any JSON layout, or every idle Stop event would start a worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prowl import prowl_provider_hook as hook
from prowl.provider import state

TIMES = {"last_poll_at": 1764600000123, "last_claim_at": 1764590000456}


@pytest.mark.parametrize("dump", [
    lambda v: json.dumps(v),                                  # compact: `123}` ends the file
    lambda v: json.dumps(v, indent=1, sort_keys=True),        # as the worker writes it
    lambda v: json.dumps(v, separators=(",", ":")),           # no spaces at all
    lambda v: json.dumps({"note": "x", **v, "more": [1, 2]}),  # among other keys
])
def test_peek_reads_both_times_in_any_layout(tmp_path: Path, dump) -> None:
    path = tmp_path / "provider_state.json"
    path.write_text(dump(TIMES))
    assert state.peek(str(path)) == TIMES
    assert {k: hook.read_state(str(path))[k] for k in TIMES} == TIMES


def test_write_then_peek_round_trips(tmp_path: Path) -> None:
    path = str(tmp_path / "prowl" / "provider_state.json")
    hook.write_state({**TIMES, "last_error": "none"}, path)
    assert state.peek(path) == TIMES


@pytest.mark.parametrize("text", ['{"last_poll_at": 12.5}', '{"last_poll_at": "123"}',
                                  '{"last_poll_at": -5}', '{"last_poll_at": 12a}', "not json", ""])
def test_anything_else_reads_as_absent_so_the_worker_decides(tmp_path: Path, text: str) -> None:
    path = tmp_path / "provider_state.json"
    path.write_text(text)
    assert "last_poll_at" not in state.peek(str(path))


def test_a_recent_poll_is_not_due(tmp_path: Path) -> None:
    path = tmp_path / "provider_state.json"
    path.write_text(json.dumps({"last_poll_at": 1_000_000}))
    assert not state.due(state.peek(str(path)), live=False, env={}, now_s=1_000.5)
    assert state.due(state.peek(str(path)), live=False, env={}, now_s=1_061)


@pytest.mark.parametrize("answer", [b"[]", b"", b"null", b"not json"])
def test_a_2xx_answer_that_is_no_json_object_is_recorded_as_an_api_error(tmp_path: Path, answer: bytes) -> None:
    # mypy found it: `Api.directives()` returned whatever the body held, so a 200 with a list,
    # no body or non-JSON crashed the worker (AttributeError) before it wrote its state.
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from prowl.provider import worker

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {"XDG_CONFIG_HOME": str(tmp_path), "PROWL_PROVIDER_MODE": "1", "PROWL_AGENT_KEY": "ak_test",
               "PROWL_API_URL": f"http://127.0.0.1:{server.server_address[1]}", "PROWL_TELEMETRY": "0"}
        st = worker.run_once(env)
    finally:
        server.shutdown()
        server.server_close()
    assert st["last_error"] == "GET /v1/provider/directives: 200 answer is not a JSON object"
    assert hook.read_state(state.state_path(env))["last_error"] == st["last_error"]


EVENT = b'{"session_id": "7c1d4b2e-3f8a-4c55-9e0d-2b6f1a9c8e47", "hook_event_name": "Stop", "stop_hook_active": false}'


@pytest.mark.parametrize("event,same", [
    (EVENT, True),
    (b'{"hook_event_name":"Stop","session_id":"7c1d4b2e-3f8a-4c55-9e0d-2b6f1a9c8e47"}', True),
    (b'{"session_id": "other"}', False),
    (b'{"session_id": "a\\"b"}', False),
])
def test_a_session_is_known_by_a_hash_of_its_id(event: bytes, same: bool) -> None:
    key = state.session_key(event)
    assert key is not None and hook.valid_session_key(key)
    assert (key == state.session_key(EVENT)) is same
    assert b"7c1d4b2e" not in key.encode()


@pytest.mark.parametrize("event", [b"", b"not json", b'{"session_id": 5}', b'{"session_id": ""}',
                                   b'{"session_id": "unterminated', b'{"hook_event_name": "Stop"}'])
def test_an_event_without_a_session_has_no_key(event: bytes) -> None:
    assert state.session_key(event) is None


def test_the_claim_gap_is_per_session_under_a_machine_ceiling(tmp_path: Path) -> None:
    env = {"PROWL_PROVIDER_POLL_SECONDS": "0"}
    a, b = state.session_key(b'{"session_id": "a"}'), state.session_key(b'{"session_id": "b"}')
    st: dict = {}
    hook.note_claim(st, 1_000_000, a, env)
    path = tmp_path / "provider_state.json"
    hook.write_state(st, str(path))
    seen = state.peek(str(path), session=a)
    assert seen == {"last_claim_at": 1_000_000, f"claim_at:{a}": 1_000_000}
    # Five minutes on: the machine's ceiling holds every session back.
    assert not state.due(state.peek(str(path), session=b), live=True, env=env, now_s=1_300, session=b)
    # Eleven minutes on: another session may claim; the one that claimed waits its hour.
    assert state.due(state.peek(str(path), session=b), live=True, env=env, now_s=1_660, session=b)
    assert not state.due(seen, live=True, env=env, now_s=1_660, session=a)
    assert state.due(seen, live=True, env=env, now_s=4_601, session=a)
    # Without a session (the daemon), the hour applies to the machine.
    assert not state.due(seen, live=True, env=env, now_s=1_660)
    # A session whose claim no longer holds anything back is forgotten at the next claim.
    hook.note_claim(st, 5_000_000, b, env)
    assert st == {"last_claim_at": 5_000_000, f"claim_at:{b}": 5_000_000}
