"""The dashboard's Pods route: the RayCluster read as the caller first (a refusal passed back,
no Pod listed), the Pods of that cluster only, trimmed to what the page shows, the server's
rights used only when the caller lacks Pod rights, and hostile names refused unsent."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest

from kuberay.apiserver.dashboard.pods import NO_POD_RIGHTS, cluster_pods
from kuberay.apiserver.kube_calls import KubeAnswer

FORBIDDEN = KubeAnswer(403, json.dumps({"kind": "Status", "code": 403, "message": "no"}).encode())


def _pod(name: str, cluster: str, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "ray.io/cluster": cluster,
                "ray.io/node-type": "worker",
                "ray.io/group": "g",
            },
            "annotations": {"secret": "s3cr3t"},
        },
        "spec": {"containers": [{"name": "ray", "env": [{"name": "PASSWORD", "value": "pw"}]}]},
        "status": {"podIP": "10.0.0.9", **status},
    }


class FakeCall:
    """A KubeCall answering from ``answers`` by path (the rest 404), recording each call."""

    def __init__(self, answers: Mapping[str, KubeAnswer]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, Mapping[str, str] | None]] = []

    async def __call__(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> KubeAnswer:
        self.calls.append((path, params))
        return self.answers.get(path, KubeAnswer(404, b'{"kind":"Status","code":404}'))


CLUSTER = "/apis/ray.io/v1/namespaces/ns/rayclusters/rc"
PODS = "/api/v1/namespaces/ns/pods"


def _list(*pods: dict[str, Any]) -> KubeAnswer:
    return KubeAnswer(200, json.dumps({"kind": "PodList", "items": list(pods)}).encode())


async def test_a_caller_who_may_not_get_the_raycluster_gets_403_and_no_pod_is_listed() -> None:
    caller = FakeCall({CLUSTER: FORBIDDEN, PODS: _list()})
    server = FakeCall({PODS: _list(_pod("a", "rc"))})
    answer = await cluster_pods(caller, server, "ns", "rc")
    assert answer.status == 403
    assert json.loads(answer.body)["message"] == "no"
    assert [c[0] for c in caller.calls] == [CLUSTER]
    assert server.calls == []


async def test_a_missing_raycluster_is_404() -> None:
    answer = await cluster_pods(FakeCall({}), FakeCall({}), "ns", "rc")
    assert answer.status == 404


async def test_the_clusters_pods_trimmed_to_what_the_page_shows() -> None:
    head = _pod(
        "rc-head",
        "rc",
        phase="Running",
        startTime="2026-01-01T00:00:05Z",
        conditions=[{"type": "Ready", "status": "True"}],
        containerStatuses=[{"restartCount": 2}, {"restartCount": 1}],
    )
    other = _pod("other-head", "other", phase="Running")
    caller = FakeCall({CLUSTER: KubeAnswer(200, b"{}"), PODS: _list(head, other)})
    answer = await cluster_pods(caller, None, "ns", "rc")
    assert answer.status == 200
    assert caller.calls[1] == (PODS, {"labelSelector": "ray.io/cluster=rc"})
    body = json.loads(answer.body)
    assert body["items"] == [
        {
            "name": "rc-head",
            "nodeType": "worker",
            "group": "g",
            "phase": "Running",
            "ready": True,
            "restarts": 3,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "startTime": "2026-01-01T00:00:05Z",
        }
    ]
    for secret in (b"s3cr3t", b"PASSWORD", b"10.0.0.9", b"other"):
        assert secret not in answer.body


async def test_without_pod_rights_the_server_lists_them_else_a_clear_403() -> None:
    caller = FakeCall({CLUSTER: KubeAnswer(200, b"{}"), PODS: FORBIDDEN})
    server = FakeCall({PODS: _list(_pod("rc-w", "rc", phase="Pending"))})
    answer = await cluster_pods(caller, server, "ns", "rc")
    assert [p["name"] for p in json.loads(answer.body)["items"]] == ["rc-w"]

    refused = await cluster_pods(caller, FakeCall({PODS: FORBIDDEN}), "ns", "rc")
    assert refused.status == 403
    assert json.loads(refused.body)["message"] == NO_POD_RIGHTS


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        ("ns", ".."),
        ("..", "rc"),
        ("ns", "a%2Fb"),
        ("ns", "a%0D%0AX-Evil:%201"),
        ("ns", "a" * 254),
        ("n" * 64, "rc"),
        ("ns", "Upper"),
    ],
)
async def test_hostile_names_are_refused_before_anything_is_sent(
    server: str, namespace: str, name: str
) -> None:
    url = f"{server}/dashboard/api/namespaces/{namespace}/rayclusters/{name}/pods"
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            aiohttp.client.URL(url, encoded=True), headers={"Authorization": "Bearer t"}
        ) as r,
    ):
        assert r.status == 400  # the upstream behind is dead: a call would answer 502


async def test_the_route_needs_a_token_though_the_dashboards_files_do_not(server: str) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{server}/dashboard/api/namespaces/ns/rayclusters/rc/pods") as r:
            assert r.status == 401
        async with session.get(f"{server}/dashboard/") as r:
            assert r.status == 200
