"""GCS fault tolerance with Redis: the cleanup finalizer (KubeRay's Redis-FT flow).

While a cluster with Redis-backed GCS FT lives, it carries the finalizer
``ray.io/gcs-ft-redis-cleanup-finalizer`` (added on the first pass, before
anything else). When it is deleted: all Ray pods are deleted; once the head pod
is gone a ``<cluster>-redis-cleanup`` Job wipes the cluster's Redis storage
namespace; when that Job finishes (Complete or Failed) the finalizer is
removed. A deletion stuck longer than ``ray.io/gcs-ft-deletion-timeout``
seconds (default 300) is force-finished with a ``ForceDeletedStuckCluster``
Warning naming the Redis storage namespace left behind. A failed Job creation is
retried with the queue's exponential backoff. The embedded (RocksDB) backend
needs none of this: a stale finalizer is simply removed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json

from kuberay.api.v1 import constants as C
from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
from kuberay.api.v1.rules import is_gcs_fault_tolerance_embedded, is_gcs_fault_tolerance_enabled
from kuberay.controllers.builders.gcs_ft import external_storage_namespace
from kuberay.controllers.raycluster.context import Ctx
from kuberay.controllers.raycluster.redis_cleanup_job import build_redis_cleanup_job
from kuberay.gocompat.gotime import format_go_duration, parse_rfc3339
from kuberay.gocompat.goutil import go_atoi
from kuberay.kube import ApiError, Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, RequeueError, Result

FINALIZER = C.GCS_FAULT_TOLERANCE_REDIS_CLEANUP_FINALIZER
DEFAULT_DELETION_TIMEOUT = 300.0
HEAD_TERMINATION_REQUEUE = 10.0


def deletion_timeout(cluster: Obj) -> float:
    """``ray.io/gcs-ft-deletion-timeout`` when ``strconv.Atoi`` reads a positive integer
    from it, else 300 s (KubeRay ``getGCSFTDeletionTimeout``)."""
    raw = k8s.annotations(cluster).get(C.RAY_CLUSTER_GCS_FT_DELETION_TIMEOUT_ANNOTATION)
    try:
        value = go_atoi(raw) if isinstance(raw, str) else 0
    except ValueError:
        return DEFAULT_DELETION_TIMEOUT
    return float(value) if value > 0 else DEFAULT_DELETION_TIMEOUT


def age_text(seconds: float) -> str:
    """A deletion's age in the event text: whole seconds as Go prints a ``time.Duration``
    (``45s``, ``5m3s``, ``1h0m7s``)."""
    return format_go_duration(max(0, int(seconds)) * 1_000_000_000)


async def _set_finalizers(ctx: Ctx, cluster: Obj, finalizers: list[str]) -> None:
    """Patch the finalizers (pinned to the resourceVersion); ``cluster`` takes the
    patched metadata, so the caller knows the version this write produced."""
    meta = cluster["metadata"]
    updated = await ctx.client.patch(
        API_VERSION,
        KIND_RAYCLUSTER,
        meta["name"],
        {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}},
        meta["namespace"],
    )
    cluster["metadata"] = updated["metadata"]


def _job_finished(job: Obj) -> bool:
    for c in k8s.status(job).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed", "FailureTarget") and c.get("status") == "True":
            return True
    return False


async def reconcile_gcs_ft_finalizer(ctx: Ctx, cluster: Obj) -> Result | None:
    """Run the finalizer flow; a Result means "stop this pass and return it"."""
    meta = cluster["metadata"]
    finalizers: list[str] = list(meta.get("finalizers") or [])
    deleting = bool(meta.get("deletionTimestamp"))
    if is_gcs_fault_tolerance_embedded(cluster):
        if deleting and FINALIZER in finalizers:
            await _set_finalizers(ctx, cluster, [f for f in finalizers if f != FINALIZER])
            return Result()
        return None
    if not (
        is_gcs_fault_tolerance_enabled(cluster) and ctx.settings.options.enable_gcs_ft_redis_cleanup
    ):
        return None
    requeue = ctx.settings.error_requeue_seconds
    if not deleting:
        if FINALIZER in finalizers:
            return None
        with contextlib.suppress(Conflict):
            await _set_finalizers(ctx, cluster, [*finalizers, FINALIZER])
        return Result(requeue_after=requeue)
    if FINALIZER not in finalizers:
        return None

    ns = meta["namespace"]
    pods = ctx.children("v1", "Pod", cluster)
    for pod in pods:
        labels = pod["metadata"].get("labels") or {}
        if labels.get(C.RAY_NODE_TYPE_LABEL_KEY) in (C.HEAD_NODE, C.WORKER_NODE) and not pod[
            "metadata"
        ].get("deletionTimestamp"):
            await ctx.delete_pod(pod)
    heads = [
        p
        for p in pods
        if (p["metadata"].get("labels") or {}).get(C.RAY_NODE_TYPE_LABEL_KEY) == C.HEAD_NODE
    ]
    age = (dt.datetime.now(dt.UTC) - parse_rfc3339(meta["deletionTimestamp"])).total_seconds()
    timeout = deletion_timeout(cluster)
    if age >= timeout:
        await _set_finalizers(ctx, cluster, [f for f in finalizers if f != FINALIZER])
        ctx.event(
            cluster,
            WARNING,
            "ForceDeletedStuckCluster",
            f"Force-removed GCS FT finalizer after {age_text(age)} due to Redis cleanup "
            f"timeout; Redis storage namespace {json.dumps(external_storage_namespace(cluster))} "
            "may need manual cleanup",
            "Cleanup",
        )
        return Result()
    if heads:
        return Result(requeue_after=min(HEAD_TERMINATION_REQUEUE, max(0.5, timeout - age)))
    jobs = ctx.children(
        "batch/v1", "Job", cluster, **{C.RAY_NODE_TYPE_LABEL_KEY: C.REDIS_CLEANUP_NODE}
    )
    if jobs:
        if _job_finished(jobs[0]):
            await _set_finalizers(ctx, cluster, [f for f in finalizers if f != FINALIZER])
            return Result()
        return Result(requeue_after=min(requeue, max(0.5, timeout - age)))
    job = build_redis_cleanup_job(cluster, ctx.settings.options, ctx.settings.features)
    job["metadata"]["namespace"] = ns
    try:
        await ctx.create_if_absent(job)
    except (ApiError, NotFound) as exc:
        where = f"{ns}/{job['metadata']['name']}"
        ctx.event(
            cluster,
            WARNING,
            "FailedToCreateRedisCleanupJob",
            f"Failed to create Redis cleanup Job {where}, {exc}",
            "Create",
        )
        # Raised, not a fixed requeue: retried with the queue's per-item exponential
        # backoff, as controller-runtime does when KubeRay returns the error.
        raise RequeueError(f"failed to create Redis cleanup Job {where}: {exc}") from exc
    else:
        ctx.event(
            cluster,
            NORMAL,
            "CreatedRedisCleanupJob",
            f"Created Redis cleanup Job {ns}/{job['metadata']['name']}",
            "Create",
        )
    return Result(requeue_after=min(requeue, max(0.5, timeout - age)))
