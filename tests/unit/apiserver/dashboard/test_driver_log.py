"""The dashboard's driver log route: the RayJob and its RayCluster read as the caller first
(a refusal passed back, nothing else asked), the log asked for through the Service proxy as
the caller, only its last 64 KiB kept, a job ID that is no plain name never sent."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import pytest

from kuberay.apiserver.dashboard.driver_log import TAIL_BYTES, driver_log
from kuberay.apiserver.kube_calls import KubeAnswer

FORBIDDEN = KubeAnswer(403, json.dumps({"kind": "Status", "code": 403, "message": "no"}).encode())
JOB = "/apis/ray.io/v1/namespaces/ns/rayjobs/j"
CLUSTER = "/apis/ray.io/v1/namespaces/ns/rayclusters/rc"
LOGS = "/api/v1/namespaces/ns/services/http:rc-head-svc:dashboard/proxy/api/jobs/j-1/logs"


def _json(obj: Any) -> KubeAnswer:
    return KubeAnswer(200, json.dumps(obj).encode())


def _job(job_id: str = "j-1") -> KubeAnswer:
    return _json({"metadata": {"name": "j"}, "status": {"jobId": job_id, "rayClusterName": "rc"}})


CLUSTER_OBJ = _json(
    {"metadata": {"name": "rc"}, "status": {"head": {"serviceName": "rc-head-svc"}}}
)


class FakeCall:
    """A KubeCall answering from ``answers`` by path (the rest 404), recording each path."""

    def __init__(self, answers: Mapping[str, KubeAnswer]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(
        self, method: str, path: str, *, body: Any = None, params: Mapping[str, str] | None = None
    ) -> KubeAnswer:
        self.calls.append(path)
        return self.answers.get(path, KubeAnswer(404, b'{"kind":"Status","code":404}'))


async def test_a_caller_who_may_not_get_the_rayjob_gets_403_and_nothing_else_is_asked() -> None:
    caller = FakeCall({JOB: FORBIDDEN})
    answer = await driver_log(caller, "ns", "j")
    assert answer.status == 403 and json.loads(answer.body)["message"] == "no"
    assert caller.calls == [JOB]


async def test_the_log_through_the_service_proxy_as_the_caller() -> None:
    caller = FakeCall({JOB: _job(), CLUSTER: CLUSTER_OBJ, LOGS: _json({"logs": "hello\nbye\n"})})
    answer = await driver_log(caller, "ns", "j")
    assert answer.status == 200
    body = json.loads(answer.body)
    assert (body["log"], body["truncated"], body["jobId"]) == ("hello\nbye\n", False, "j-1")
    assert caller.calls == [JOB, CLUSTER, LOGS]


async def test_only_the_last_64_kib_from_a_line_start() -> None:
    lines = [f"line {i:06d} " + "x" * 90 for i in range(3000)]  # ~300 KiB
    logs = _json({"logs": "\n".join(lines) + "\n"})
    caller = FakeCall({JOB: _job(), CLUSTER: CLUSTER_OBJ, LOGS: logs})
    body = json.loads((await driver_log(caller, "ns", "j")).body)
    assert body["truncated"] is True
    assert len(body["log"].encode()) <= TAIL_BYTES
    assert body["log"].startswith("line ") and body["log"].endswith(lines[-1] + "\n")


async def test_a_refused_proxy_read_is_passed_back() -> None:
    caller = FakeCall({JOB: _job(), CLUSTER: CLUSTER_OBJ, LOGS: FORBIDDEN})
    assert (await driver_log(caller, "ns", "j")).status == 403


async def test_no_ray_job_yet_reads_as_pending() -> None:
    caller = FakeCall({JOB: _json({"metadata": {"name": "j"}, "status": {}})})
    body = json.loads((await driver_log(caller, "ns", "j")).body)
    assert body["pending"] is True and body["log"] == ""
    assert caller.calls == [JOB]


@pytest.mark.parametrize("job_id", ["../../secrets", "a/b", "a?b=c", "x\r\nEvil: 1", ".."])
async def test_a_job_id_that_is_no_plain_name_is_never_sent(job_id: str) -> None:
    caller = FakeCall({JOB: _job(job_id), CLUSTER: CLUSTER_OBJ})
    answer = await driver_log(caller, "ns", "j")
    assert answer.status == 409
    assert caller.calls == [JOB]


@pytest.mark.parametrize(
    ("namespace", "name", "token", "status"),
    [
        ("ns", "..", "t", 400),
        ("..", "j", "t", 400),
        ("ns", "a%0D%0AX-Evil:%201", "t", 400),
        ("ns", "Upper", "t", 400),
        ("ns", "j", "", 401),
    ],
)
async def test_hostile_names_are_refused_unsent_and_a_token_is_needed(
    server: str, namespace: str, name: str, token: str, status: int
) -> None:
    url = f"{server}/dashboard/api/namespaces/{namespace}/rayjobs/{name}/log"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as session,
        session.get(aiohttp.client.URL(url, encoded=True), headers=headers) as r,
    ):
        assert r.status == status  # the upstream behind is dead: a call would answer 502
