"""Builders for RayJob state-machine unit tests: a RayJob, the world it sees, settings."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import attrs

from kuberay.api.v1.rules import effective_rayjob_spec
from kuberay.controllers.dashboard import DashboardUnreachable, JobInfo, JobNotFound
from kuberay.controllers.dashboard.poller import Observed
from kuberay.controllers.rayjob import machine as M
from kuberay.controllers.rayjob.context import RayJobSettings
from kuberay.controllers.rayjob.machine import World

NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)
NS = "ns"
NAME = "job"
CLUSTER = "job-abcde"


def ago(seconds: float) -> str:
    """An apiserver timestamp ``seconds`` before NOW."""
    return (NOW - dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rayjob(status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    base_spec: dict[str, Any] = {
        "entrypoint": "python -c 'print(1)'",
        "submissionMode": "K8sJobMode",
        "shutdownAfterJobFinishes": True,
        "rayClusterSpec": {
            "rayVersion": "2.52.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": "ray"}]}},
            },
        },
    }
    base_spec.update(copy.deepcopy(spec))
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "uid": "u1",
            "resourceVersion": "1",
            "finalizers": ["ray.io/rayjob-finalizer"],
        },
        "spec": base_spec,
        "status": copy.deepcopy(status or {}),
    }


def running(**extra: Any) -> dict[str, Any]:
    """The status of a RayJob that reached Running."""
    status: dict[str, Any] = {
        "jobDeploymentStatus": "Running",
        "jobStatus": "RUNNING",
        "jobId": "job-xyz",
        "rayClusterName": CLUSTER,
        "dashboardURL": f"{CLUSTER}-head-svc.{NS}.svc.cluster.local:8265",
        "startTime": ago(60),
        "failed": 0,
        "succeeded": 0,
    }
    status.update(extra)
    return status


def cluster(state: str = "ready", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": CLUSTER, "namespace": NS, "resourceVersion": "5", **meta},
        "spec": {"workerGroupSpecs": [{"groupName": "g"}]},
        "status": {"state": state, "desiredWorkerReplicas": 1} if state else {},
    }


def head_service() -> dict[str, Any]:
    return {
        "metadata": {"name": f"{CLUSTER}-head-svc", "namespace": NS},
        "spec": {"ports": [{"name": "dashboard", "port": 8265}, {"name": "gcs", "port": 6379}]},
    }


def rayjob_service(selected: str = CLUSTER) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{NAME}-head-svc", "namespace": NS},
        "spec": {"selector": {"ray.io/cluster": selected}, "clusterIP": "None"},
    }


def submitter(
    *conditions: tuple[str, float], failed_reason: str = "", **meta: Any
) -> dict[str, Any]:
    """A submitter Job with ``(type, seconds ago)`` True conditions."""
    conds = [
        {
            "type": ctype,
            "status": "True",
            "lastTransitionTime": ago(age),
            "reason": failed_reason if ctype == "Failed" else "",
            "message": "boom" if ctype == "Failed" else "",
        }
        for ctype, age in conditions
    ]
    return {
        "metadata": {"name": NAME, "namespace": NS, **meta},
        "status": {"conditions": conds},
    }


def head_pod(*container_statuses: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{CLUSTER}-head-x", "namespace": NS},
        "status": {"containerStatuses": list(container_statuses), **status},
    }


def info(status: str, message: str = "", end: int | None = None) -> Observed[JobInfo]:
    job = JobInfo(
        job_id=None,
        submission_id="job-xyz",
        status=status,
        message=message,
        error_type=None,
        start_time=1_700_000_000_000,
        end_time=end,
        entrypoint="python",
        metadata=None,
        runtime_env=None,
    )
    return Observed(value=job, error=None, finished_at=0.0)


def not_found() -> Observed[JobInfo]:
    return Observed(value=None, error=JobNotFound("job job-xyz does not exist"), finished_at=0.0)


def unreachable(text: str = "connection refused") -> Observed[JobInfo]:
    return Observed(value=None, error=DashboardUnreachable(text), finished_at=0.0)


def stopped() -> Observed[None]:
    """The dashboard stopped the job."""
    return Observed(value=None, error=None, finished_at=0.0)


def stop_failed(text: str = "connection refused") -> Observed[None]:
    return Observed(value=None, error=DashboardUnreachable(text), finished_at=0.0)


def stop_not_found() -> Observed[None]:
    return Observed(value=None, error=JobNotFound("job job-xyz does not exist"), finished_at=0.0)


def world(job: dict[str, Any] | None = None, **kw: Any) -> World:
    """The world of a pass over ``job`` (default: :func:`rayjob`); ``kw`` overrides fields."""
    kw.setdefault("spec", effective_rayjob_spec((job or rayjob())["spec"]))
    kw.setdefault("now", NOW)
    kw.setdefault("new_job_id", "job-jjjjj")
    kw.setdefault("new_cluster_name", "job-ccccc")
    return World(**kw)


def settings(**kw: Any) -> RayJobSettings:
    return RayJobSettings(**kw)


def decide(job: dict[str, Any], w: World, s: RayJobSettings) -> M.Decision:
    """:func:`~kuberay.controllers.rayjob.machine.decide` as a pass runs it: the world's
    effective spec is ``job``'s (the reconciler's ``observe`` computes it the same way)."""
    return M.decide(job, attrs.evolve(w, spec=effective_rayjob_spec(job["spec"])), s)
