"""prowl.observe on a real httpx.AsyncClient and httpx2.AsyncClient (the ``lib`` fixture runs
each test with both) against a real local server."""

from __future__ import annotations

import asyncio

from types import ModuleType

import pytest

import prowl
from servers import Collector, Upstream, dead_url

pytestmark = pytest.mark.anyio


async def test_async_get_is_reported(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    async with prowl.observe(lib.AsyncClient()) as client:
        resp = await client.get(f"{upstream.url}/bytes?n=321")
    assert resp.status_code == 200
    assert prowl.flush(2.0)
    [obs] = telemetry.observations()
    assert (obs["host"], obs["method"], obs["status"], obs["response_bytes"]) == ("127.0.0.1", "GET", 200, 321)


async def test_async_post_and_concurrent_requests_each_reported(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    async with prowl.observe(lib.AsyncClient()) as client:
        results = await asyncio.gather(*(client.post(f"{upstream.url}/items", json={"n": i}) for i in range(20)))
    assert {r.status_code for r in results} == {201}
    assert prowl.flush(2.0)
    obs = telemetry.observations()
    assert len(obs) == 20
    assert {(o["method"], o["status"]) for o in obs} == {("POST", 201)}


async def test_async_stream_is_timed_to_the_end_of_the_body(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    async with prowl.observe(lib.AsyncClient()) as client:
        async with client.stream("GET", f"{upstream.url}/stream?chunks=3&delay=0.1&size=100") as resp:
            got = b"".join([c async for c in resp.aiter_bytes()])
    assert len(got) == 300
    assert prowl.flush(2.0)
    [obs] = telemetry.observations()
    assert obs["response_bytes"] == 300 and obs["latency_ms"] >= 250


async def test_async_stream_never_read_reported_on_close(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    async with prowl.observe(lib.AsyncClient()) as client:
        async with client.stream("GET", f"{upstream.url}/stream?chunks=2&delay=0.05") as resp:
            assert resp.status_code == 200
        assert prowl.flush(2.0)
    [obs] = telemetry.observations()
    assert obs["status"] == 200


async def test_async_connect_error_and_timeout(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    async with prowl.observe(lib.AsyncClient(timeout=0.1)) as client:
        with pytest.raises(lib.ConnectError):
            await client.get(dead_url())
        with pytest.raises(lib.ReadTimeout):
            await client.get(f"{upstream.url}/slow?delay=0.5")
    assert prowl.flush(2.0)
    assert [o["status"] for o in telemetry.observations()] == [None, None]


async def test_async_redirect_and_proxy_mount(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    async with prowl.observe(lib.AsyncClient(follow_redirects=True, proxy=upstream.url)) as client:
        resp = await client.get("http://service.example.com/a")
    assert resp.text == "via-proxy:service.example.com"
    async with prowl.observe(lib.AsyncClient(follow_redirects=True)) as client:
        resp = await client.get(f"{upstream.url}/redirect?to=http://localhost:{upstream.port}/ok")
    assert resp.status_code == 200
    assert prowl.flush(2.0)
    assert [(o["host"], o["status"]) for o in telemetry.observations()] == [
        ("service.example.com", 200),
        ("127.0.0.1", 302),
        ("localhost", 200),
    ]


async def test_async_observe_idempotent_and_unobserve(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    client = lib.AsyncClient()
    prowl.observe(prowl.observe(client))
    await client.get(upstream.url)
    prowl.unobserve(client)
    await client.get(upstream.url)
    await client.aclose()
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 1


async def test_observe_without_argument_covers_new_async_clients(lib: ModuleType, upstream: Upstream, telemetry: Collector) -> None:
    prowl.observe()
    async with lib.AsyncClient() as client:
        assert prowl.is_observed(client)
        await client.get(upstream.url)
    prowl.unobserve()
    assert prowl.flush(2.0)
    assert len(telemetry.observations()) == 1


async def test_async_body_already_in_memory_is_reported(lib: ModuleType, telemetry: Collector) -> None:
    network = lib.MockTransport(lambda request: lib.Response(204))
    async with prowl.observe(lib.AsyncClient(transport=network)) as client:
        assert (await client.delete("https://api.example.com/items/1")).status_code == 204
    assert prowl.flush(2.0)
    [obs] = telemetry.observations()
    assert (obs["host"], obs["method"], obs["status"], obs["response_bytes"]) == ("api.example.com", "DELETE", 204, 0)
