"""The NetworkPolicy controller's reconcile (KubeRay ``NetworkPolicyController.Reconcile``).

Per pass over a RayCluster (gone, being deleted, or ``spec.managedBy`` another controller:
nothing): without ``spec.networkPolicy``, delete every policy labelled with the cluster that
the cluster controls; otherwise the named steps ``reconcile_head_policy``,
``reconcile_worker_policies`` (spec order) and ``delete_stale_policies``, stopping at the
first error.

Each desired policy (see :mod:`.builders`) is created when absent (Event
``CreatedNetworkPolicy``); a policy of that name this cluster does not control is left alone
with a Warning ``NetworkPolicyNameCollision`` and the pass fails (retried with backoff, so
the policy appears once the name is free); a controlled one is updated only when its spec
(ports without a protocol counting as TCP) or labels differ (``UpdatedNetworkPolicy``).
Stale policies -- controlled by the cluster, labelled with it, not desired -- are deleted
(``DeletedNetworkPolicy``). Failures record ``FailedTo{Create,Update,Delete}NetworkPolicy``.

Unlike KubeRay, which POSTs every desired policy on every pass and reads the live one on
AlreadyExists, existence is read from the informer cache first, so a pass over an unchanged
world sends no request at all. A 409 on update (stale cache) requeues quietly.
"""

from __future__ import annotations

import structlog

from kuberay.api.v1.constants import API_VERSION, FIELD_MANAGER, KIND_RAYCLUSTER
from kuberay.api.v1.rules import managed_elsewhere
from kuberay.controllers.networkpolicy.builders import (
    NETWORK_POLICY_API_VERSION,
    NETWORK_POLICY_KIND,
    build_head_policy,
    build_worker_group_policy,
    policy_needs_update,
)
from kuberay.controllers.networkpolicy.context import CLUSTER_INDEX, Ctx
from kuberay.kube import ApiError, Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, Request, Result
from kuberay.reconcile.children import ensure

log = structlog.get_logger("kuberay.networkpolicy")


class NetworkPolicyError(Exception):
    """A step failed; the pass is retried with backoff (KubeRay returns the error)."""


class _StaleCache(Exception):
    """An update lost a race with a newer write: requeue without logging an error."""


def _controlled_by(obj: Obj, cluster: Obj) -> bool:
    uid = cluster["metadata"].get("uid")
    refs = k8s.meta(obj).get("ownerReferences") or []
    return any(r.get("controller") is True and r.get("uid") == uid for r in refs)


def _key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"


class NetworkPolicyReconciler:
    """Reconciles the NetworkPolicies of one RayCluster per call."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    async def reconcile(self, request: Request) -> Result:
        cluster = self.ctx.cache.get(API_VERSION, KIND_RAYCLUSTER, request.namespace, request.name)
        if cluster is None:
            return Result()  # its policies go with it (owner references)
        meta = k8s.meta(cluster)
        if meta.get("deletionTimestamp"):
            return Result()
        spec = k8s.spec(cluster)
        managed_by = managed_elsewhere(cluster)
        if managed_by:
            log.info("skipping RayCluster managed by a custom controller", managed_by=managed_by)
            return Result()
        try:
            if spec.get("networkPolicy") is None:
                await self.delete_stale_policies(cluster, set())
                return Result()
            desired = await self.reconcile_head_policy(cluster)
            desired |= await self.reconcile_worker_policies(cluster)
            await self.delete_stale_policies(cluster, desired)
        except _StaleCache as exc:
            log.debug("stale NetworkPolicy in the cache; requeued", detail=str(exc))
            return Result(requeue=True)
        return Result()

    # ----- steps ------------------------------------------------------------------------
    async def reconcile_head_policy(self, cluster: Obj) -> set[str]:
        """Create or update ``<cluster>-head``; its name."""
        policy = build_head_policy(cluster)
        await self._create_or_update(cluster, policy)
        return {policy["metadata"]["name"]}

    async def reconcile_worker_policies(self, cluster: Obj) -> set[str]:
        """Create or update ``<cluster>-workers-<group>`` per group; their names."""
        names: set[str] = set()
        for group in k8s.spec(cluster).get("workerGroupSpecs") or []:
            policy = build_worker_group_policy(cluster, str(group.get("groupName") or ""))
            names.add(policy["metadata"]["name"])
            await self._create_or_update(cluster, policy)
        return names

    async def delete_stale_policies(self, cluster: Obj, desired: set[str]) -> None:
        """Delete the policies labelled with the cluster, controlled by it, not in
        ``desired`` (all of them when ``desired`` is empty)."""
        meta = cluster["metadata"]
        labelled = self.ctx.cache.list(
            NETWORK_POLICY_API_VERSION,
            NETWORK_POLICY_KIND,
            index=(CLUSTER_INDEX, f"{meta['namespace']}/{meta['name']}"),
        )
        for policy in sorted(labelled, key=lambda p: str(p["metadata"]["name"])):
            name = policy["metadata"]["name"]
            if name in desired:
                continue
            if not _controlled_by(policy, cluster):
                log.debug("NetworkPolicy not owned by this RayCluster; not deleting", policy=name)
                continue
            try:
                await self.ctx.client.delete(
                    NETWORK_POLICY_API_VERSION,
                    NETWORK_POLICY_KIND,
                    name,
                    meta["namespace"],
                    preconditions={"uid": policy["metadata"]["uid"]},
                )
            except (NotFound, Conflict):  # Conflict: the uid precondition (a new object)
                continue
            except ApiError as exc:
                self.ctx.event(
                    cluster,
                    WARNING,
                    "FailedToDeleteNetworkPolicy",
                    f"Failed to delete NetworkPolicy {meta['namespace']}/{name}: {exc}",
                    "Delete",
                )
                raise NetworkPolicyError(f"delete NetworkPolicy {name}: {exc}") from exc
            log.info("deleted NetworkPolicy", policy=name)
            self.ctx.event(
                cluster,
                NORMAL,
                "DeletedNetworkPolicy",
                f"Deleted NetworkPolicy {meta['namespace']}/{name}",
                "Delete",
            )

    # ----- helpers ----------------------------------------------------------------------
    async def _create_or_update(self, cluster: Obj, desired: Obj) -> None:
        meta = desired["metadata"]
        existing = self.ctx.cache.get(
            NETWORK_POLICY_API_VERSION, NETWORK_POLICY_KIND, meta["namespace"], meta["name"]
        )
        if existing is None:
            try:
                done = await ensure(self.ctx.client, desired, field_manager=FIELD_MANAGER)
            except ApiError as exc:
                self.ctx.event(
                    cluster,
                    WARNING,
                    "FailedToCreateNetworkPolicy",
                    f"Failed to create NetworkPolicy {_key(desired)}: {exc}",
                    "Create",
                )
                raise NetworkPolicyError(f"create NetworkPolicy {_key(desired)}: {exc}") from exc
            if not done.created:
                existing = await self._live(meta["namespace"], meta["name"])
                if existing is None:
                    raise _StaleCache(f"{_key(desired)} vanished while being created")
            else:
                log.info("created NetworkPolicy", policy=meta["name"])
                self.ctx.event(
                    cluster,
                    NORMAL,
                    "CreatedNetworkPolicy",
                    f"Created NetworkPolicy {_key(desired)}",
                    "Create",
                )
                return
        if not _controlled_by(existing, cluster):
            self.ctx.event(
                cluster,
                WARNING,
                "NetworkPolicyNameCollision",
                f"NetworkPolicy {_key(desired)} already exists and is not owned by this "
                "RayCluster, network isolation will not be applied. Rename the existing "
                "NetworkPolicy or use a different RayCluster name to avoid the collision",
                "Validate",
            )
            raise NetworkPolicyError(
                f"NetworkPolicy {_key(desired)} already exists and is not owned by this RayCluster"
            )
        updated = policy_needs_update(existing, desired)
        if updated is None:
            return
        updated.setdefault("apiVersion", NETWORK_POLICY_API_VERSION)
        updated.setdefault("kind", NETWORK_POLICY_KIND)
        try:
            await self.ctx.client.update(updated, field_manager=FIELD_MANAGER)
        except Conflict as exc:
            raise _StaleCache(f"{_key(desired)}: {exc}") from exc
        except ApiError as exc:
            self.ctx.event(
                cluster,
                WARNING,
                "FailedToUpdateNetworkPolicy",
                f"Failed to update NetworkPolicy {_key(desired)}: {exc}",
                "Update",
            )
            raise NetworkPolicyError(f"update NetworkPolicy {_key(desired)}: {exc}") from exc
        log.info("updated NetworkPolicy", policy=meta["name"])
        self.ctx.event(
            cluster,
            NORMAL,
            "UpdatedNetworkPolicy",
            f"Updated NetworkPolicy {_key(desired)}",
            "Update",
        )

    async def _live(self, namespace: str, name: str) -> Obj | None:
        try:
            obj = await self.ctx.client.get(
                NETWORK_POLICY_API_VERSION, NETWORK_POLICY_KIND, name, namespace
            )
        except NotFound:
            return None
        return obj
