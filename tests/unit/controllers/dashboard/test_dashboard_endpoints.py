"""kuberay.controllers.dashboard.endpoints: dialling a Service in a pod and from the host."""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.controllers.dashboard.endpoints import ServiceNotReachable, service_address

NS = "ns"
SERVICE = {
    "metadata": {"name": "rc-head-svc", "namespace": NS},
    "spec": {
        "selector": {"ray.io/cluster": "rc", "ray.io/node-type": "head"},
        "ports": [
            {"name": "gcs", "port": 6379, "targetPort": 6379},
            {"name": "dashboard", "port": 8265, "targetPort": "dashboard"},
        ],
    },
}


def _pod(name: str, ip: str, ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [
                {"name": "ray-head", "ports": [{"name": "dashboard", "containerPort": 18265}]}
            ]
        },
        "status": {
            "phase": "Running",
            "podIP": ip,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


class FakeClient:
    def __init__(
        self,
        slices: list[dict[str, Any]],
        pods: list[dict[str, Any]],
        service: dict[str, Any] | None = None,
    ) -> None:
        self.slices = slices
        self.pods = pods
        self.service = service or SERVICE
        self.lists: list[tuple[str, str | None]] = []

    async def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        assert (kind, name, namespace) == ("Service", "rc-head-svc", NS)
        return self.service

    async def list_all(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
    ) -> tuple[list[dict[str, Any]], str]:
        self.lists.append((kind, label_selector))
        return (self.slices if kind == "EndpointSlice" else self.pods), "1"


async def test_in_a_pod_the_service_dns_name() -> None:
    client = FakeClient([], [])
    got = await service_address(
        client, NS, "rc-head-svc", "dashboard", environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    )
    assert got == ("rc-head-svc.ns.svc.cluster.local", 8265)
    assert client.lists == []


async def test_outside_a_ready_endpoint_slice_address() -> None:
    slices = [
        {
            "metadata": {"name": "rc-head-svc-abc"},
            "addressType": "IPv4",
            "ports": [{"name": "gcs", "port": 6379}, {"name": "dashboard", "port": 18265}],
            "endpoints": [
                {"addresses": ["10.250.0.9"], "conditions": {"ready": False}},
                {"addresses": ["10.250.0.7"], "conditions": {"ready": True}},
            ],
        }
    ]
    client = FakeClient(slices, [])
    got = await service_address(client, NS, "rc-head-svc", 8265, environ={})
    assert got == ("10.250.0.7", 18265)
    assert client.lists == [("EndpointSlice", "kubernetes.io/service-name=rc-head-svc")]


async def test_outside_without_endpoint_slices_the_selectors_ready_pod() -> None:
    pods = [_pod("a-unready", "10.250.0.3", ready=False), _pod("b-ready", "10.250.0.4")]
    client = FakeClient([], pods)
    got = await service_address(client, NS, "rc-head-svc", "dashboard", environ={})
    assert got == ("10.250.0.4", 18265)  # the named targetPort, as the pod declares it
    assert client.lists[-1] == ("Pod", "ray.io/cluster=rc,ray.io/node-type=head")


async def test_nothing_ready_or_no_such_port() -> None:
    client = FakeClient([], [_pod("a", "10.250.0.3", ready=False)])
    with pytest.raises(ServiceNotReachable):
        await service_address(client, NS, "rc-head-svc", "dashboard", environ={})
    with pytest.raises(ServiceNotReachable):
        await service_address(client, NS, "rc-head-svc", "metrics", environ={})
    slices = [
        {
            "metadata": {"name": "s"},
            "ports": [{"name": "dashboard", "port": 8265}],
            "endpoints": [{"addresses": ["10.250.0.9"], "conditions": {"ready": False}}],
        }
    ]
    with pytest.raises(ServiceNotReachable):
        await service_address(FakeClient(slices, []), NS, "rc-head-svc", "dashboard", environ={})


async def test_publish_not_ready_addresses_answers_for_a_running_pod_that_is_not_ready() -> None:
    """KubeRay's headless head Service publishes not-ready pods (its DNS name resolves to them),
    so a SidecarMode head whose submitter ended (never Ready again) is still dialled."""
    headless = {**SERVICE, "spec": {**SERVICE["spec"], "publishNotReadyAddresses": True}}
    pod = _pod("a", "10.250.0.3", ready=False)
    got = await service_address(
        FakeClient([], [pod], headless), NS, "rc-head-svc", "dashboard", environ={}
    )
    assert got == ("10.250.0.3", 18265)
    pending = _pod("b", "10.250.0.4", ready=False)
    pending["status"]["phase"] = "Pending"
    with pytest.raises(ServiceNotReachable):
        await service_address(
            FakeClient([], [pending], headless), NS, "rc-head-svc", "dashboard", environ={}
        )
