"""prowl.observe on a real httpx.Client and httpx2.Client (the ``lib`` fixture runs each test
with both) against a real local server."""

from __future__ import annotations


from types import ModuleType

import pytest

import prowl
from servers import Collector, Upstream, dead_url


def _one(collector: Collector) -> dict:
    assert prowl.flush(2.0)
    obs = collector.observations()
    assert len(obs) == 1, obs
    return obs[0]


def test_get_reports_host_method_status_latency_and_bytes(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client())
    resp = client.get(f"{upstream.url}/bytes?n=1234")
    assert resp.status_code == 200 and len(resp.content) == 1234
    obs = _one(telemetry)
    assert obs["host"] == "127.0.0.1"
    assert obs["method"] == "GET"
    assert obs["status"] == 200
    assert obs["response_bytes"] == 1234
    assert 0 < obs["latency_ms"] < 5000
    assert obs["source"] == "organic"


def test_latency_runs_to_the_end_of_a_streamed_body(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client())
    with client.stream("GET", f"{upstream.url}/stream?chunks=4&delay=0.1&size=500") as resp:
        got = sum(len(c) for c in resp.iter_bytes())
        # still streaming until close: nothing may have been queued before the body ended
    assert got == 2000
    obs = _one(telemetry)
    assert obs["status"] == 200 and obs["response_bytes"] == 2000
    assert obs["latency_ms"] >= 350, obs  # four chunks 100 ms apart


def test_a_streamed_body_never_read_is_reported_on_close(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client())
    with client.stream("GET", f"{upstream.url}/stream?chunks=2&delay=0.05") as resp:
        assert resp.status_code == 200
        assert prowl.stats()["queued"] == 0  # open body: not reported yet
    obs = _one(telemetry)
    assert obs["status"] == 200


def test_redirects_report_each_hop_with_its_own_host(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client(follow_redirects=True))
    target = f"http://localhost:{upstream.port}/ok"
    resp = client.get(f"{upstream.url}/redirect?to={target}")
    assert resp.status_code == 200 and resp.text == "hello from upstream"
    assert prowl.flush(2.0)
    obs = telemetry.observations()
    assert [(o["host"], o["status"]) for o in obs] == [("127.0.0.1", 302), ("localhost", 200)]


def test_connect_error_is_reported_with_null_status_and_reraised_unchanged(lib: ModuleType, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client())
    plain = lib.Client()
    url = dead_url()
    with pytest.raises(lib.ConnectError) as observed:
        client.get(url + "/x")
    with pytest.raises(lib.ConnectError) as unobserved:
        plain.get(url + "/x")
    assert type(observed.value) is type(unobserved.value)
    assert str(observed.value) == str(unobserved.value)
    obs = _one(telemetry)
    assert obs["status"] is None and obs["host"] == "127.0.0.1"


def test_timeout_is_reported_with_null_status_and_reraised(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client(timeout=0.1))
    with pytest.raises(lib.ReadTimeout):
        client.get(f"{upstream.url}/slow?delay=0.5")
    obs = _one(telemetry)
    assert obs["status"] is None
    assert obs["latency_ms"] >= 90


def test_error_statuses_are_reported_as_they_came(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = prowl.observe(lib.Client())
    for code in (404, 429, 503):
        assert client.get(f"{upstream.url}/status/{code}").status_code == code
    assert prowl.flush(2.0)
    assert [o["status"] for o in telemetry.observations()] == [404, 429, 503]


def test_observe_is_idempotent_and_unobserve_stops_reports(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = lib.Client()
    assert prowl.observe(client) is client
    prowl.observe(client)
    client.get(upstream.url)
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 1  # wrapped once, reported once
    prowl.unobserve(client)
    assert not prowl.is_observed(client)
    client.get(upstream.url)
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 1


def test_mounted_transports_and_proxies_are_observed(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    # The upstream answers absolute-form requests, so it can play an HTTP proxy.
    client = prowl.observe(lib.Client(proxy=upstream.url))
    mounted = prowl.observe(lib.Client(mounts={"http://api.example.org": lib.HTTPTransport(proxy=upstream.url)}))
    assert client.get("http://service.example.com/v1/things").text == "via-proxy:service.example.com"
    assert mounted.get("http://api.example.org/v2/items").text == "via-proxy:api.example.org"
    assert prowl.flush(2.0)
    assert sorted(o["host"] for o in telemetry.observations()) == ["api.example.org", "service.example.com"]
    prowl.unobserve(mounted)
    mounted.get("http://api.example.org/v2/items")
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 2


def test_observe_without_argument_instruments_clients_created_afterwards(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    before = lib.Client()
    prowl.observe()
    after = lib.Client()
    assert prowl.is_observed(after) and not prowl.is_observed(before)
    after.get(upstream.url)
    before.get(upstream.url)
    prowl.unobserve()
    later = lib.Client()
    assert not prowl.is_observed(later)
    later.get(upstream.url)
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 1


def test_observe_rejects_what_is_not_an_httpx_client(lib: ModuleType) -> None:
    with pytest.raises(TypeError, match=r"httpx\.Client or httpx\.AsyncClient \(or their httpx2 twins\)"):
        prowl.observe(object())  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="got Request"):
        prowl.observe(lib.Request("GET", "https://api.example.com/"))  # type: ignore[call-overload]


def test_one_library_observed_leaves_the_other_alone(upstream: Upstream, telemetry: Collector) -> None:
    import httpx
    import httpx2

    one, two = prowl.observe(httpx.Client()), httpx2.Client()
    assert prowl.is_observed(one) and not prowl.is_observed(two)
    two.get(upstream.url)
    one.get(upstream.url)
    prowl.observe(two)
    two.get(f"{upstream.url}/status/404")
    assert prowl.flush(2.0)
    assert [o["status"] for o in telemetry.observations()] == [200, 404]


def test_telemetry_off_wraps_nothing(lib: ModuleType, upstream: Upstream, telemetry: Collector, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROWL_TELEMETRY", "0")
    prowl.configure()
    client = prowl.observe(lib.Client())
    assert not prowl.is_observed(client)
    client.get(upstream.url)
    assert prowl.flush(2.0)
    assert telemetry.observations() == []


def test_a_body_already_in_memory_is_reported_at_once(lib: ModuleType, telemetry: Collector) -> None:
    network = lib.MockTransport(lambda request: lib.Response(418, content=b"teapot!"))
    client = prowl.observe(lib.Client(transport=network))
    assert client.get("https://api.example.com/brew").status_code == 418
    obs = _one(telemetry)
    assert (obs["host"], obs["status"], obs["response_bytes"]) == ("api.example.com", 418, 7)
