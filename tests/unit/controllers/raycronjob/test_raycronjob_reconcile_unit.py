"""KubeRay's CJ scenarios at exact instants (creation 2024-01-01T00:00Z, a fake clock),
with an in-memory apiserver standing in for the real one: what one pass creates,
writes, records and when it asks to run again."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest

from kuberay.controllers.raycronjob.context import Ctx, RayCronJobSettings
from kuberay.controllers.raycronjob.reconciler import RayCronJobReconciler
from kuberay.kube import AlreadyExists, Conflict
from kuberay.reconcile import Request, Result

Obj = dict[str, Any]
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
TEMPLATE = {
    "entrypoint": "python test.py",
    "shutdownAfterJobFinishes": True,
    "rayClusterSpec": {
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {"spec": {"containers": [{"name": "ray-head", "image": "ray"}]}},
        }
    },
}


class World:
    """One RayCronJob in a cache and an apiserver that enforces names and versions."""

    def __init__(self, **spec: Any) -> None:
        self.cronjob: Obj = {
            "apiVersion": "ray.io/v1",
            "kind": "RayCronJob",
            "metadata": {
                "name": "test-cronjob",
                "namespace": "ns",
                "uid": "uid-1",
                "generation": 1,
                "resourceVersion": "1",
                "creationTimestamp": "2024-01-01T00:00:00Z",
            },
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": copy.deepcopy(TEMPLATE), **spec},
        }
        self.rayjobs: dict[str, Obj] = {}
        self.writes: list[str] = []
        self.events: list[tuple[str, str, str, str]] = []
        self.now = T0
        self.stale_cache: Obj | None = None

    # cache
    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        assert (api_version, kind, namespace, name) == ("ray.io/v1", "RayCronJob", "ns", name)
        if name != "test-cronjob":
            return None
        return self.stale_cache if self.stale_cache is not None else self.cronjob

    # client
    async def create(self, obj: Obj, *, field_manager: str | None = None) -> Obj:
        self.writes.append(f"create {obj['metadata']['name']}")
        if obj["metadata"]["name"] in self.rayjobs:
            raise AlreadyExists(409, "AlreadyExists", "exists")
        self.rayjobs[obj["metadata"]["name"]] = copy.deepcopy(obj)
        return obj

    async def patch_status(
        self, api_version: str, kind: str, name: str, patch: Obj, namespace: str
    ) -> Obj:
        self.writes.append(f"status {patch['status']}")
        if patch["metadata"]["resourceVersion"] != self.cronjob["metadata"]["resourceVersion"]:
            raise Conflict(409, "Conflict", "stale")
        assert set(patch) == {"metadata", "status"} and set(patch["status"]) == {"lastScheduleTime"}
        self.cronjob = copy.deepcopy(self.cronjob)
        self.cronjob.setdefault("status", {}).update(patch["status"])
        meta = self.cronjob["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        return copy.deepcopy(self.cronjob)

    # recorder
    def event(self, obj: Obj, etype: str, reason: str, message: str, action: str = "") -> None:
        self.events.append((etype, reason, message, action))

    def reconciler(self) -> RayCronJobReconciler:
        ctx = Ctx(
            client=self,  # type: ignore[arg-type]
            cache=self,  # type: ignore[arg-type]
            recorder=self,  # type: ignore[arg-type]
            settings=RayCronJobSettings(now=lambda: self.now),
        )
        return RayCronJobReconciler(ctx)

    def last_schedule(self) -> str | None:
        status: Obj = self.cronjob.get("status") or {}
        return status.get("lastScheduleTime")


REQ = Request("ns", "test-cronjob")


async def test_cj01_first_tick_after_creation() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=5, seconds=30)
    result = await world.reconciler().reconcile(REQ)
    assert list(world.rayjobs) == ["test-cronjob-28401125"]
    job = world.rayjobs["test-cronjob-28401125"]
    assert job["spec"] == TEMPLATE
    assert job["metadata"]["annotations"] == {
        "ray.io/cronjob-scheduled-timestamp": "2024-01-01T00:05:00Z"
    }
    assert world.last_schedule() == "2024-01-01T00:05:00Z"
    assert result == Result(requeue_after=270.0)  # next tick 00:10, 4m30s away


async def test_cj02_not_yet_due_writes_nothing_and_waits_for_the_tick() -> None:
    world = World()
    world.cronjob["metadata"]["creationTimestamp"] = "2024-01-01T00:00:10Z"
    world.now = T0 + dt.timedelta(minutes=3)
    result = await world.reconciler().reconcile(REQ)
    assert world.writes == [] and world.events == []
    assert result == Result(requeue_after=120.0)


async def test_cj03_subsequent_ticks_use_last_schedule_time() -> None:
    world = World(suspend=False)
    world.cronjob["status"] = {"lastScheduleTime": "2024-01-01T00:05:00Z"}
    world.now = T0 + dt.timedelta(minutes=10, seconds=5)
    await world.reconciler().reconcile(REQ)
    assert list(world.rayjobs) == ["test-cronjob-28401130"]
    assert world.last_schedule() == "2024-01-01T00:10:00Z"


async def test_cj04_a_tick_reconciled_twice_gets_one_rayjob() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=6)
    rec = world.reconciler()
    await rec.reconcile(REQ)
    # Another process (or a lost status write) left lastScheduleTime behind.
    del world.cronjob["status"]
    world.cronjob["metadata"]["resourceVersion"] = "9"
    await RayCronJobReconciler(rec.ctx).reconcile(REQ)
    assert list(world.rayjobs) == ["test-cronjob-28401125"]
    assert world.writes.count("create test-cronjob-28401125") == 2  # AlreadyExists: fine
    assert world.last_schedule() == "2024-01-01T00:05:00Z"


async def test_cj05_missed_ticks_start_only_the_most_recent_and_warn() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=17)  # 00:05, 00:10 and 00:15 are due
    rec = world.reconciler()
    results = [await rec.reconcile(REQ) for _ in range(3)]
    assert list(world.rayjobs) == ["test-cronjob-28401135"]  # 00:15 only
    assert world.last_schedule() == "2024-01-01T00:15:00Z"
    assert world.events == [
        (
            "Warning",
            "MissedSchedules",
            "3 start times were missed (2024-01-01T00:05:00Z to 2024-01-01T00:15:00Z); "
            "created a RayJob only for the most recent one, 2024-01-01T00:15:00Z, and "
            "skipped the 2 earlier ones",
            "Create",
        )
    ]
    assert results == [Result(requeue_after=180.0)] * 3  # 00:20
    assert sum(w.startswith("create") for w in world.writes) == 1
    assert len(world.writes) == 2  # the RayJob and lastScheduleTime, once


async def test_a_week_suspended_resumes_with_one_rayjob_not_two_thousand() -> None:
    world = World(suspend=True)
    world.now = T0 + dt.timedelta(days=7, minutes=1)
    rec = world.reconciler()
    await rec.reconcile(REQ)
    world.cronjob["spec"]["suspend"] = False
    world.cronjob["metadata"]["generation"] = 2
    for _ in range(3):
        await rec.reconcile(REQ)
    assert list(world.rayjobs) == [f"test-cronjob-{28401120 + 7 * 24 * 60}"]
    assert world.last_schedule() == "2024-01-08T00:00:00Z"
    warning = [e for e in world.events if e[1] == "MissedSchedules"]
    assert [e[2] for e in warning] == [
        "too many missed start times: 2016 start times were missed "
        "(2024-01-01T00:05:00Z to 2024-01-08T00:00:00Z); created a RayJob only for the "
        "most recent one, 2024-01-08T00:00:00Z, and skipped the 2015 earlier ones"
    ]


async def test_one_late_tick_is_started_without_a_warning() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=9)  # only 00:05 is due, four minutes late
    await world.reconciler().reconcile(REQ)
    assert list(world.rayjobs) == ["test-cronjob-28401125"]
    assert world.events == []


async def test_cj10_an_unchanged_world_gets_no_write() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=6)
    rec = world.reconciler()
    await rec.reconcile(REQ)
    writes = list(world.writes)
    for _ in range(3):
        await rec.reconcile(REQ)
    assert world.writes == writes


async def test_a_stale_cache_after_our_own_write_does_not_repeat_the_tick() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=6)
    rec = world.reconciler()
    world.stale_cache = copy.deepcopy(world.cronjob)  # the cache never sees our writes
    await rec.reconcile(REQ)
    world.now = T0 + dt.timedelta(minutes=11)
    await rec.reconcile(REQ)
    assert list(world.rayjobs) == ["test-cronjob-28401125", "test-cronjob-28401130"]
    assert sum(w.startswith("create") for w in world.writes) == 2
    assert world.last_schedule() == "2024-01-01T00:10:00Z"


async def test_a_status_write_that_loses_a_race_retries() -> None:
    world = World()
    world.now = T0 + dt.timedelta(minutes=6)
    world.stale_cache = copy.deepcopy(world.cronjob)
    world.cronjob["metadata"]["resourceVersion"] = "5"  # someone else wrote meanwhile
    result = await world.reconciler().reconcile(REQ)
    assert result == Result(requeue=True)
    assert world.last_schedule() is None


async def test_cj06_suspend_records_one_event_per_state_and_creates_nothing() -> None:
    world = World(suspend=True)
    world.now = T0 + dt.timedelta(days=1)
    rec = world.reconciler()
    for _ in range(3):
        assert await rec.reconcile(REQ) == Result()
    assert world.rayjobs == {} and world.writes == []
    assert world.events == [
        (
            "Normal",
            "SuspendedRayCronJob",
            "RayCronJob suspended, no new RayJobs will be created",
            "Suspend",
        )
    ]
    world.cronjob["metadata"]["generation"] = 2  # an edit that keeps it suspended
    await rec.reconcile(REQ)
    assert len(world.events) == 2
    # Resumed a day later: the most recent tick only (2024-01-02T00:00Z).
    world.cronjob["spec"]["suspend"] = False
    world.cronjob["metadata"]["generation"] = 3
    await rec.reconcile(REQ)
    assert list(world.rayjobs) == [f"test-cronjob-{28401120 + 24 * 60}"]
    assert [e[1] for e in world.events][-1] == "MissedSchedules"
    # Suspended again later: announced again.
    world.cronjob["spec"]["suspend"] = True
    world.cronjob["metadata"]["generation"] = 4
    await rec.reconcile(REQ)
    assert [e[1] for e in world.events if e[1] != "MissedSchedules"] == ["SuspendedRayCronJob"] * 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"schedule": "invalid"},
            "ns/test-cronjob: spec.schedule: invalid cron schedule: "
            "expected exactly 5 fields, found 1: [invalid]",
        ),
        (
            {"schedule": "60 * * * *"},
            "ns/test-cronjob: spec.schedule: invalid cron schedule: "
            "end of range (60) above maximum (59): 60",
        ),
        (
            {"schedule": "TZ=UTC * * * * *"},
            "ns/test-cronjob: spec.schedule: cannot use TZ or "
            "CRON_TZ in schedule, use timeZone field instead",
        ),
        (
            {"timeZone": "Mars/Olympus"},
            "ns/test-cronjob: spec.timeZone: invalid time zone: unknown time zone Mars/Olympus",
        ),
        (
            {"timeZone": ""},
            "ns/test-cronjob: spec.timeZone: timeZone must not be empty "
            "string, omit the field to use the local time zone of the KubeRay operator",
        ),
    ],
)
async def test_cj08_cj09_invalid_spec_warns_once_and_creates_nothing(
    change: Obj, message: str
) -> None:
    world = World(**change)
    world.now = T0 + dt.timedelta(days=1)
    rec = world.reconciler()
    assert await rec.reconcile(REQ) == Result()
    assert await rec.reconcile(REQ) == Result()
    assert world.rayjobs == {} and world.writes == []
    assert world.events == [("Warning", "InvalidRayCronJobSpec", message, "Validate")]


async def test_cj09_long_name_and_bad_template() -> None:
    world = World()
    world.cronjob["spec"]["jobTemplate"]["suspend"] = True
    world.cronjob["spec"]["jobTemplate"]["shutdownAfterJobFinishes"] = False
    world.now = T0 + dt.timedelta(days=1)
    await world.reconciler().reconcile(REQ)
    assert world.rayjobs == {}
    ((etype, reason, message, _),) = world.events
    assert (etype, reason) == ("Warning", "InvalidRayCronJobSpec")
    assert message.startswith("ns/test-cronjob: spec.jobTemplate.suspend: invalid RayJob template")


async def test_a_cronjob_being_deleted_gets_no_new_rayjob() -> None:
    world = World()
    world.cronjob["metadata"]["deletionTimestamp"] = "2024-01-01T00:07:00Z"
    world.now = T0 + dt.timedelta(minutes=8)
    assert await world.reconciler().reconcile(REQ) == Result()
    assert world.writes == []


async def test_a_schedule_that_never_fires_creates_nothing() -> None:
    world = World(schedule="0 0 30 2 *")
    world.now = T0 + dt.timedelta(days=3000)
    assert await world.reconciler().reconcile(REQ) == Result()
    assert world.writes == [] and world.events == []


async def test_a_cronjob_recreated_under_the_same_name_is_announced_again() -> None:
    world = World(suspend=True)
    rec = world.reconciler()
    await rec.reconcile(REQ)
    world.cronjob["metadata"]["uid"] = "uid-2"
    await rec.reconcile(REQ)
    assert [e[1] for e in world.events] == ["SuspendedRayCronJob"] * 2
