"""KubeRay's RayCronJob samples end to end: the RayJob a tick creates is driven by the
RayJob controller (same namespace) to Complete/SUCCEEDED while we play the kubelet, the
Job controller and Ray, as tests/integration/rayjob does."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import AsyncIterator, Callable

import pytest

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.raycronjob.conftest import CronOperator
from tests.integration.raycronjob.helpers import (
    create_and_settle,
    next_daily,
    next_minute,
    parse,
    rayjobs_of,
    sample,
)
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import finish_submitter, wait_job, wait_state
from tests.integration.rayjob.test_rayjob_samples import documents, play_kubelet, pod_count
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples  # KubeRay's RayCronJob samples

Tick = Callable[[dt.datetime], dt.datetime]


def every_minute(t: dt.datetime) -> dt.datetime:
    return next_minute(t)


def taipei_2145(t: dt.datetime) -> dt.datetime:
    # "45 21 * * *" in Asia/Taipei (UTC+8, no DST): 13:45 UTC.
    return next_daily(t, 21, 45, dt.timedelta(hours=8))


@pytest.fixture
async def rayjob_operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[None]:
    """The RayCluster and RayJob controllers, watching the RayCronJob's namespace."""
    async with start_operator(kclient, namespace):
        yield


@pytest.fixture
async def dashboard() -> AsyncIterator[FakeDashboard]:
    host = f"127.{random.randint(20, 250)}.{random.randint(0, 255)}.{random.randint(2, 250)}"
    async with FakeDashboard(host, 8265) as fake:
        yield fake


@pytest.mark.parametrize(
    ("file", "first_tick"),
    [("ray-cronjob.sample.yaml", every_minute), ("ray-cronjob-timezone.sample.yaml", taipei_2145)],
)
async def test_sample_rayjob_reaches_complete(
    cron_operator: CronOperator,
    rayjob_operator: None,
    kclient: Client,
    namespace: str,
    dashboard: FakeDashboard,
    file: str,
    first_tick: Tick,
) -> None:
    for other in documents(file):
        if other["kind"] != "RayCronJob":
            other["metadata"]["namespace"] = namespace
            await kclient.create(other)
    obj = sample(file, namespace)
    name = obj["metadata"]["name"]
    created = await create_and_settle(cron_operator, kclient, obj)
    tick = first_tick(parse(created["metadata"]["creationTimestamp"]))
    cron_operator.at(tick + dt.timedelta(seconds=30), name)

    async def the_rayjob() -> dict[str, object] | None:
        jobs = await rayjobs_of(kclient, namespace, name)
        return jobs[0] if jobs else None

    job_name = str((await eventually(the_rayjob, timeout=60))["metadata"]["name"])  # type: ignore[index]
    job = await wait_job(
        kclient, namespace, job_name, lambda j: bool((j.get("status") or {}).get("rayClusterName"))
    )
    cluster = job["status"]["rayClusterName"]
    want = pod_count(obj["spec"]["jobTemplate"]["rayClusterSpec"])
    await play_kubelet(kclient, namespace, cluster, want, dashboard)

    job = await wait_state(kclient, namespace, job_name, "Running")
    dashboard.add_job(job["status"]["jobId"], status="SUCCEEDED")
    await wait_job(
        kclient, namespace, job_name, lambda j: j["status"].get("jobStatus") == "SUCCEEDED"
    )
    await finish_submitter(kclient, namespace, job_name)
    job = await wait_state(kclient, namespace, job_name, "Complete")
    assert job["status"]["jobStatus"] == "SUCCEEDED" and job["status"]["succeeded"] == 1
    assert job["metadata"]["labels"]["ray.io/cronjob-name"] == name
