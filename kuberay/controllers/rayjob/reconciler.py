"""The RayJob controller's reconcile entry point (KubeRay ``RayJobReconciler.Reconcile``).

One pass: skip RayJobs another controller manages (``spec.managedBy``); a RayJob being
deleted gets its Ray job stopped (through the dashboard poller, bounded by its call timeout)
unless it already ended, and loses ``ray.io/rayjob-finalizer`` once the stop was answered,
whatever the answer (KubeRay's order); validate (an invalid RayJob is
set ``ValidationFailed`` with a Warning Event naming the field, nothing else happens);
``observe`` the world from the cache and the poller; ``decide`` (the pure state machine
of :mod:`~kuberay.controllers.rayjob.machine`); lay the "why it waits" message over the
decided status (:mod:`~kuberay.controllers.rayjob.why`); run the decided actions; write
the status when KubeRay would (or when the wait message changed), with a Warning Event
when the new message names why the dashboard's status checks fail or why the RayJob gave up
on them, and the Event of the stop of a RayJob that gave up (:mod:`~.giveup`; the poller's
memory of that stop is dropped once told, and at each new attempt); requeue (3 s in the live
states).

No pass waits on a Ray dashboard: :class:`~kuberay.controllers.rayjob.context.JobDashboard`
returns the latest finished call, and the poller enqueues the RayJob when a call ends
with a new outcome.

Read-your-writes: until the cache shows the status this process last wrote (or
anything newer), a pass starts from the object that write returned, so a pass that
starts right after a write neither repeats a transition nor sends a write bound to
fail with 409.
"""

from __future__ import annotations

import copy

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1 import validation  # its validators load on first use
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER, KIND_RAYJOB
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rules import effective_rayjob_spec, managed_elsewhere
from kuberay.controllers.builders.names import (
    generate_ray_cluster_name,
    generate_ray_job_id,
    head_service_name,
)
from kuberay.controllers.dashboard import JobNotFound
from kuberay.controllers.dashboard.poller import STOP_JOB as STOP_CALL
from kuberay.controllers.dashboard.target import DashboardTarget
from kuberay.controllers.rayjob import machine as M
from kuberay.controllers.rayjob import status as S
from kuberay.controllers.rayjob import why
from kuberay.controllers.rayjob.children import Children
from kuberay.controllers.rayjob.context import Ctx, ObjectKey
from kuberay.controllers.rayjob.world import STOP_ABSENT, STOP_DONE, StopReport
from kuberay.kube import Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, Request, RequeueError, Result
from kuberay.reconcile.clock import format_time
from kuberay.reconcile.written import WrittenObjects

log = structlog.get_logger("kuberay.rayjob")


#: Events about the Ray job of a RayJob that gave up (beyond KubeRay, see ``giveup``).
STOPPED_RAY_JOB = "StoppedRayJob"
NO_RAY_JOB_TO_STOP = "NoRayJobToStop"
FAILED_TO_STOP_RAY_JOB = "FailedToStopRayJob"
STOP_ACTION = "StopJob"

#: Event reason per validation error source.
_INVALID_REASON = {
    "metadata": "InvalidRayJobMetadata",
    "status": "InvalidRayJobStatus",
}


class RayJobReconciler:
    """Reconciles one RayJob per call; safe to run with many workers."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        # (namespace, name) -> (resourceVersions our writes replaced, the object returned)
        self._written = WrittenObjects()

    # ----- entry point --------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result:
        key = (request.namespace, request.name)
        cached = self.ctx.cached(API_VERSION, KIND_RAYJOB, request.namespace, request.name)
        if cached is None:
            self._written.forget(*key)
            self.ctx.dashboard.forget(key)
            if self.ctx.metrics is not None:
                self.ctx.metrics.forget(request.namespace, request.name)
            return Result()
        managed_by = managed_elsewhere(cached)
        if managed_by:
            log.debug("skipping RayJob managed by another controller", managed_by=managed_by)
            return Result()
        job = copy.deepcopy(self._written.freshest(cached))
        if job["metadata"].get("deletionTimestamp"):
            return await self.finalize(job, key)
        if await self.reject_if_invalid(job):
            return Result()

        if (k8s.status(job).get("jobDeploymentStatus") or S.NEW) == S.NEW:
            self.forget_stop(key)  # a new attempt (a retry may reuse the job id)
        world = self.observe(job, key)
        decision = M.decide(job, world, self.ctx.settings)
        old = k8s.status(job)
        new = decision.status if decision.persist and decision.error is None else copy.deepcopy(old)
        message_changed = why.overlay(job, old, new, world, decision.error)

        staged = copy.deepcopy(job)
        staged["status"] = decision.status
        children = Children(self.ctx, staged, world)
        try:
            await children.run(decision.actions)
        except Conflict:
            log.debug("a write conflicted; retrying on a fresher object")
            return Result(requeue=True)
        if children.patched is not None:  # the finalizer patch moved the resourceVersion
            self._written.remember(job["metadata"]["resourceVersion"], children.patched)
            job["metadata"] = copy.deepcopy(children.patched["metadata"])

        gated = decision.persist and decision.error is None and S.kuberay_write_needed(old, new)
        if gated or message_changed:
            if S.is_job_deployment_terminal(new.get("jobDeploymentStatus") or ""):
                new["endTime"] = format_time(world.now)
            if not await self.write_status(job, new):
                return Result(requeue=True)
            self.warn_about_cause(job, old, new, world)
            if decision.stop_report is not None and gated:
                self.report_stop(job, decision.stop_report)
                self.forget_stop(key)  # told; a deletion may try again
            if self.ctx.metrics is not None and gated:
                self.ctx.metrics.observe_transition(job, old, new, world.now)
        if decision.error is not None:
            raise RequeueError(decision.error)
        return Result(requeue_after=decision.requeue_after)

    def warn_about_cause(self, job: Obj, old: Obj, new: Obj, world: M.World) -> None:
        """After a status write: the Warning Event naming why status checks fail or why the
        RayJob gave up (:func:`~kuberay.controllers.rayjob.why.warning_event`; only when the
        message changed, so a steady failure is not re-announced every pass)."""
        event = why.warning_event(old, new, world)
        if event is None:
            return
        reason, message = event
        meta = job["metadata"]
        log.warning(
            "RayJob status checks fail",
            namespace=meta["namespace"],
            name=meta["name"],
            reason=reason,
            cause=message,
        )
        self.ctx.event(job, WARNING, reason, message, "CheckJobStatus")

    def report_stop(self, job: Obj, report: StopReport) -> None:
        """The Event saying what became of the Ray job of a RayJob that gave up (recorded
        with the status write that says it, so once per give-up): Normal ``StoppedRayJob``
        or ``NoRayJobToStop``, Warning ``FailedToStopRayJob``."""
        meta = job["metadata"]
        log.info(
            "RayJob gave up; stopping its Ray job ended",
            namespace=meta["namespace"],
            name=meta["name"],
            outcome=report.outcome,
        )
        if report.outcome == STOP_DONE:
            self.ctx.event(job, NORMAL, STOPPED_RAY_JOB, report.message, STOP_ACTION)
        elif report.outcome == STOP_ABSENT:
            self.ctx.event(job, NORMAL, NO_RAY_JOB_TO_STOP, report.message, STOP_ACTION)
        else:
            self.ctx.event(job, WARNING, FAILED_TO_STOP_RAY_JOB, report.message, STOP_ACTION)

    def forget_stop(self, key: ObjectKey) -> None:
        """Drop the poller's memory of this RayJob's Ray job stop (other calls are kept)."""
        self.ctx.dashboard.forget(key, keep=lambda call: call != STOP_CALL)

    # ----- deletion -----------------------------------------------------------------------
    async def finalize(self, job: Obj, key: ObjectKey) -> Result:
        """Stop a Ray job that has not ended, then drop our finalizer. The stop runs in the
        poller (one attempt, bounded by its timeout) and the finalizer stays until it was
        answered, so an operator that shuts down meanwhile leaves the stop to the next one;
        a failed stop is logged and the finalizer removed anyway (as KubeRay)."""
        meta = job["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if S.RAYJOB_FINALIZER not in finalizers:
            self.ctx.dashboard.forget(key)
            return Result()
        status = k8s.status(job)
        if not S.is_job_terminal(status.get("jobStatus") or ""):
            cluster = self._cluster(job)
            job_id = status.get("jobId")
            if cluster is not None and job_id:
                target = DashboardTarget.from_cluster(cluster)
                stopped = self.ctx.dashboard.stop_job(key, target, job_id)
                if stopped is None:  # in flight: the poller enqueues us when it ends
                    log.debug("waiting for the Ray job to stop", job_id=job_id)
                    return Result(requeue_after=self.ctx.settings.requeue_seconds)
                if stopped.error is None:
                    log.info("stopped the Ray job", job_id=job_id)
                elif isinstance(stopped.error, JobNotFound):
                    log.info("no Ray job to stop: the dashboard does not know it", job_id=job_id)
                else:
                    log.warning(
                        "failed to stop the Ray job; removing the finalizer anyway",
                        job_id=job_id,
                        error=str(stopped.error),
                    )
            else:
                log.info("no Ray job to stop", job_id=job_id, cluster=status.get("rayClusterName"))
        try:
            await self.ctx.client.patch(
                API_VERSION,
                KIND_RAYJOB,
                meta["name"],
                {
                    "metadata": {
                        "finalizers": [f for f in finalizers if f != S.RAYJOB_FINALIZER],
                        "resourceVersion": meta["resourceVersion"],
                    }
                },
                meta["namespace"],
            )
        except NotFound:
            pass
        except Conflict:
            return Result(requeue=True)
        self.ctx.dashboard.forget(key)
        return Result()

    # ----- validation ---------------------------------------------------------------------
    async def reject_if_invalid(self, job: Obj) -> bool:
        """Validate as KubeRay does (metadata, spec, status); on the first error set
        ``ValidationFailed`` and record a Warning naming the field. True if invalid."""
        errors = [
            e
            for e in validation.validate_rayjob(job, gates=dict(self.ctx.settings.features))
            if e.source != "webhook"
        ]
        if not errors:
            return False
        first = errors[0]
        reason = _INVALID_REASON.get(first.source, "InvalidRayJobSpec")
        text = str(first)
        meta = job["metadata"]
        old = k8s.status(job)
        if (
            old.get("jobDeploymentStatus") == S.VALIDATION_FAILED
            and (old.get("message") or "") == text
        ):
            return True
        self.ctx.event(
            job, WARNING, reason, f"{meta['namespace']}/{meta['name']}: {text}", "Validate"
        )
        new = copy.deepcopy(old)
        new["jobDeploymentStatus"] = S.VALIDATION_FAILED
        new["reason"] = S.REASON_VALIDATION_FAILED
        new["message"] = text
        await self.write_status(job, new)
        return True

    # ----- world --------------------------------------------------------------------------
    def _cluster(self, job: Obj) -> Obj | None:
        name = k8s.status(job).get("rayClusterName")
        if not name:
            return None
        return self.ctx.cached(API_VERSION, KIND_RAYCLUSTER, job["metadata"]["namespace"], name)

    def observe(self, job: Obj, key: ObjectKey) -> M.World:
        """Everything :func:`~kuberay.controllers.rayjob.machine.decide` reads: the effective
        spec, cached children and the poller's latest results (asking it for a fresh job
        lookup; it sends nothing else: submissions and stops are decided actions)."""
        meta = job["metadata"]
        ns, name = meta["namespace"], meta["name"]
        effective = effective_rayjob_spec(k8s.spec(job))
        status = k8s.status(job)
        state = status.get("jobDeploymentStatus") or S.NEW
        mode = effective.submission_mode
        cluster = self._cluster(job)
        head_service = head_pod = None
        if cluster is not None:
            head_service = self.ctx.cached("v1", "Service", ns, head_service_name(cluster))
            pods = self.ctx.cache.list(
                "v1",
                "Pod",
                ns,
                labels={
                    C.RAY_CLUSTER_LABEL_KEY: cluster["metadata"]["name"],
                    C.RAY_NODE_TYPE_LABEL_KEY: C.HEAD_NODE,
                },
            )
            head_pod = pods[0] if pods else None
        submitter = None
        if mode == JobSubmissionMode.K8S_JOB_MODE:
            submitter = self.ctx.cached("batch/v1", "Job", ns, name)
        job_info = submit = None
        age = 0.0
        job_id = status.get("jobId")
        rayjob_service = self.ctx.cached("v1", "Service", ns, f"{name}-head-svc")
        stop = None
        if cluster is not None and job_id:
            target = DashboardTarget.from_cluster(cluster)
            stop = self.ctx.dashboard.stop_outcome(key, target, job_id)
        if state == S.RUNNING and cluster is not None and job_id:
            target = DashboardTarget.from_cluster(cluster)
            partial = M.World(
                now=self.ctx.now(), spec=effective, submitter=submitter, head_pod=head_pod
            )
            # Once the submitter ended, what happened to the job matters now: look again.
            max_age = 0.0 if M.submitter_finished(partial) else 3.0
            job_info = self.ctx.dashboard.job_info(key, target, job_id, max_age=max_age)
            if job_info is not None:
                age = max(0.0, self.ctx.monotonic() - job_info.finished_at)
            if (
                mode == JobSubmissionMode.HTTP_MODE
                and job_info is not None
                and isinstance(job_info.error, JobNotFound)
            ):  # decide (re)submits it: what became of the last submission
                submit = self.ctx.dashboard.submit_outcome(key, target, job_id)
        fresh = state == S.NEW
        return M.World(
            now=self.ctx.now().replace(microsecond=0),
            spec=effective,
            cluster=cluster,
            cluster_head_service=head_service,
            submitter=submitter,
            head_pod=head_pod,
            rayjob_service=rayjob_service,
            job_info=job_info,
            job_info_age=age,
            submit=submit,
            stop=stop,
            new_job_id=generate_ray_job_id(name) if fresh else "",
            new_cluster_name=generate_ray_cluster_name(name) if fresh else "",
        )

    # ----- status -------------------------------------------------------------------------
    async def write_status(self, job: Obj, status: Obj) -> bool:
        """Replace the status (pinned to the resourceVersion); False on a 409 conflict
        (the pass is retried on the fresher object)."""
        meta = job["metadata"]
        body = {
            "apiVersion": API_VERSION,
            "kind": KIND_RAYJOB,
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "resourceVersion": meta["resourceVersion"],
            },
            "status": S.go_job_status(status),
        }
        try:
            updated = await self.ctx.client.update_status(body)
        except NotFound:
            return True
        except Conflict:
            log.debug("status write conflicted; retrying on a fresher object")
            return False
        self._written.remember(meta["resourceVersion"], updated)
        job["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]
        job["status"] = k8s.status(updated)
        return True


__all__ = ["RayJobReconciler"]
