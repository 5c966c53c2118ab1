"""The dashboard factory and poller against the real apiserver and an operator-made RayCluster:
the head Service, the head pod's IP and the auth Secret are read from the API; the dashboard is
the fake one, listening where the head pod's status says the pod is."""

from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import AsyncIterator

import pytest

from kuberay.controllers.dashboard import (
    DashboardClientFactory,
    DashboardPoller,
    DashboardTarget,
    DashboardUnreachable,
    ObjectKey,
)
from kuberay.kube import Client
from kuberay.testing import FakeDashboard
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import pods_of, raycluster, set_running

FAKE_HOST = "127.0.0.161"  # the head pod "IP"; port 8265 as the head container's


@pytest.fixture
async def fake() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard(FAKE_HOST, 8265) as fd:
        yield fd


async def head_running(kclient: Client, namespace: str, cluster: str, ip: str) -> None:
    async def head() -> list[dict[str, object]]:
        return await pods_of(kclient, namespace, cluster, **{"ray.io/node-type": "head"})

    heads = await eventually(head, timeout=60, message="head pod created")
    await set_running(kclient, heads[0], ip=ip)


async def test_token_cluster_resolved_through_the_api(
    crds_installed: None, kclient: Client, namespace: str, fake: FakeDashboard
) -> None:
    async with start_operator(kclient, namespace):
        body = raycluster(
            "dash", namespace, replicas=0, rayVersion="2.52.0", authOptions={"mode": "token"}
        )
        await kclient.create(body)
        secret = await eventually(
            lambda: kclient.get("v1", "Secret", "dash", namespace),
            timeout=60,
            message="auth Secret",
        )
        fake.require_token = base64.b64decode(secret["data"]["auth_token"]).decode()
        await head_running(kclient, namespace, "dash", FAKE_HOST)
        fake.add_job("dash-job", status="RUNNING")

        cluster = await kclient.get("ray.io/v1", "RayCluster", "dash", namespace)
        target = DashboardTarget.from_cluster(cluster)
        factory = DashboardClientFactory(kclient, environ={})
        poller = DashboardPoller(factory)
        owner: ObjectKey = (namespace, "my-rayjob")
        seen = asyncio.Event()
        poller.on_result = lambda key: seen.set() if key == owner else None
        try:
            assert poller.job_info(owner, target, "dash-job") is None
            await asyncio.wait_for(seen.wait(), 30)
            got = poller.job_info(owner, target, "dash-job", max_age=math.inf)
            assert got is not None and got.error is None and got.value is not None
            assert got.value.status == "RUNNING"
            assert fake.request_headers[-1]["x-ray-authorization"] == (
                f"Bearer {fake.require_token}"
            )
        finally:
            await poller.close()
            await factory.close()


async def test_kwok_like_pod_ip_is_never_dialled(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace):
        await kclient.create(raycluster("remote", namespace, replicas=0))
        await head_running(kclient, namespace, "remote", "10.1.0.7")
        cluster = await kclient.get("ray.io/v1", "RayCluster", "remote", namespace)
        factory = DashboardClientFactory(kclient, environ={})
        try:
            with pytest.raises(DashboardUnreachable) as err:
                await factory.client_for(DashboardTarget.from_cluster(cluster))
            assert "not dialling 10.1.0.7" in str(err.value)
            assert len(factory._pools) == 0  # no connection was even prepared
        finally:
            await factory.close()


async def test_kubernetes_proxy_mode_reaches_the_apiserver_with_its_credentials(
    kclient: Client, namespace: str
) -> None:
    """Through the apiserver's service proxy, with the kube client's TLS and token: the
    apiserver's own refusals are 'unreachable', never 'job not found'."""
    cluster = raycluster("proxied", namespace, replicas=0)
    cluster["metadata"]["namespace"] = namespace
    target = DashboardTarget.from_cluster(cluster)
    factory = DashboardClientFactory(kclient, use_kubernetes_proxy=True, environ={})
    try:
        client = await factory.client_for(target)
        assert client.base_url.endswith(
            f"/api/v1/namespaces/{namespace}/services/proxied-head-svc:dashboard/proxy"
        )
        with pytest.raises(DashboardUnreachable) as err:
            await client.get_job_info("j")  # no such Service: a 404 Status from the apiserver
        assert "404" in str(err.value) and "proxied-head-svc" in str(err.value)

        # A Service with no endpoint behind it: still the apiserver's refusal, not the job's.
        await kclient.create(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "proxied-head-svc", "namespace": namespace},
                "spec": {"ports": [{"name": "dashboard", "port": 8265}]},
            }
        )
        with pytest.raises(DashboardUnreachable, match="the apiserver proxy answered"):
            await client.get_job_info("j")
    finally:
        await factory.close()
