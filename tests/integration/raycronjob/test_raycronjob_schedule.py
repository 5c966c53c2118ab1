"""RayCronJob scheduling on the real apiserver: of missed ticks only the most recent
starts (as Kubernetes' CronJob, unlike KubeRay's backfill) with a Warning Event;
suspend; time zones; the template copied field for field."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from typing import Any

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.helpers import events_for, wait_event_reasons
from tests.integration.raycronjob.conftest import CronOperator
from tests.integration.raycronjob.helpers import (
    create_and_settle,
    cronjob,
    expected_name,
    next_daily,
    next_minute,
    parse,
    rayjobs_of,
    settle,
    utc_stamp,
)


async def _last_schedule_times(
    client: Client, namespace: str, name: str, rv: str, into: list[str]
) -> None:
    """Append every distinct ``status.lastScheduleTime`` the apiserver reports for
    ``name`` after ``rv``, in order."""
    async for event in client.watch(
        "ray.io/v1",
        "RayCronJob",
        namespace,
        resource_version=rv,
        field_selector=f"metadata.name={name}",
    ):
        stamp = (event.object.get("status") or {}).get("lastScheduleTime")
        if event.type == "MODIFIED" and stamp and (not into or into[-1] != stamp):
            into.append(stamp)


async def test_missed_ticks_start_only_the_most_recent_with_a_warning(
    cron_operator: CronOperator, kclient: Client, namespace: str
) -> None:
    op = cron_operator
    created = await create_and_settle(op, kclient, cronjob("missed", namespace, "* * * * *"))
    ticks = [next_minute(parse(created["metadata"]["creationTimestamp"]))]
    for _ in range(5):
        ticks.append(ticks[-1] + dt.timedelta(minutes=1))
    seen: list[str] = []
    watch = asyncio.create_task(
        _last_schedule_times(
            kclient, namespace, "missed", created["metadata"]["resourceVersion"], seen
        )
    )
    try:
        # The operator was down for six ticks.
        op.at(ticks[-1] + dt.timedelta(seconds=20), "missed")
        (event,) = [
            e
            for e in await wait_event_reasons(kclient, namespace, "missed", {"MissedSchedules"})
            if e["reason"] == "MissedSchedules"
        ]
        await settle(op, "missed")
        await eventually(lambda: bool(seen), timeout=60, message="lastScheduleTime written")
    finally:
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
    jobs = await rayjobs_of(kclient, namespace, "missed")
    assert [j["metadata"]["name"] for j in jobs] == [expected_name("missed", ticks[-1])]
    assert jobs[0]["metadata"]["annotations"]["ray.io/cronjob-scheduled-timestamp"] == (
        utc_stamp(ticks[-1])
    )
    # lastScheduleTime jumped straight to the latest tick, in one status write.
    assert seen == [utc_stamp(ticks[-1])]
    assert event["type"] == "Warning"
    assert event["message"] == (
        f"6 start times were missed ({utc_stamp(ticks[0])} to {utc_stamp(ticks[-1])}); "
        f"created a RayJob only for the most recent one, {utc_stamp(ticks[-1])}, and "
        "skipped the 5 earlier ones"
    )
    assert event["reportingComponent"] == "raycronjob-controller"
    # Nothing more is due: a further pass writes nothing.
    writes = op.client.stats.writes
    await settle(op, "missed")
    assert op.client.stats.writes == writes


async def test_suspend_creates_nothing_and_resume_starts_only_the_latest_missed_tick(
    cron_operator: CronOperator, kclient: Client, namespace: str
) -> None:
    op = cron_operator
    created = await create_and_settle(
        op, kclient, cronjob("paused", namespace, "* * * * *", suspend=True)
    )
    first = next_minute(parse(created["metadata"]["creationTimestamp"]))
    op.at(first + dt.timedelta(minutes=1, seconds=10), "paused")  # two ticks are due
    (event,) = await wait_event_reasons(kclient, namespace, "paused", {"SuspendedRayCronJob"})
    assert event["type"] == "Normal"
    assert event["message"] == "RayCronJob suspended, no new RayJobs will be created"
    assert event["reportingComponent"] == "raycronjob-controller"
    await settle(op, "paused")
    assert await rayjobs_of(kclient, namespace, "paused") == []
    status = (await kclient.get("ray.io/v1", "RayCronJob", "paused", namespace)).get("status")
    assert not (status or {}).get("lastScheduleTime")
    # Still suspended: no further Event write either.
    writes = op.client.stats.writes
    await settle(op, "paused")
    assert op.client.stats.writes == writes

    resume = {"spec": {"suspend": False}}
    await kclient.patch("ray.io/v1", "RayCronJob", "paused", resume, namespace)

    async def one() -> list[dict[str, Any]]:
        jobs = await rayjobs_of(kclient, namespace, "paused")
        assert len(jobs) == 1, jobs
        return jobs

    jobs = await eventually(one, timeout=60, message="the latest missed tick")
    assert [j["metadata"]["name"] for j in jobs] == [
        expected_name("paused", first + dt.timedelta(minutes=1))
    ]
    events = await wait_event_reasons(kclient, namespace, "paused", {"MissedSchedules"})
    (missed,) = [e for e in events if e["reason"] == "MissedSchedules"]
    assert missed["type"] == "Warning"
    assert missed["message"].startswith("2 start times were missed")

    # Suspended again: the existing RayJobs are left alone.
    pause = {"spec": {"suspend": True}}
    await kclient.patch("ray.io/v1", "RayCronJob", "paused", pause, namespace)

    async def suspended_twice() -> bool:
        events = await events_for(kclient, namespace, "paused")
        notes = [e for e in events if e["reason"] == "SuspendedRayCronJob"]
        # A repeat within the aggregation window is the first Event's series.
        return sum(int((e.get("series") or {}).get("count") or 1) for e in notes) == 2

    await eventually(suspended_twice, timeout=60, message="second SuspendedRayCronJob")
    op.at(first + dt.timedelta(minutes=5), "paused")
    await settle(op, "paused")
    after = await rayjobs_of(kclient, namespace, "paused")
    assert [j["metadata"]["uid"] for j in after] == [j["metadata"]["uid"] for j in jobs]


async def test_time_zone_decides_the_tick(
    cron_operator: CronOperator, kclient: Client, namespace: str
) -> None:
    op = cron_operator
    # 09:30 in Kolkata (UTC+5:30, no DST) is 04:00 UTC.
    obj = cronjob("kolkata", namespace, "30 9 * * *", timeZone="Asia/Kolkata")
    created = await create_and_settle(op, kclient, obj)
    tick = next_daily(
        parse(created["metadata"]["creationTimestamp"]), 9, 30, dt.timedelta(hours=5, minutes=30)
    )
    assert (tick.hour, tick.minute) == (4, 0)
    # A minute before the tick: nothing yet.
    op.at(tick - dt.timedelta(minutes=1), "kolkata")
    await settle(op, "kolkata")
    assert await rayjobs_of(kclient, namespace, "kolkata") == []
    op.at(tick, "kolkata")  # due exactly at the tick

    async def created_at_tick() -> dict[str, Any]:
        (job,) = await rayjobs_of(kclient, namespace, "kolkata")
        return job

    job = await eventually(created_at_tick, timeout=60, message="RayJob at 04:00Z")
    assert job["metadata"]["name"] == expected_name("kolkata", tick)
    stamp = job["metadata"]["annotations"]["ray.io/cronjob-scheduled-timestamp"]
    assert stamp == utc_stamp(tick) and stamp.endswith("T04:00:00Z")


async def test_template_fields_reach_the_rayjob_verbatim(
    cron_operator: CronOperator, kclient: Client, namespace: str
) -> None:
    op = cron_operator
    obj = cronjob("verbatim", namespace, "@hourly")
    template = obj["spec"]["jobTemplate"]
    template.update(
        entrypointNumCpus=0.5,
        entrypointResources='{"custom": 1}',
        runtimeEnvYAML="pip:\n  - requests\n",
        activeDeadlineSeconds=600,
        metadata={"team": "ml"},
        submitterConfig={"backoffLimit": 2},
        submitterPodTemplate={
            "metadata": {"labels": {"submitter": "yes"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "submit",
                        "image": "rayproject/ray:2.52.0",
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                        "terminationMessagePolicy": "FallbackToLogsOnError",
                    }
                ],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    )
    head = template["rayClusterSpec"]["headGroupSpec"]
    head["rayStartParams"] = {"num-cpus": "0", "dashboard-host": "0.0.0.0"}
    head["template"]["metadata"] = {"annotations": {"a": "b"}}
    head["template"]["spec"]["containers"][0]["resizePolicy"] = [
        {"resourceName": "cpu", "restartPolicy": "NotRequired"}
    ]
    created = await create_and_settle(op, kclient, obj)
    stored_template = created["spec"]["jobTemplate"]
    assert stored_template["submitterPodTemplate"]["spec"]["tolerations"]  # kept by the CRD
    tick = parse(created["metadata"]["creationTimestamp"]).replace(
        minute=0, second=0, microsecond=0
    ) + dt.timedelta(hours=1)
    op.at(tick + dt.timedelta(seconds=5), "verbatim")

    async def job() -> dict[str, Any]:
        (found,) = await rayjobs_of(kclient, namespace, "verbatim")
        return found

    rayjob = await eventually(job, timeout=60, message="RayJob")
    assert rayjob["spec"] == stored_template
