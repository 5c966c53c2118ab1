"""KubeRay's RayCronJob samples on the real apiserver: each creates its RayJob at the
injected tick, with KubeRay's name, label, annotation, owner reference and the
template verbatim; ``status.lastScheduleTime`` follows; nothing more until the next
tick, and a pass over that unchanged world writes nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from kuberay.kube import Client
from tests.helpers import eventually, wait_quiet
from tests.integration.raycronjob.conftest import CronOperator
from tests.integration.raycronjob.helpers import (
    create_and_settle,
    expected_name,
    next_daily,
    next_minute,
    parse,
    rayjobs_of,
    sample,
    settle,
    utc_stamp,
)
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples  # KubeRay's RayCronJob samples

Tick = Callable[[dt.datetime], dt.datetime]


def every_minute(t: dt.datetime) -> dt.datetime:
    return next_minute(t)


def taipei_2145(t: dt.datetime) -> dt.datetime:
    # "45 21 * * *" in Asia/Taipei (UTC+8, no DST): 13:45 UTC.
    return next_daily(t, 21, 45, dt.timedelta(hours=8))


@pytest.mark.parametrize(
    ("file", "first_tick"),
    [("ray-cronjob.sample.yaml", every_minute), ("ray-cronjob-timezone.sample.yaml", taipei_2145)],
)
async def test_sample_creates_its_rayjob_at_the_tick(
    cron_operator: CronOperator, kclient: Client, namespace: str, file: str, first_tick: Tick
) -> None:
    op = cron_operator
    obj = sample(file, namespace)
    name = obj["metadata"]["name"]
    created = await create_and_settle(op, kclient, obj)
    assert await rayjobs_of(kclient, namespace, name) == []  # the clock is a day behind

    tick = first_tick(parse(created["metadata"]["creationTimestamp"]))
    op.at(tick + dt.timedelta(seconds=30), name)

    async def one_rayjob() -> list[dict[str, object]]:
        jobs = await rayjobs_of(kclient, namespace, name)
        assert len(jobs) == 1, jobs
        return jobs

    (job,) = await eventually(one_rayjob, timeout=60, message="the tick's RayJob")
    stored = await kclient.get("ray.io/v1", "RayCronJob", name, namespace)
    meta = job["metadata"]
    assert meta["name"] == expected_name(name, tick)
    assert meta["labels"] == {"ray.io/cronjob-name": name}
    assert meta["annotations"] == {"ray.io/cronjob-scheduled-timestamp": utc_stamp(tick)}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCronJob",
            "name": name,
            "uid": stored["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert job["spec"] == stored["spec"]["jobTemplate"]
    assert job["spec"]["entrypoint"] == "python /home/ray/samples/sample_code.py"

    async def last_schedule() -> bool:
        cj = await kclient.get("ray.io/v1", "RayCronJob", name, namespace)
        return (cj.get("status") or {}).get("lastScheduleTime") == utc_stamp(tick)

    await eventually(last_schedule, timeout=60, message="status.lastScheduleTime")

    # The next tick is not due by the clock: a pass over this world writes nothing.
    await wait_quiet(lambda: op.client.stats.writes, quiet=2.0, timeout=60)
    writes = op.client.stats.writes
    for _ in range(2):
        await settle(op, name)
    assert op.client.stats.writes == writes
    assert [j["metadata"]["name"] for j in await rayjobs_of(kclient, namespace, name)] == [
        meta["name"]
    ]
