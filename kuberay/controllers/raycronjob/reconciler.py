"""The RayCronJob controller's reconcile entry point (KubeRay's ``RayCronJobReconciler``).

One pass, in order (each a named step):

1. ``validate``: ``ValidateRayCronJobSpec`` (name ≤ 36 chars, no ``TZ``/``CRON_TZ`` in
   the schedule, a schedule robfig parses, a known time zone, a valid RayJob
   template). Invalid: a Warning Event ``InvalidRayCronJobSpec`` "<ns>/<name>: <the
   first error, naming its field>", nothing else, no requeue.
2. ``check_suspend``: ``spec.suspend: true``: a Normal Event ``SuspendedRayCronJob``,
   no RayJob, no requeue; existing RayJobs are left alone.
3. ``due_tick``: the schedule's next tick after ``status.lastScheduleTime`` (else
   after ``metadata.creationTimestamp``) in ``spec.timeZone`` (else the operator's
   local zone), see :mod:`~kuberay.controllers.raycronjob.ticks`. Still in the future
   by the injected clock: requeue after the gap, no write.
4. ``create_rayjob``: create the tick's RayJob (see
   :mod:`~kuberay.controllers.raycronjob.builder`); AlreadyExists counts as done, so
   one tick never gets two RayJobs.
5. ``record_schedule``: ``status.lastScheduleTime = tick`` (a merge patch of that one
   field on the status subresource, bound to the resourceVersion read, written only
   when it changes). Requeue at the tick after.

Missed ticks (the cronjob was suspended, or the operator down, across several ticks):
as Kubernetes' CronJob, and unlike KubeRay (which backfills every one of them, one
pass each: a ``*/5`` schedule suspended for a week would create about 2,000 RayJobs
on resume), only the most recent due tick gets a RayJob, and once its
``lastScheduleTime`` is written a Warning Event ``MissedSchedules`` says how many
start times were missed (see :data:`MISSED_REASON`; "too many missed start times" in
front when more than 100, as Kubernetes words it). RayCronJob has no
``startingDeadlineSeconds``, so the most recent tick starts however late it is (as a
CronJob without one). Finding that tick and the count takes bounded time, see
:mod:`~kuberay.controllers.raycronjob.missed`. RayJobs are never deleted (as KubeRay).

Events and idempotency. KubeRay records the two Events on every pass; our recorder
would turn each repeat into a write (a series patch), so a pass over an unchanged
world would not be write-free. Each is therefore recorded once per state: once per
(uid, generation, reason, message). A spec change that keeps the cronjob invalid or
suspended records it again, and so does an operator restart; label, annotation or
status changes do not.

Decisions where KubeRay is silent or odd: a cronjob being deleted
(``deletionTimestamp`` set) gets no new RayJobs; a schedule with no tick within
robfig's five-year search (``0 0 30 2 *``) creates nothing and is not requeued
(KubeRay would create a RayJob for Go's zero time, year 1). A status write that loses a
race (409) is retried with backoff and logged at info level. Any other failed write
propagates and is retried with the controller's backoff (KubeRay returns the error,
which controller-runtime also retries with backoff, ignoring its 3 s requeue).

Read-your-writes: until the cache shows this process's last status write, a pass
starts from the object that write returned, so it neither repeats a tick nor sends
a write bound to conflict.
"""

from __future__ import annotations

import copy
import datetime as dt
import math

import attrs
import structlog

from kuberay.api.v1.constants import API_VERSION, FIELD_MANAGER, KIND_RAYCRONJOB
from kuberay.api.v1.schedule import CronSchedule, load_go_location, parse_standard
from kuberay.api.v1.validation import validate_raycronjob
from kuberay.api.v1.validation.errors import first_error
from kuberay.controllers.raycronjob.builder import build_rayjob
from kuberay.controllers.raycronjob.context import Ctx
from kuberay.controllers.raycronjob.gotime import Zone
from kuberay.controllers.raycronjob.missed import count_ticks, latest_tick_unix
from kuberay.controllers.raycronjob.ticks import next_tick
from kuberay.gocompat.gotime import parse_rfc3339
from kuberay.kube import Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, Request, Result
from kuberay.reconcile.children import ensure
from kuberay.reconcile.clock import format_time as rfc3339
from kuberay.reconcile.written import WrittenObjects

log = structlog.get_logger("kuberay.raycronjob")

INVALID_SPEC_REASON = "InvalidRayCronJobSpec"
SUSPENDED_REASON = "SuspendedRayCronJob"
SUSPENDED_MESSAGE = "RayCronJob suspended, no new RayJobs will be created"
#: Warning Event reason when more than one tick was due and only the latest started.
MISSED_REASON = "MissedSchedules"
#: Kubernetes' CronJob warns "too many missed start times" beyond this many.
TOO_MANY_MISSED = 100

Key = tuple[str, str]


@attrs.frozen
class Due:
    """The tick to start now and how many were due (``missed`` > 1: the earlier ones
    are skipped; ``first`` is the oldest of them)."""

    tick: dt.datetime
    first: dt.datetime
    missed: int


@attrs.frozen
class Plan:
    """The parsed schedule of a valid cronjob: its grammar and its zone."""

    schedule: CronSchedule
    zone: Zone


def plan_of(cronjob: Obj) -> Plan:
    """The schedule and zone KubeRay's ``ParseStandard("TZ=<timeZone> <schedule>")``
    uses (``ValueError`` if invalid; validation has ruled that out)."""
    spec = k8s.spec(cronjob)
    time_zone = spec.get("timeZone")
    zone = None if time_zone is None else load_go_location(str(time_zone))
    return Plan(parse_standard(str(spec.get("schedule") or "")), zone)


def schedule_base(cronjob: Obj) -> dt.datetime:
    """``status.lastScheduleTime``, else ``metadata.creationTimestamp``."""
    last = k8s.status(cronjob).get("lastScheduleTime")
    return parse_rfc3339(str(last or cronjob["metadata"]["creationTimestamp"]))


class RayCronJobReconciler:
    """Reconciles one RayCronJob per call; safe to run with many workers."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        # (namespace, name) -> (uid, generation, reason, message) of the last Event
        # recorded for an invalid or suspended cronjob; see the module docstring.
        self._announced: dict[Key, tuple[str, int, str, str]] = {}
        # (namespace, name) -> (resourceVersions our status writes replaced, the object
        # the last write returned); see _freshest.
        self._written = WrittenObjects()

    # ----- entry point --------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result:
        key = (request.namespace, request.name)
        cached = self.ctx.cache.get(API_VERSION, KIND_RAYCRONJOB, request.namespace, request.name)
        if cached is None:
            self._announced.pop(key, None)
            self._written.forget(*key)
            return Result()
        cronjob = copy.deepcopy(self._written.freshest(cached))
        if not self.validate(cronjob) or self.check_suspend(cronjob):
            return Result()
        self._announced.pop(key, None)
        if cronjob["metadata"].get("deletionTimestamp"):
            return Result()
        plan = plan_of(cronjob)
        now = self.ctx.now()
        due, wait = self.due_tick(cronjob, plan, now)
        if due is None:
            return Result(requeue_after=wait) if wait else Result()
        await self.create_rayjob(cronjob, due.tick)
        if not await self.record_schedule(cronjob, due.tick):
            return Result(requeue=True)
        if due.missed > 1:
            self.warn_missed(cronjob, due)
        following = next_tick(plan.schedule, due.tick, plan.zone)
        if following is not None and following > now:
            return Result(requeue_after=(following - now).total_seconds())
        return Result()

    # ----- steps --------------------------------------------------------------------------
    def validate(self, cronjob: Obj) -> bool:
        """True if valid; else one Warning Event per distinct error (see module doc)."""
        error = first_error(
            validate_raycronjob(cronjob, gates=dict(self.ctx.settings.features)),
            "metadata",
            "spec",
        )
        if error is None:
            return True
        meta = cronjob["metadata"]
        message = f"{meta['namespace']}/{meta['name']}: {error}"
        log.info("invalid RayCronJob", error=str(error))
        self._announce(cronjob, WARNING, INVALID_SPEC_REASON, message, "Validate")
        return False

    def check_suspend(self, cronjob: Obj) -> bool:
        """True (and a Normal Event, once per state) when ``spec.suspend`` is true."""
        if k8s.spec(cronjob).get("suspend") is not True:
            return False
        log.debug("RayCronJob suspended, no new RayJobs will be created")
        self._announce(cronjob, NORMAL, SUSPENDED_REASON, SUSPENDED_MESSAGE, "Suspend")
        return True

    def due_tick(self, cronjob: Obj, plan: Plan, now: dt.datetime) -> tuple[Due | None, float]:
        """The tick to run now, if any (the most recent due one, with the count of all
        due ones); else (None, seconds until the next tick, 0 for never)."""
        base = schedule_base(cronjob)
        first = next_tick(plan.schedule, base, plan.zone)
        if first is None:
            log.info("schedule has no tick within five years; nothing to create")
            return None, 0.0
        if first > now:
            return None, (first - now).total_seconds()
        second = next_tick(plan.schedule, first, plan.zone)
        if second is None or second > now:
            return Due(first, first, 1), 0.0
        start = math.floor(base.timestamp())
        latest = latest_tick_unix(plan.schedule, start, now.timestamp(), plan.zone)
        assert latest is not None  # first <= now
        # At least two were due (robfig's walk and the count can differ by one only in
        # Lord Howe's half-hour DST).
        missed = max(count_ticks(plan.schedule, start, latest, plan.zone), 2)
        return Due(dt.datetime.fromtimestamp(latest, dt.UTC), first, missed), 0.0

    async def create_rayjob(self, cronjob: Obj, tick: dt.datetime) -> None:
        """Create the RayJob of ``tick``; one that already exists counts as created."""
        rayjob = build_rayjob(cronjob, tick)
        name = rayjob["metadata"]["name"]
        done = await ensure(self.ctx.client, rayjob, field_manager=FIELD_MANAGER)
        if not done.created:
            log.info("RayJob for this tick already exists", rayjob=name, tick=rfc3339(tick))
            return
        log.info("created RayJob", rayjob=name, tick=rfc3339(tick))

    async def record_schedule(self, cronjob: Obj, tick: dt.datetime) -> bool:
        """Write ``status.lastScheduleTime = tick`` if it differs; False when the write
        lost a race (the object changed since it was read) and the pass must rerun."""
        meta = cronjob["metadata"]
        stamp = rfc3339(tick)
        if k8s.status(cronjob).get("lastScheduleTime") == stamp:
            return True
        patch = {
            "metadata": {"resourceVersion": meta["resourceVersion"]},
            "status": {"lastScheduleTime": stamp},
        }
        try:
            updated = await self.ctx.client.patch_status(
                API_VERSION, KIND_RAYCRONJOB, meta["name"], patch, meta["namespace"]
            )
        except NotFound:
            return True
        except Conflict:
            log.info("RayCronJob changed while reconciling; retrying", tick=stamp)
            return False
        self._written.remember(meta["resourceVersion"], updated)
        return True

    def warn_missed(self, cronjob: Obj, due: Due) -> None:
        """The Warning Event of a pass that skipped ticks (after its status write, so
        once: the next pass finds nothing missed)."""
        prefix = "too many missed start times: " if due.missed > TOO_MANY_MISSED else ""
        message = (
            f"{prefix}{due.missed} start times were missed "
            f"({rfc3339(due.first)} to {rfc3339(due.tick)}); created a RayJob only for "
            f"the most recent one, {rfc3339(due.tick)}, and skipped the "
            f"{due.missed - 1} earlier ones"
        )
        log.info("missed ticks; starting only the most recent", missed=due.missed)
        self.ctx.event(cronjob, WARNING, MISSED_REASON, message, "Create")

    # ----- helpers ------------------------------------------------------------------------
    def _announce(self, cronjob: Obj, etype: str, reason: str, message: str, action: str) -> None:
        meta = cronjob["metadata"]
        key = (str(meta["namespace"]), str(meta["name"]))
        state = (str(meta.get("uid")), int(meta.get("generation") or 0), reason, message)
        if self._announced.get(key) == state:
            return
        self._announced[key] = state
        self.ctx.event(cronjob, etype, reason, message, action)


__all__ = [
    "INVALID_SPEC_REASON",
    "MISSED_REASON",
    "SUSPENDED_MESSAGE",
    "SUSPENDED_REASON",
    "TOO_MANY_MISSED",
    "Due",
    "Plan",
    "RayCronJobReconciler",
    "plan_of",
    "schedule_base",
]
