"""KubeRay ``handleSuspend``: ``suspend: true`` stages Suspending (status blocks reset) in one
status write, deletes every RayCluster and Service of the RayService in later passes, then
Suspended; ``suspend: false`` on a Suspended RayService resumes it (Ready and UpgradeInProgress
back to Initializing, with a fresh transition time for the initializing timeout)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kuberay.controllers.rayservice import status as S
from kuberay.controllers.rayservice.children import ChildReconciler
from kuberay.controllers.rayservice.context import Ctx
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import Result
from kuberay.reconcile.clock import format_time as rfc3339

__all__ = ["handle_suspend", "suspend_operative"]


async def handle_suspend(
    ctx: Ctx,
    children: ChildReconciler,
    rs: Obj,
    also_delete: Callable[[Obj], Awaitable[bool]] | None = None,
) -> Result:
    """KubeRay ``handleSuspend``: Suspending (status reset) -> delete children (and what
    ``also_delete`` deletes, e.g. the Gateway and HTTPRoute; it returns True when nothing
    remained) -> Suspended; Suspended and ``suspend: false`` -> resumed
    (Ready/UpgradeInProgress Initializing)."""
    now = rfc3339(ctx.now())
    status = rs["status"]
    suspend = bool(k8s.spec(rs).get("suspend"))
    if S.is_true(rs, S.SUSPENDED):
        if not suspend:
            status["observedGeneration"] = rs["metadata"].get("generation", 0)
            S.set_cond(
                rs,
                S.SUSPENDED,
                False,
                S.RESUMED,
                "Spec.Suspend is false; RayService has resumed.",
                now,
            )
            msg = "RayService is initializing after resuming from suspend."
            conds = S.conditions_of(rs)
            conds[:] = [c for c in conds if c.get("type") not in (S.READY, S.UPGRADE_IN_PROGRESS)]
            S.set_cond(rs, S.READY, False, S.INITIALIZING, msg, now)
            S.set_cond(rs, S.UPGRADE_IN_PROGRESS, False, S.INITIALIZING, msg, now)
        return Result()
    if not S.is_true(rs, S.SUSPENDING):
        if not suspend:
            return Result()
        status["observedGeneration"] = rs["metadata"].get("generation", 0)
        S.set_cond(
            rs,
            S.SUSPENDING,
            True,
            S.SUSPEND_REQUESTED,
            "Spec.Suspend is true; will delete all Kubernetes resources owned by this RayService.",
            now,
        )
        S.set_cond(rs, S.READY, False, S.SUSPEND_IN_PROGRESS, "RayService is suspending.", now)
        S.set_cond(
            rs,
            S.UPGRADE_IN_PROGRESS,
            False,
            S.SUSPEND_IN_PROGRESS,
            "No upgrade in progress.",
            now,
        )
        S.set_cond(
            rs,
            S.ROLLBACK_IN_PROGRESS,
            False,
            S.SUSPEND_IN_PROGRESS,
            "No rollback in progress.",
            now,
        )
        status["activeServiceStatus"] = {}
        status["pendingServiceStatus"] = {}
        status["numServeEndpoints"] = 0
        status.pop("serviceStatus", None)
        return Result(requeue_after=ctx.settings.requeue_seconds)
    deleted = await children.delete_owned(rs)
    if also_delete is not None:
        deleted = await also_delete(rs) and deleted
    if not deleted:
        S.set_cond(
            rs,
            S.SUSPENDING,
            True,
            S.SUSPEND_IN_PROGRESS,
            "Waiting for all Kubernetes resources owned by this RayService to be deleted.",
            now,
        )
        return Result(requeue_after=ctx.settings.requeue_seconds)
    done = "All owned resources have been deleted."
    S.set_cond(rs, S.SUSPENDING, False, S.SUSPEND_COMPLETE, done, now)
    S.set_cond(rs, S.SUSPENDED, True, S.SUSPEND_COMPLETE, done, now)
    S.set_cond(rs, S.READY, False, S.SUSPEND_COMPLETE, "RayService is suspended.", now)
    S.set_cond(rs, S.UPGRADE_IN_PROGRESS, False, S.SUSPEND_COMPLETE, "No upgrade in progress.", now)
    S.set_cond(
        rs, S.ROLLBACK_IN_PROGRESS, False, S.SUSPEND_COMPLETE, "No rollback in progress.", now
    )
    return Result(requeue_after=ctx.settings.requeue_seconds)


def suspend_operative(rs: Obj) -> bool:
    """Suspending or Suspended is True: the suspend state machine owns this pass."""
    return S.is_true(rs, S.SUSPENDING) or S.is_true(rs, S.SUSPENDED)
