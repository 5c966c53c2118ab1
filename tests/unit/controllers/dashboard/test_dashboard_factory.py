"""DashboardClientFactory without an apiserver: where it dials, what it refuses, which token."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.controllers.dashboard import (
    ALLOWED_NETWORKS_ENV,
    DashboardClientFactory,
    DashboardTarget,
    DashboardUnreachable,
    ServeProxyTarget,
)
from kuberay.http import ConnectionPool
from kuberay.kube.errors import NotFound
from kuberay.testing import FakeDashboard

NS = "ns"
OUTSIDE: dict[str, str] = {}  # no KUBERNETES_SERVICE_HOST: the operator runs on a host
IN_POD = {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}


class Configuration:
    tls_server_name = None

    async def auth_settings(self) -> dict[str, Any]:
        return {"BearerToken": {"value": "Bearer kube-token"}}


class FakeKube:
    """The parts of kuberay.kube.Client the factory uses, over in-memory objects."""

    host = "https://127.0.0.1:6443"

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects
        self.configuration = Configuration()
        self.reads: list[tuple[str, str]] = []
        self._pool: ConnectionPool | None = None

    @property
    def pool(self) -> ConnectionPool:
        if self._pool is None:
            self._pool = ConnectionPool(self.host)
        return self._pool

    def view(self, *, qps: float = 0.0, burst: int = 1) -> FakeKube:
        return self

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        self.reads.append((kind, name))
        for o in self.objects:
            if o["kind"] == kind and o["metadata"]["name"] == name:
                return o
        raise NotFound(404, "NotFound", f'{kind.lower()}s "{name}" not found')

    async def list_all(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
    ) -> tuple[list[dict[str, Any]], str]:
        self.reads.append((kind, label_selector or ""))
        return [o for o in self.objects if o["kind"] == kind], "1"

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()


def service(name: str = "rc-head-svc", port: int = 8265) -> dict[str, Any]:
    return {
        "kind": "Service",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "selector": {"ray.io/cluster": "rc", "ray.io/node-type": "head"},
            "ports": [{"name": "dashboard", "port": port, "targetPort": port}],
        },
    }


def endpoint_slice(ip: str, port: int = 8265) -> dict[str, Any]:
    return {
        "kind": "EndpointSlice",
        "metadata": {"name": "rc-head-svc-abcde", "namespace": NS},
        "addressType": "IPv4",
        "ports": [{"name": "dashboard", "port": port}],
        "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
    }


def secret(name: str, token: str) -> dict[str, Any]:
    return {
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NS},
        "data": {"auth_token": base64.b64encode(token.encode()).decode()},
    }


def cluster(auth: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"headGroupSpec": {"template": {"spec": {"containers": []}}}}
    if auth is not None:
        spec["authOptions"] = auth
    return {"metadata": {"name": "rc", "namespace": NS}, "spec": spec}


@pytest.fixture
async def fake() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard("127.0.0.51", 0) as fd:
        yield fd


async def make(kube: FakeKube, **kw: Any) -> DashboardClientFactory:
    kw.setdefault("environ", OUTSIDE)
    return DashboardClientFactory(kube, **kw)


def test_target_from_cluster_names_service_and_secret() -> None:
    plain = DashboardTarget.from_cluster(cluster())
    assert (plain.head_service, plain.port_name, plain.auth_secret) == (
        "rc-head-svc",
        "dashboard",
        None,
    )
    token = DashboardTarget.from_cluster(cluster({"mode": "token"}))
    assert token.auth_secret == "rc" and not token.k8s_token_auth
    custom = DashboardTarget.from_cluster(cluster({"mode": "token", "secretName": "mine"}))
    assert custom.auth_secret == "mine"
    k8s = DashboardTarget.from_cluster(cluster({"mode": "token", "enableK8sTokenAuth": True}))
    assert k8s.auth_secret == "rc" and k8s.k8s_token_auth
    assert DashboardTarget.from_cluster(cluster({"mode": "disabled"})).auth_secret is None
    named = cluster()
    named["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": "my-head"}}
    assert DashboardTarget.from_cluster(named).head_service == "my-head"


def test_serve_proxy_target_from_head_pod() -> None:
    pod = {
        "metadata": {"name": "rc-head-x", "namespace": NS},
        "spec": {
            "containers": [
                {"name": "ray-head", "ports": [{"name": "serve", "containerPort": 9000}]}
            ]
        },
        "status": {"podIP": "127.0.0.9"},
    }
    assert ServeProxyTarget.from_head_pod(pod) == ServeProxyTarget(
        NS, "rc-head-x", "127.0.0.9", 9000
    )
    pod["spec"]["containers"][0]["ports"] = []
    assert ServeProxyTarget.from_head_pod(pod).port == 8000


async def test_dial_guard_refuses_a_pod_ip_without_connecting() -> None:
    kube = FakeKube([service(), endpoint_slice("10.244.0.5")])
    factory = await make(kube)
    try:
        with pytest.raises(DashboardUnreachable) as err:
            await factory.client_for(DashboardTarget.from_cluster(cluster()))
        message = str(err.value)
        assert "10.244.0.5" in message and ALLOWED_NETWORKS_ENV in message
        assert "127.0.0.0/8" in message
        # Refused before any connection: no dashboard connection pool was even made.
        assert len(factory._pools) == 0
        with pytest.raises(DashboardUnreachable):
            await factory.client_for(ServeProxyTarget(NS, "rc-head", "10.244.0.5", 8000))
        assert len(factory._pools) == 0
    finally:
        await factory.close()
        await kube.close()


async def test_refused_address_goes_through_the_apiserver_proxy_with_fallback() -> None:
    """Outside a cluster with ``proxy_fallback``: a refused pod IP is reached through the
    apiserver's service proxy (a Serve proxy: the pod proxy), 10 s timeout, nothing dialled."""
    kube = FakeKube([service(), endpoint_slice("10.244.0.5"), secret("rc", "ray-token")])
    factory = await make(kube, proxy_fallback=True)
    try:
        client = await factory.client_for(DashboardTarget.from_cluster(cluster({"mode": "token"})))
        assert client.base_url == (
            "https://127.0.0.1:6443/api/v1/namespaces/ns/services/rc-head-svc:dashboard/proxy"
        )
        assert client.timeout == 10.0 and client._auth_token == "ray-token"
        assert client.pool is kube.pool  # the apiserver's credentials and TLS
        proxy = await factory.client_for(ServeProxyTarget(NS, "rc-head-x", "10.244.0.5", 8000))
        assert proxy.base_url == (
            "https://127.0.0.1:6443/api/v1/namespaces/ns/pods/rc-head-x:8000/proxy"
        )
        assert len(factory._pools) == 0  # nothing dialled directly
        # An allowed address is still dialled directly.
        kube.objects[1] = endpoint_slice("127.0.0.51")
        factory.forget_address((NS, "rc-head-svc", "dashboard"))
        direct = await factory.client_for(DashboardTarget.from_cluster(cluster()))
        assert direct.base_url == "http://127.0.0.51:8265" and direct.timeout == 2.0
    finally:
        await factory.close()
        await kube.close()


def test_proxy_fallback_setting() -> None:
    from kuberay.controllers.dashboard.setup import parse_bool

    name = "KUBERAY_DASHBOARD_PROXY_FALLBACK"
    assert parse_bool(name, None, True) is True and parse_bool(name, " ", True) is True
    assert parse_bool(name, "False", True) is False and parse_bool(name, "0", True) is False
    assert parse_bool(name, "TRUE", False) is True
    assert parse_bool(name, " f\n", True) is False  # surrounding space (a YAML block) is trimmed
    for bad in ("maybe", "yes", "tRuE"):  # Go's ParseBool refuses them, so does the operator
        with pytest.raises(ValueError, match=f"KUBERAY_DASHBOARD_PROXY_FALLBACK: '{bad}'"):
            parse_bool(name, bad, True)


async def test_allowed_networks_from_env() -> None:
    kube = FakeKube([service(), endpoint_slice("10.244.0.5")])
    env = {ALLOWED_NETWORKS_ENV: "192.168.0.0/16, 10.244.0.0/16"}
    factory = await make(kube, environ=env)
    try:
        client = await factory.client_for(DashboardTarget.from_cluster(cluster()))
        assert client.base_url == "http://10.244.0.5:8265" and client.timeout == 2.0
    finally:
        await factory.close()
        await kube.close()


def test_bad_allowed_network_fails_fast() -> None:
    with pytest.raises(ValueError, match="not-a-cidr"):
        DashboardClientFactory(FakeKube([]), environ={ALLOWED_NETWORKS_ENV: "not-a-cidr"})  # type: ignore[arg-type]


async def test_in_a_pod_dials_the_service_dns_name_without_restriction() -> None:
    kube = FakeKube([service(port=18265)])
    factory = await make(kube, environ=IN_POD, cluster_domain="corp.local")
    try:
        client = await factory.client_for(DashboardTarget.from_cluster(cluster()))
        assert client.base_url == "http://rc-head-svc.ns.svc.corp.local:18265"
        proxy = await factory.client_for(ServeProxyTarget(NS, "rc-head", "10.244.0.5", 8000))
        assert proxy.base_url == "http://10.244.0.5:8000"
    finally:
        await factory.close()
        await kube.close()


async def test_kubernetes_proxy_urls_and_credentials() -> None:
    kube = FakeKube([secret("rc", "ray-token")])
    factory = await make(kube, use_kubernetes_proxy=True)
    try:
        client = await factory.client_for(DashboardTarget.from_cluster(cluster({"mode": "token"})))
        assert client.base_url == (
            "https://127.0.0.1:6443/api/v1/namespaces/ns/services/rc-head-svc:dashboard/proxy"
        )
        assert client.timeout == 10.0
        assert client.pool is kube.pool  # the kube client's pool, TLS and credentials
        assert client._headers is not None
        assert await client._headers() == {"Authorization": "Bearer kube-token"}
        assert client._auth_token == "ray-token"
        # No Service lookup in proxy mode: the apiserver resolves it.
        assert ("Service", "rc-head-svc") not in kube.reads
        proxy = await factory.client_for(ServeProxyTarget(NS, "rc-head-x", "10.244.0.5", 8000))
        assert proxy.base_url == (
            "https://127.0.0.1:6443/api/v1/namespaces/ns/pods/rc-head-x:8000/proxy"
        )
    finally:
        await factory.close()
        await kube.close()


async def test_token_read_from_the_cache_follows_rotation_without_api_reads(
    fake: FakeDashboard,
) -> None:
    """The operator's cache holds the token Secret: no Secret GET, and a rotated token (the
    cache updated by its watch) is used by the next client."""
    fake.require_token = "first"
    fake.add_job("j")
    kube = FakeKube([service(port=fake.port), endpoint_slice(fake.host, fake.port)])
    cache = {(NS, "rc"): secret("rc", "first")}
    factory = await make(kube, cached_secret=lambda ns, name: cache.get((ns, name)))
    target = DashboardTarget.from_cluster(cluster({"mode": "token"}))
    try:
        for _ in range(5):
            assert (await (await factory.client_for(target)).get_job_info("j")).submission_id == "j"
        assert fake.request_headers[-1]["x-ray-authorization"] == "Bearer first"
        cache[(NS, "rc")] = secret("rc", "second")
        fake.require_token = "second"
        await (await factory.client_for(target)).get_job_info("j")
        assert fake.request_headers[-1]["x-ray-authorization"] == "Bearer second"
        assert ("Secret", "rc") not in kube.reads
    finally:
        await factory.close()
        await kube.close()


async def test_uncached_secret_is_read_from_the_api_once_per_ttl(fake: FakeDashboard) -> None:
    """A Secret the cache does not hold (a user's unlabelled secretName, or no Secret informer)
    is read from the apiserver at most once per ``address_ttl``; a rotation shows after it."""
    fake.require_token = "first"
    fake.add_job("j")
    kube = FakeKube(
        [service(port=fake.port), endpoint_slice(fake.host, fake.port), secret("mine", "first")]
    )
    now = [0.0]

    def no_informer(ns: str, name: str) -> dict[str, Any] | None:
        raise LookupError("no informer registered for Secret.v1")

    factory = await make(kube, clock=lambda: now[0], address_ttl=30, cached_secret=no_informer)
    target = DashboardTarget.from_cluster(cluster({"mode": "token", "secretName": "mine"}))
    try:
        for _ in range(5):
            await (await factory.client_for(target)).get_job_info("j")
        assert kube.reads.count(("Secret", "mine")) == 1
        kube.objects[-1] = secret("mine", "second")
        now[0] = 31.0
        fake.require_token = "second"
        await (await factory.client_for(target)).get_job_info("j")
        assert fake.request_headers[-1]["x-ray-authorization"] == "Bearer second"
        assert kube.reads.count(("Secret", "mine")) == 2
    finally:
        await factory.close()
        await kube.close()


async def test_missing_auth_secret_is_unreachable_with_a_reason() -> None:
    kube = FakeKube([service(), endpoint_slice("127.0.0.51")])
    factory = await make(kube)
    try:
        with pytest.raises(DashboardUnreachable, match="failed to get auth secret ns/rc"):
            await factory.client_for(DashboardTarget.from_cluster(cluster({"mode": "token"})))
        k8s = DashboardTarget.from_cluster(cluster({"mode": "token", "enableK8sTokenAuth": True}))
        with pytest.raises(DashboardUnreachable, match="enableK8sTokenAuth"):
            await factory.client_for(k8s)
        kube.objects.append({"kind": "Secret", "metadata": {"name": "rc"}, "data": {}})
        with pytest.raises(DashboardUnreachable, match="auth token key 'auth_token' not found"):
            await factory.client_for(DashboardTarget.from_cluster(cluster({"mode": "token"})))
    finally:
        await factory.close()
        await kube.close()


async def test_no_service_or_endpoint_is_unreachable() -> None:
    kube = FakeKube([])
    factory = await make(kube)
    try:
        with pytest.raises(DashboardUnreachable, match="head service ns/rc-head-svc not found"):
            await factory.client_for(DashboardTarget.from_cluster(cluster()))
        kube.objects.append(service())  # a Service, but no ready pod behind it
        with pytest.raises(DashboardUnreachable, match="no ready pod"):
            await factory.client_for(DashboardTarget.from_cluster(cluster()))
    finally:
        await factory.close()
        await kube.close()


async def test_address_is_cached_until_a_call_gets_no_answer(fake: FakeDashboard) -> None:
    fake.add_job("j")
    kube = FakeKube([service(port=fake.port), endpoint_slice(fake.host, fake.port)])
    now = [0.0]
    factory = await make(kube, clock=lambda: now[0], address_ttl=30)
    target = DashboardTarget.from_cluster(cluster())

    def lookups() -> int:
        return kube.reads.count(("Service", "rc-head-svc"))

    try:
        await (await factory.client_for(target)).get_job_info("j")
        await (await factory.client_for(target)).get_job_info("j")
        assert lookups() == 1
        now[0] = 31  # expired
        client = await factory.client_for(target)
        assert lookups() == 2
        await fake.stop()  # the head pod went away
        with pytest.raises(DashboardUnreachable):
            await client.get_job_info("j")
        await factory.client_for(target)  # resolved anew despite a young cache entry
        assert lookups() == 3
    finally:
        await factory.close()
        await kube.close()


async def test_closed_factory_refuses() -> None:
    kube = FakeKube([service(), endpoint_slice("127.0.0.51")])
    factory = await make(kube)
    await factory.close()
    with pytest.raises(DashboardUnreachable, match="closed"):
        await factory.client_for(DashboardTarget.from_cluster(cluster()))
    await kube.close()


@pytest.mark.parametrize("token", ["t\r\nX-Evil: 1", "t\nGET / HTTP/1.1", "t\x00", "t\x7f"])
async def test_a_token_with_a_control_character_is_never_sent(
    fake: FakeDashboard, token: str
) -> None:
    """The auth Secret belongs to the namespace's users: a CR LF in its token would end the
    x-ray-authorization header early and start a header (or a request) of the user's making,
    sent with the apiserver's credentials in proxy mode. The token is refused where it is read,
    with an error naming the Secret and the key, and nothing reaches the dashboard."""
    fake.add_job("j")
    kube = FakeKube(
        [service(port=fake.port), endpoint_slice(fake.host, fake.port), secret("rc", token)]
    )
    factory = await make(kube)
    try:
        with pytest.raises(DashboardUnreachable) as refused:
            client = await factory.client_for(
                DashboardTarget.from_cluster(cluster({"mode": "token"}))
            )
            await client.get_job_info("j")
        assert "ns/rc" in str(refused.value) and "auth_token" in str(refused.value)
        assert "X-Evil" not in str(refused.value)
        assert fake.requests == []
    finally:
        await factory.close()
        await kube.close()
