"""The dashboard's Why route: the object read as the caller first (a refusal passed back,
nothing else read), the same diagnosis ``kubectl ray why`` prints, reads the caller may not
make left out with a note (an unread Secret is not reported missing), Pods listed with the
server's rights only when the caller lacks them, hostile names and kinds refused unsent."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest

from kuberay.apiserver.dashboard.why import diagnosis_answer
from kuberay.apiserver.kube_calls import KubeAnswer

FORBIDDEN = KubeAnswer(403, json.dumps({"kind": "Status", "code": 403, "message": "no"}).encode())
NS = "/api/v1/namespaces/ns"
RAY = "/apis/ray.io/v1/namespaces/ns"


def _json(obj: Any) -> KubeAnswer:
    return KubeAnswer(200, json.dumps(obj).encode())


def _list(*items: Any) -> KubeAnswer:
    return _json({"items": list(items)})


class FakeCall:
    """A KubeCall answering from ``answers`` by path (the rest 404), recording each call."""

    def __init__(self, answers: Mapping[str, KubeAnswer]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> KubeAnswer:
        self.calls.append(path)
        return self.answers.get(path, KubeAnswer(404, b'{"kind":"Status","code":404}'))


def _cluster(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "rc", "namespace": "ns", "uid": "u"},
        "spec": {"headGroupSpec": {"template": {"spec": {"containers": []}}}, **spec},
        "status": {"state": "ready"},
    }


def _crashing_pod() -> dict[str, Any]:
    waiting = {"reason": "CrashLoopBackOff", "message": "back-off"}
    return {
        "metadata": {"name": "rc-head", "labels": {"ray.io/cluster": "rc"}},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "ray", "restartCount": 4, "state": {"waiting": waiting}}
            ],
        },
    }


def _reasons(body: bytes) -> list[str]:
    return [f["reason"] for f in json.loads(body)["findings"]]


async def test_a_caller_who_may_not_get_the_object_gets_its_403_and_nothing_else_is_read() -> None:
    caller = FakeCall({f"{RAY}/rayjobs/j": FORBIDDEN})
    server = FakeCall({})
    answer = await diagnosis_answer(caller, server, "ns", "rayjobs", "j")
    assert answer.status == 403
    assert json.loads(answer.body)["message"] == "no"
    assert caller.calls == [f"{RAY}/rayjobs/j"]
    assert server.calls == []


async def test_a_secret_the_caller_may_not_read_is_noted_not_reported_missing() -> None:
    token = _cluster(authOptions={"mode": "token"})
    caller = FakeCall({f"{RAY}/rayclusters/rc": _json(token), f"{NS}/secrets/rc": FORBIDDEN})
    answer = await diagnosis_answer(caller, None, "ns", "rayclusters", "rc")
    assert answer.status == 200
    body = json.loads(answer.body)
    assert body["kind"] == "RayCluster" and body["name"] == "rc"
    assert "AuthSecretMissing" not in _reasons(answer.body)
    assert any("Secret/rc" in note for note in body["notes"])
    # the same cluster when the Secret really is absent: the finding kubectl ray why prints
    absent = FakeCall({f"{RAY}/rayclusters/rc": _json(token)})
    found = await diagnosis_answer(absent, None, "ns", "rayclusters", "rc")
    assert "AuthSecretMissing" in _reasons(found.body)
    assert not json.loads(found.body)["ready"]


async def test_pods_the_caller_may_not_list_are_listed_with_the_servers_rights() -> None:
    caller = FakeCall({f"{RAY}/rayclusters/rc": _json(_cluster()), f"{NS}/pods": FORBIDDEN})
    server = FakeCall({f"{NS}/pods": _list(_crashing_pod())})
    answer = await diagnosis_answer(caller, server, "ns", "rayclusters", "rc")
    assert answer.status == 200
    assert server.calls == [f"{NS}/pods"]
    assert any("CrashLoop" in r for r in _reasons(answer.body)), _reasons(answer.body)


async def test_a_rayjob_is_judged_with_its_cluster() -> None:
    job = {
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {"entrypoint": "python x.py"},
        "status": {"rayClusterName": "rc", "jobDeploymentStatus": "Initializing"},
    }
    caller = FakeCall(
        {
            f"{RAY}/rayjobs/j": _json(job),
            f"{RAY}/rayclusters/rc": _json(_cluster()),
            f"{NS}/pods": _list(_crashing_pod()),
        }
    )
    answer = await diagnosis_answer(caller, None, "ns", "rayjobs", "j")
    assert answer.status == 200
    body = json.loads(answer.body)
    assert body["kind"] == "RayJob" and not body["ready"]
    assert f"{RAY}/rayclusters/rc" in caller.calls
    assert any("CrashLoop" in r for r in _reasons(answer.body)), _reasons(answer.body)


@pytest.mark.parametrize(
    ("namespace", "plural", "name", "status"),
    [
        ("ns", "rayclusters", "..", 400),
        ("..", "rayjobs", "j", 400),
        ("ns", "rayservices", "a%2Fb", 400),
        ("ns", "rayjobs", "a%0D%0AX-Evil:%201", 400),
        ("ns", "rayclusters", "a" * 254, 400),
        ("ns", "secrets", "s", 404),
        ("ns", "rayclusters%2F..", "s", 400),  # the guard: an encoded slash
    ],
)
async def test_hostile_names_and_kinds_are_refused_before_anything_is_sent(
    server: str, namespace: str, plural: str, name: str, status: int
) -> None:
    url = f"{server}/dashboard/api/namespaces/{namespace}/{plural}/{name}/why"
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            aiohttp.client.URL(url, encoded=True), headers={"Authorization": "Bearer t"}
        ) as r,
    ):
        assert r.status == status  # the upstream behind is dead: a call would answer 502


async def test_the_route_needs_a_token(server: str) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{server}/dashboard/api/namespaces/ns/rayclusters/rc/why") as r,
    ):
        assert r.status == 401
