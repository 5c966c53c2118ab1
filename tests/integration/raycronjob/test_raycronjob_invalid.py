"""An invalid RayCronJob on the real apiserver: one Warning Event
``InvalidRayCronJobSpec`` naming the field, no RayJob, no status, and nothing more
while it stays invalid; fixed, it schedules."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.helpers import wait_event_reasons
from tests.integration.raycronjob.conftest import CronOperator
from tests.integration.raycronjob.helpers import (
    create_and_settle,
    cronjob,
    next_minute,
    parse,
    rayjobs_of,
    settle,
)

LONG_NAME = "c" * 37
SUSPENDED_NO_SHUTDOWN = {"entrypoint": "x", "suspend": True, "shutdownAfterJobFinishes": False}


@pytest.mark.parametrize(
    ("name", "spec", "note"),
    [
        (
            "bad-schedule",
            {"schedule": "invalid"},
            "spec.schedule: invalid cron schedule: expected exactly 5 fields, found 1: [invalid]",
        ),
        (
            "minute-60",
            {"schedule": "60 * * * *"},
            "spec.schedule: invalid cron schedule: end of range (60) above maximum (59): 60",
        ),
        (
            "tz-in-schedule",
            {"schedule": "TZ=UTC * * * * *"},
            "spec.schedule: cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ),
        (
            "mars",
            {"timeZone": "Mars/Olympus"},
            "spec.timeZone: invalid time zone: unknown time zone Mars/Olympus",
        ),
        (
            LONG_NAME,
            {},
            "metadata.name: RayCronJob name should be no more than 36 characters",
        ),
        (
            "bad-template",
            {"jobTemplate": SUSPENDED_NO_SHUTDOWN},
            "spec.jobTemplate.suspend: invalid RayJob template: The RayJob spec is invalid: a "
            "RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended",
        ),
    ],
)
async def test_invalid_spec_warns_and_creates_nothing(
    cron_operator: CronOperator,
    kclient: Client,
    namespace: str,
    name: str,
    spec: dict[str, Any],
    note: str,
) -> None:
    op = cron_operator
    obj = cronjob(name, namespace, "* * * * *")
    obj["spec"].update(spec)
    created = await create_and_settle(op, kclient, obj)
    op.at(parse(created["metadata"]["creationTimestamp"]) + dt.timedelta(hours=1), name)
    (event,) = await wait_event_reasons(kclient, namespace, name, {"InvalidRayCronJobSpec"})
    assert event["type"] == "Warning"
    assert event["message"] == f"{namespace}/{name}: {note}"
    assert event["reportingComponent"] == "raycronjob-controller"
    await settle(op, name)
    assert await rayjobs_of(kclient, namespace, name) == []
    stored = await kclient.get("ray.io/v1", "RayCronJob", name, namespace)
    assert "lastScheduleTime" not in (stored.get("status") or {})
    # Still invalid: another pass writes nothing, not even a repeat of the Event.
    writes = op.client.stats.writes
    await settle(op, name)
    assert op.client.stats.writes == writes


async def test_a_fixed_schedule_starts_scheduling(
    cron_operator: CronOperator, kclient: Client, namespace: str
) -> None:
    op = cron_operator
    created = await create_and_settle(op, kclient, cronjob("fixme", namespace, "61 * * * *"))
    first = next_minute(parse(created["metadata"]["creationTimestamp"]))
    op.at(first + dt.timedelta(seconds=1), "fixme")
    await wait_event_reasons(kclient, namespace, "fixme", {"InvalidRayCronJobSpec"})
    await kclient.patch(
        "ray.io/v1", "RayCronJob", "fixme", {"spec": {"schedule": "* * * * *"}}, namespace
    )

    async def one() -> bool:
        return len(await rayjobs_of(kclient, namespace, "fixme")) == 1

    await eventually(one, timeout=60, message="RayJob once the schedule is valid")
