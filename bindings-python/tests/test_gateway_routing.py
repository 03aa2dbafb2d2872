"""Sampled calls through the real sampling gateway, end to end (SPEC §10).

A real lowdown-server serves the API and, with ``--gateway-listen``, the gateway, behind a
relay that records what reaches it; its services.toml names a local vendor four times:
``/on`` sampled at rate 1.0 (inject, allowing ``POST /v1/charges`` and the redirect),
``/off`` at 0.0, ``/mine`` (passthrough) and ``/ex`` (inject, everything). prowl with real
httpx and httpx2 clients, sync and async, must send the allowed ``/on`` calls through the
gateway carrying none of the user's own secrets (the vendor sees the operator's credential
and none of the agent's identity or credentials), every call the rules do not allow and
the ``/off`` calls straight to the vendor, as they were, a ``passthrough`` call with the
user's own credential (stored nowhere), and only the services ``PROWL_GATEWAY_SERVICES``
names.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Dict, Iterator

import pytest

import prowl
from prowl.gateway import ROUTER, _get
from prowl.sender import SENDER

from conftest import LowdownServer
from servers import Collector, Relay, Upstream, Vendor, free_port, wait_for

USER_SECRET = "Bearer CANARY_user_vendor_token"
VENDOR_KEY = "CANARY_operator_key"


@pytest.fixture(scope="module")
def vendor() -> Iterator[Vendor]:
    v = Vendor()
    yield v
    v.close()


@pytest.fixture(scope="module")
def prowl_server(vendor: Vendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LowdownServer]:
    catalog = tmp_path_factory.mktemp("catalog") / "services.toml"
    service = """
[[service]]
slug = "{slug}"
service_id = "svc_{slug}"
upstream = "{url}/{base}"
hosts = ["127.0.0.1"]
sampling_rate = {rate}
allow = {allow}
credential = {{ {credential} }}
"""
    inject = 'header = "X-Vendor-Key", env = "VENDOR_KEY_FIXTURE", format = "vk {}"'
    catalog.write_text(
        service.format(slug="sampled", url=vendor.url, base="on", rate="1.0", credential=inject,
                       allow='["POST /v1/charges", "GET /redirect", "GET /v1/landed"]')
        + service.format(slug="unsampled", url=vendor.url, base="off", rate="0.0", credential=inject, allow='["GET /"]')
        + service.format(slug="mine", url=vendor.url, base="mine", rate="1.0",
                         credential='mode = "passthrough", header = "Authorization"', allow='["POST /v1/customers"]')
        + service.format(slug="excluded", url=vendor.url, base="ex", rate="1.0", credential=inject, allow='["GET /"]')
    )
    gateway_port = free_port()
    server = LowdownServer(
        args=["--catalog", str(catalog), "--gateway-listen", f"127.0.0.1:{gateway_port}", "--unsafe-allow-loopback",
              "--quota", "registrations-per-network=100"],  # one agent per test, all from loopback
        env={"VENDOR_KEY_FIXTURE": VENDOR_KEY, "RUST_LOG": "debug"},
    )
    relay = Relay(gateway_port)
    server.gateway_url = relay.url  # type: ignore[attr-defined]
    server.relay = relay  # type: ignore[attr-defined]
    yield server
    relay.close()
    server.close()


@pytest.fixture
def agent(prowl_server: LowdownServer, clean_env: pytest.MonkeyPatch) -> Iterator[Dict[str, str]]:
    """A freshly registered agent, with prowl configured to route through the gateway."""
    reg = prowl_server.post("/v1/auth/agents/register", {"name": "gw-test", "model_provider": "acme", "model_id": "m-1", "environment": "test"})
    clean_env.setenv("PROWL_API_URL", prowl_server.url)
    clean_env.setenv("PROWL_AGENT_KEY", reg["agent_key"])
    clean_env.setenv("PROWL_GATEWAY_URL", prowl_server.gateway_url)  # type: ignore[attr-defined]
    clean_env.setenv("PROWL_TELEMETRY_ALLOW_PRIVATE", "1")
    prowl.configure()
    ROUTER.reset()
    yield reg
    prowl.unobserve()
    prowl.flush(1.0)
    SENDER.reset()
    ROUTER.reset()



def ready() -> None:
    """Route one call so the router fetches, and wait until the catalog and salt are in."""
    ROUTER.prefetch(prowl.configure(from_env=False))
    wait_for(lambda: ROUTER.status()["ready"], "the router's catalog and salt")


def calls(server: LowdownServer, slug: str) -> int:
    """How many ProxyCalls the gateway recorded for a service."""
    return server.get(f"/v1/services/{slug}")["probe_health"]["n"]


def check_sampled(vendor: Vendor, server: LowdownServer, agent: Dict[str, str], before: int, mark: str) -> None:
    [got] = vendor.received(f"/on/v1/charges?mark={mark}")
    h = got["headers"]
    assert got["method"] == "POST" and got["body"] == f"canary-body-{mark}".encode()
    assert h["x-vendor-key"] == f"vk {VENDOR_KEY}", "the gateway injected the operator's credential"
    for gone in ("authorization", "cookie", "x-custom", "x-agent-key", "x-prowl-salt-id", "x-prowl-sample-decision"):
        assert gone not in h, f"{gone} reached the vendor"
    # The user's own secrets never left the process: the gateway did not receive them either.
    [sent] = server.relay.received(f"/sampled/v1/charges?mark={mark}")  # type: ignore[attr-defined]
    assert sent["headers"]["x-agent-key"] == agent["agent_key"]
    for gone in ("authorization", "cookie", "proxy-authorization", "x-vendor-key", "x-custom"):
        assert gone not in sent["headers"], f"{gone} was sent to the gateway"
    assert "CANARY_user" not in json.dumps(sent["headers"])
    raw = json.dumps(got["headers"]) + got["path"]
    assert agent["agent_key"] not in raw and "CANARY_user" not in raw
    assert wait_for(lambda: calls(server, "sampled") == before + 1, "the gateway's ProxyCall")


def check_direct(vendor: Vendor, agent: Dict[str, str], mark: str) -> None:
    [got] = vendor.received(f"/off/v1/things?mark={mark}")
    h = got["headers"]
    assert h["authorization"] == USER_SECRET, "a direct call keeps the caller's own credential"
    assert "x-vendor-key" not in h
    assert not any(k.startswith("x-prowl") for k in h) and "x-agent-key" not in h
    assert agent["agent_key"] not in json.dumps(got["headers"]), "the agent key never goes to a vendor"


def test_sampled_calls_go_through_the_gateway_and_unsampled_ones_straight_to_the_vendor(
    lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str], upstream: Upstream
) -> None:
    client = prowl.observe(lib.Client(follow_redirects=True))
    ready()
    mark = f"{lib.__name__}-sync"
    before = calls(prowl_server, "sampled")
    r = client.post(f"{vendor.url}/on/v1/charges?mark={mark}", content=f"canary-body-{mark}".encode(),
                    headers={"Authorization": USER_SECRET, "Cookie": "session=CANARY_user_cookie", "Proxy-Authorization": "Basic CANARY_user_proxy",
                             "X-Vendor-Key": "vk CANARY_user_own_key", "X-Custom": "CANARY_user_custom"})
    assert r.status_code == 200 and r.json() == {"path": f"/on/v1/charges?mark={mark}", "method": "POST"}
    assert str(r.url) == f"{vendor.url}/on/v1/charges?mark={mark}", "the caller sees the vendor URL it asked for"
    check_sampled(vendor, prowl_server, agent, before, mark)

    r = client.get(f"{vendor.url}/off/v1/things?mark={mark}", headers={"Authorization": USER_SECRET})
    assert r.status_code == 200
    check_direct(vendor, agent, mark)
    assert calls(prowl_server, "unsampled") == 0, "the gateway never saw an unsampled call"

    # A redirect the gateway passes on is followed to the vendor URL, and routed again.
    landed = len(vendor.received("/on/v1/landed"))
    r = client.get(f"{vendor.url}/on/redirect")
    assert r.status_code == 200 and str(r.url) == f"{vendor.url}/on/v1/landed"
    assert [h["headers"]["x-vendor-key"] for h in vendor.received("/on/v1/landed")[landed:]] == [f"vk {VENDOR_KEY}"]

    # Outside the catalog nothing changes.
    assert client.get(f"{upstream.url}/ok", headers={"Authorization": USER_SECRET}).text == "hello from upstream"
    assert prowl.flush(2.0)
    assert ROUTER.status()["agent_id"] == agent["agent_id"], "the salt answer named this key's agent"


@pytest.mark.anyio
async def test_async_clients_route_the_same_way(lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str]) -> None:
    async with prowl.observe(lib.AsyncClient()) as client:
        ready()
        mark = f"{lib.__name__}-async"
        before = calls(prowl_server, "sampled")
        r = await client.post(f"{vendor.url}/on/v1/charges?mark={mark}", content=f"canary-body-{mark}".encode(),
                              headers={"Authorization": USER_SECRET, "Cookie": "session=CANARY_user_cookie", "Proxy-Authorization": "Basic CANARY_user_proxy",
                             "X-Vendor-Key": "vk CANARY_user_own_key", "X-Custom": "CANARY_user_custom"})
        assert r.status_code == 200
        check_sampled(vendor, prowl_server, agent, before, mark)
        r = await client.get(f"{vendor.url}/off/v1/things?mark={mark}", headers={"Authorization": USER_SECRET})
        assert r.status_code == 200
        check_direct(vendor, agent, mark)


def test_a_refused_decision_falls_back_to_the_vendor_and_the_router_starts_over(
    lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str]
) -> None:
    client = prowl.observe(lib.Client())
    ready()
    # A roll this agent could not honestly hold (as after a catalog or salt change): the salt's
    # id with another value, handed to the core's router as if fetched.
    catalog = _get(prowl_server.url, "/v1/services", None)
    salt = {**json.loads(_get(prowl_server.url, "/v1/sampling/salt", agent["agent_key"])), "salt": "0" * 64}
    assert ROUTER._core.loaded(int(time.time() * 1000), catalog, json.dumps(salt))  # type: ignore[union-attr]
    mark = f"{lib.__name__}-refused"
    r = client.post(f"{vendor.url}/on/v1/charges?mark={mark}", content=b"again", headers={"Authorization": USER_SECRET})
    assert r.status_code == 200, "the caller gets the vendor's answer, not the gateway's 403"
    [got] = vendor.received(f"/on/v1/charges?mark={mark}")
    assert got["headers"]["authorization"] == USER_SECRET and "x-vendor-key" not in got["headers"]
    assert ROUTER.status()["counts"]["refused"] == 1
    wait_for(lambda: ROUTER.status()["ready"], "the router to fetch again")


def test_the_caller_never_waits_for_the_catalog_or_the_salt(lib: ModuleType, vendor: Vendor, clean_env: pytest.MonkeyPatch) -> None:
    api = Collector("hang")  # accepts the fetch and never answers it
    try:
        clean_env.setenv("PROWL_API_URL", api.url)
        clean_env.setenv("PROWL_AGENT_KEY", "ak_CANARY_agent_key")
        clean_env.setenv("PROWL_GATEWAY_URL", "http://127.0.0.1:9")
        prowl.configure()
        ROUTER.reset()
        done = threading.Event()
        client = prowl.observe(lib.Client())

        def call() -> None:
            client.get(f"{vendor.url}/on/v1/charges?mark={lib.__name__}-early")
            done.set()

        threading.Thread(target=call, daemon=True).start()
        wait_for(lambda: any(r["path"] == "/v1/services" for r in api.requests), "the router asking the API for the catalog")
        assert done.wait(20), "the call finished while the catalog fetch still hangs"
        [got] = vendor.received(f"/on/v1/charges?mark={lib.__name__}-early")
        assert "x-agent-key" not in got["headers"], "sent direct, and without the agent key"
        assert not ROUTER.status()["ready"]
    finally:
        api.close()
        ROUTER.reset()


def test_routing_is_off_without_a_gateway_url(lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROWL_GATEWAY_URL")
    prowl.configure()
    client = prowl.observe(lib.Client())
    mark = f"{lib.__name__}-off"
    client.get(f"{vendor.url}/on/v1/charges?mark={mark}", headers={"Authorization": USER_SECRET})
    [got] = vendor.received(f"/on/v1/charges?mark={mark}")
    assert got["headers"]["authorization"] == USER_SECRET and "x-agent-key" not in got["headers"]
    assert ROUTER.status()["counts"]["fetches"] == 0, "nothing fetched when routing is off"

    # Set in code instead, it is on.
    before = calls(prowl_server, "sampled")
    prowl.configure(gateway_url=prowl_server.gateway_url)  # type: ignore[attr-defined]
    ready()
    client.post(f"{vendor.url}/on/v1/charges?mark={mark}-on", content=f"canary-body-{mark}-on".encode(),
                headers={"Authorization": USER_SECRET, "X-Custom": "CANARY_user_custom"})
    check_sampled(vendor, prowl_server, agent, before, f"{mark}-on")


def test_calls_the_rules_do_not_allow_go_straight_to_the_vendor(
    lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str]
) -> None:
    client = prowl.observe(lib.Client())
    ready()
    mark = f"{lib.__name__}-unallowed"
    relayed = len(prowl_server.relay.requests)  # type: ignore[attr-defined]
    # The reproductions: a read and a refund on a sampled service that allows neither.
    client.get(f"{vendor.url}/on/v1/customers?mark={mark}", headers={"Authorization": USER_SECRET})
    client.post(f"{vendor.url}/on/v1/refunds?mark={mark}", content=b"x", headers={"Authorization": USER_SECRET})
    client.get(f"{vendor.url}/on/v1/charges?mark={mark}", headers={"Authorization": USER_SECRET})  # GET is not allowed
    for path in ("/on/v1/customers", "/on/v1/refunds", "/on/v1/charges"):
        [got] = vendor.received(f"{path}?mark={mark}")
        assert got["headers"]["authorization"] == USER_SECRET, "sent direct, on the user's own account"
        assert "x-vendor-key" not in got["headers"] and "x-agent-key" not in got["headers"]
    assert len(prowl_server.relay.requests) == relayed, "nothing reached the gateway"  # type: ignore[attr-defined]
    assert ROUTER.status()["counts"]["routed"] == 0


def test_a_passthrough_call_carries_the_users_own_credential_and_nothing_keeps_it(
    lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str]
) -> None:
    client = prowl.observe(lib.Client())
    ready()
    mark = f"{lib.__name__}-passthrough"
    secret = f"Bearer CANARY_passthrough_{lib.__name__}"
    r = client.post(f"{vendor.url}/mine/v1/customers?mark={mark}", content=b"{}",
                    headers={"Authorization": secret, "Cookie": "session=CANARY_user_cookie"})
    assert r.status_code == 200
    [got] = vendor.received(f"/mine/v1/customers?mark={mark}")
    assert got["headers"]["authorization"] == secret, "the vendor saw the user's own credential"
    assert "x-vendor-key" not in got["headers"] and "cookie" not in got["headers"]
    [sent] = prowl_server.relay.received(f"/mine/v1/customers?mark={mark}")  # type: ignore[attr-defined]
    assert "cookie" not in sent["headers"], "only the credential header goes with it"
    wait_for(lambda: calls(prowl_server, "mine") >= 1, "the gateway's ProxyCall")
    answers = json.dumps([prowl_server.get("/v1/services"), prowl_server.get("/v1/services/mine")])
    assert '"passthrough"' in answers and "CANARY_passthrough" not in answers
    stored = b"".join(p.read_bytes() for p in prowl_server.db.parent.glob(prowl_server.db.name + "*"))
    assert b"CANARY_passthrough" not in stored, "the credential is in the database file"
    log = (Path(prowl_server.home) / "server.log").read_bytes()
    assert b"CANARY_passthrough" not in log and b"DEBUG" in log, "the credential is in the server's debug log"


def test_prowl_gateway_services_limits_routing_to_the_services_it_names(
    lib: ModuleType, vendor: Vendor, prowl_server: LowdownServer, agent: Dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = prowl.observe(lib.Client())
    ready()
    mark = f"{lib.__name__}-services"
    client.get(f"{vendor.url}/ex/v1/things?mark={mark}-all", headers={"Authorization": USER_SECRET})
    [got] = vendor.received(f"/ex/v1/things?mark={mark}-all")
    assert got["headers"]["x-vendor-key"] == f"vk {VENDOR_KEY}", "unset: every service whose rules match is routed"

    monkeypatch.setenv("PROWL_GATEWAY_SERVICES", "sampled, svc_mine")
    prowl.configure()
    client.get(f"{vendor.url}/ex/v1/things?mark={mark}-named", headers={"Authorization": USER_SECRET})
    [got] = vendor.received(f"/ex/v1/things?mark={mark}-named")
    assert got["headers"]["authorization"] == USER_SECRET and "x-vendor-key" not in got["headers"], "excluded: direct"
    before = calls(prowl_server, "sampled")
    client.post(f"{vendor.url}/on/v1/charges?mark={mark}-on", content=f"canary-body-{mark}-on".encode())
    assert vendor.received(f"/on/v1/charges?mark={mark}-on")[0]["headers"]["x-vendor-key"] == f"vk {VENDOR_KEY}", "named by slug: routed"
    wait_for(lambda: calls(prowl_server, "sampled") == before + 1, "the gateway's ProxyCall")
