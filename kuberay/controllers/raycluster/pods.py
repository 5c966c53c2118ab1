"""``reconcile_pods``: head and worker pods of one RayCluster (KubeRay's ``reconcilePods``).

Rules, in order: suspension deletes every pod; ``upgradeStrategy: Recreate`` deletes every pod
when the spec hash on the head pod no longer matches (unless the pod was stamped by another
operator version, whose annotations are then rewritten instead - the drop-in takeover path; a
failed rewrite is logged and the pass goes on); the pods of worker groups no longer in the spec
are deleted (beyond KubeRay, see :mod:`.removed_groups`); the head pod is deleted when terminal
and created when missing; per worker group, unhealthy pods are deleted (and nothing is created in
that pass), ``scaleStrategy.workersToDelete`` is honoured (and left in the spec for the
autoscaler), then the group is topped up or, without the autoscaler, scaled down.

Counting (KubeRay's ``diff``): every pod of the group counts as running, terminating ones
included, except those named in ``workersToDelete``. Scale-down victims come from that same
set, terminating pods first, so a pod stuck terminating (finalizer, long grace period, dead
node) stands in for a victim instead of costing a healthy one. A pod already terminating is
never deleted again, only awaited. New pods take the lowest replica index no existing pod
(terminating included) holds.

Multi-host groups are reconciled in whole replicas (pods sharing ``ray.io/worker-group-replica-
name``, terminating members included). Pods without that label - made by a KubeRay from before
replica names - are left alone: neither counted nor deleted (as KubeRay), so a takeover never
restarts a running slice.

Every create and delete is recorded in Expectations (keyed ``ns/cluster/group``; head group
""), and a group with pending expectations is left alone, so a stale cache never creates or
deletes a pod twice. Creations are awaited at most ``expectation_timeout``; deletions until the
pod has left the cache. Expectations of groups no longer in the spec are dropped once nothing
is pending. Every pod created carries its template's hash (:mod:`.templates`).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import (
    is_tls_enabled,
    num_of_hosts,
    worker_group_desired_replicas,
    workers_to_delete,
)
from kuberay.controllers.batchscheduler import BatchSchedulerError
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.controllers.builders.names import generate_ray_worker_replica_group_name
from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
from kuberay.controllers.common.pod_health import pod_state
from kuberay.controllers.common.pod_health import should_delete_pod as _should_delete_pod
from kuberay.controllers.common.replicas import (
    is_multi_host_indexing,
    lowest_free_indices,
    random_scale_down_allowed,
)
from kuberay.controllers.raycluster import conditions as cond
from kuberay.controllers.raycluster.context import Ctx, group_key
from kuberay.controllers.raycluster.mtls_gate import require_mtls_ready
from kuberay.controllers.raycluster.removed_groups import delete_removed_groups
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.controllers.raycluster.templates import stamp_template_hash
from kuberay.featuregates.kuberay_gates import RAY_CLUSTER_STATUS_CONDITIONS
from kuberay.kube import ApiError
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING

log = structlog.get_logger("kuberay.raycluster")

HEAD_GROUP = ""


def _labels(pod: Obj) -> dict[str, str]:
    return k8s.meta(pod).get("labels") or {}


def _pod_label(pod: Obj) -> str:
    meta = pod["metadata"]
    return str(meta.get("name") or meta.get("generateName") or "")


def _terminating(pod: Obj) -> bool:
    return bool(k8s.meta(pod).get("deletionTimestamp"))


def _replica_indices(pods: Iterable[Obj]) -> set[int]:
    out = set()
    for pod in pods:
        raw = _labels(pod).get(C.RAY_WORKER_REPLICA_INDEX_KEY)
        if raw is not None and raw.isdigit():
            out.add(int(raw))
    return out


def _victim_rank(pod: Obj) -> int:
    """Scale-down order: terminating pods, then pods not running yet, then running ones."""
    if _terminating(pod):
        return 0
    return 2 if k8s.status(pod).get("phase") == "Running" else 1


def should_delete_pod(pod: Obj, node_type: str) -> tuple[bool, str]:
    """KubeRay's ``shouldDeletePod``, except that a pod already terminating is left alone."""
    if _terminating(pod):
        return False, ""
    return _should_delete_pod(pod, node_type)


class PodReconciler:
    """One ``reconcile_pods`` pass over a cluster (a fresh instance per reconcile)."""

    def __init__(self, ctx: Ctx, cluster: Obj) -> None:
        self.ctx = ctx
        self.cluster = cluster
        self.meta = cluster["metadata"]
        self.spec: Obj = k8s.spec(cluster)
        self.ns = self.meta["namespace"]
        self.name = self.meta["name"]
        self.features = ctx.settings.features
        self.options = ctx.settings.options
        self._mtls_ready = False

    def _gate(self, name: str, default: bool) -> bool:
        return bool(self.features.get(name, default))

    async def _require_mtls_ready(self) -> None:
        """With TLS enabled, no pod is created before its certificates are (checked once
        per pass)."""
        if self._mtls_ready or not is_tls_enabled(self.cluster, self.features):
            return
        await require_mtls_ready(self.ctx, self.cluster)
        self._mtls_ready = True

    def _pods(self, **labels: str) -> list[Obj]:
        return self.ctx.children("v1", "Pod", self.cluster, **labels)

    def _satisfied(self, group: str) -> bool:
        key = group_key(self.cluster, group)
        pods = {p["metadata"]["name"] for p in self._pods()}
        self.ctx.expectations.observe(key, lambda n: n in pods)
        return self.ctx.expectations.satisfied(key)

    # ----- entry ----------------------------------------------------------------------------
    async def run(self) -> None:
        """Bring the cluster's pods to the desired state (raises ReconcileError)."""
        self._observe_all()
        self._forget_removed_groups()
        if await self._suspend():
            await self._release_batch_scheduler()
            return
        cluster_hash = ray_cluster_recreate_hash(self.cluster)
        if await self._recreate_upgrade(cluster_hash):
            return
        await delete_removed_groups(self.ctx, self.cluster)
        await self._submit_to_batch_scheduler()
        await self._reconcile_head(cluster_hash)
        for group in self.spec.get("workerGroupSpecs") or []:
            await self._reconcile_group(group)

    def _observe_all(self) -> None:
        """Settle every group's expectations against the cache on every pass, not only
        in the groups' own reconcile: suspension and Recreate delete pods without
        getting there, and a created pod deleted before any pass observed it would
        hold its group until the expectation TTL."""
        pods = {p["metadata"]["name"] for p in self._pods()}
        for owner in self.ctx.expectations.owners(group_key(self.cluster, "")):
            self.ctx.expectations.observe(owner, lambda n: n in pods)

    def _forget_removed_groups(self) -> None:
        """Drop the expectations of worker groups no longer in the spec once nothing is
        pending (deletions of a removed group's pods hold them until the pods are gone)."""
        prefix = group_key(self.cluster, "")
        groups = {HEAD_GROUP} | {
            g.get("groupName", "") for g in self.spec.get("workerGroupSpecs") or []
        }
        for owner in self.ctx.expectations.owners(prefix):
            if owner[len(prefix) :] not in groups and self.ctx.expectations.satisfied(owner):
                self.ctx.expectations.delete(owner)

    # ----- batch scheduler ------------------------------------------------------------------
    async def _submit_to_batch_scheduler(self) -> None:
        """KubeRay: the plugin prepares (e.g. the PodGroup) before any pod is created."""
        scheduler = self.ctx.scheduler
        if scheduler is None:
            return
        try:
            await scheduler.do_batch_scheduling_on_submission(self.cluster)
        except BatchSchedulerError as exc:
            raise ReconcileError(str(exc)) from exc

    async def _release_batch_scheduler(self) -> None:
        """Beyond KubeRay (its PR #5200): a suspended cluster's PodGroup stops reserving
        queue capacity."""
        scheduler = self.ctx.scheduler
        if scheduler is None:
            return
        try:
            await scheduler.cleanup_on_suspend(self.cluster)
        except BatchSchedulerError as exc:
            raise ReconcileError(str(exc)) from exc

    def _stamp(self, pod: Obj, group_name: str) -> None:
        if self.ctx.scheduler is not None:
            self.ctx.scheduler.add_metadata_to_child_resource(self.cluster, pod, group_name)

    # ----- suspend --------------------------------------------------------------------------
    async def _suspend(self) -> bool:
        conditions = k8s.status(self.cluster).get("conditions") or []
        gate_on = self._gate(RAY_CLUSTER_STATUS_CONDITIONS, True)
        suspending = cond.is_true(conditions, cond.RAY_CLUSTER_SUSPENDING)
        if suspending or (not gate_on and self.spec.get("suspend")):
            await self._delete_all(
                f"Deleted Pods for RayCluster {self.ns}/{self.name} due to suspension",
                f"Failed deleting Pods due to suspension for RayCluster {self.ns}/{self.name}",
                "FailedDeleteAllPods",
            )
            return True
        suspended = cond.is_true(conditions, cond.RAY_CLUSTER_SUSPENDED)
        return gate_on and (suspended or bool(self.spec.get("suspend")))

    async def _delete_all(self, message: str, failure: str, reason: str) -> None:
        """Delete every live pod: Event ``message``, or ``failure, <error>`` on an error."""
        pods = [p for p in self._pods() if not _terminating(p)]
        if not pods:
            return
        deleted: list[str] = []
        try:
            for pod in pods:
                if await self.ctx.delete_pod(pod):
                    deleted.append(pod["metadata"]["name"])
        except ApiError as exc:
            self.ctx.event(
                self.cluster, WARNING, "FailedToDeletePodCollection", f"{failure}, {exc}", "Delete"
            )
            raise ReconcileError(str(exc), reason) from exc
        self.ctx.event(self.cluster, NORMAL, "DeletedPod", message, "Delete")

    # ----- Recreate -------------------------------------------------------------------------
    async def _recreate_upgrade(self, cluster_hash: str) -> bool:
        strategy = (self.spec.get("upgradeStrategy") or {}).get("type")
        if strategy != C.UPGRADE_STRATEGY_RECREATE:
            return False
        heads = self._pods(**{C.RAY_NODE_TYPE_LABEL_KEY: C.HEAD_NODE})
        if not heads:
            return False
        head = heads[0]
        annotations = head["metadata"].get("annotations") or {}
        version = annotations.get(C.KUBERAY_VERSION_ANNOTATION_KEY, "")
        if version and version != self.options.kuberay_version:
            # Another operator (or version) stamped this pod: adopt it by restamping, never
            # by recreating - its hash was computed by different code.
            try:
                await self.ctx.client.patch(
                    "v1",
                    "Pod",
                    head["metadata"]["name"],
                    {
                        "metadata": {
                            "annotations": {
                                C.UPGRADE_STRATEGY_RECREATE_HASH_KEY: cluster_hash,
                                C.KUBERAY_VERSION_ANNOTATION_KEY: self.options.kuberay_version,
                            }
                        }
                    },
                    self.ns,
                )
            except ApiError as exc:
                # As KubeRay: logged, and the pass goes on (the next pass retries).
                log.warning(
                    "failed to restamp the head pod's Recreate annotations",
                    pod=head["metadata"]["name"],
                    error=str(exc),
                )
            return False
        stamped = annotations.get(C.UPGRADE_STRATEGY_RECREATE_HASH_KEY, "")
        if stamped and stamped != cluster_hash:
            await self._delete_all(
                f"Deleted all Pods for RayCluster {self.ns}/{self.name} due to spec change "
                "with Recreate upgradeStrategy",
                "Failed deleting Pods due to spec change with Recreate upgradeStrategy for "
                f"RayCluster {self.ns}/{self.name}",
                "FailedDeleteAllPods",
            )
            for group in [HEAD_GROUP] + [
                g.get("groupName", "") for g in self.spec.get("workerGroupSpecs") or []
            ]:
                self.ctx.expectations.delete(group_key(self.cluster, group))
            return True
        return False

    # ----- head -----------------------------------------------------------------------------
    async def _reconcile_head(self, cluster_hash: str) -> None:
        if not self._satisfied(HEAD_GROUP):
            return
        heads = self._pods(**{C.RAY_NODE_TYPE_LABEL_KEY: C.HEAD_NODE})
        if len(heads) > 1:
            names = ", ".join(sorted(p["metadata"]["name"] for p in heads))
            raise ReconcileError(
                f"{len(heads)} head pods found for RayCluster {self.ns}/{self.name} ({names}); "
                "delete the extra head pods"
            )
        if len(heads) == 1:
            head = heads[0]
            delete, why = should_delete_pod(head, C.HEAD_NODE)
            if delete:
                name = head["metadata"]["name"]
                phase, policy, terminated = pod_state(head)
                try:
                    if await self.ctx.delete_pod(head):
                        self.ctx.expectations.expect_deletions(
                            group_key(self.cluster, HEAD_GROUP), [name]
                        )
                except ApiError as exc:
                    self.ctx.event(
                        self.cluster,
                        WARNING,
                        "FailedToDeleteHeadPod",
                        f"Failed deleting head Pod {self.ns}/{name}; Pod status: {phase}; "
                        f"Pod restart policy: {policy}; Ray container terminated status: "
                        f"{terminated}, {exc}",
                        "Delete",
                    )
                    raise ReconcileError(str(exc), "FailedDeleteHeadPod") from exc
                self.ctx.event(
                    self.cluster,
                    NORMAL,
                    "DeletedHeadPod",
                    f"Deleted head Pod {self.ns}/{name}; Pod status: {phase}; Pod restart "
                    f"policy: {policy}; Ray container terminated status: {terminated}",
                    "Delete",
                )
                raise ReconcileError(why)
            return
        conditions = k8s.status(self.cluster).get("conditions") or []
        annotations = self.meta.get("annotations") or {}
        if (
            cond.is_true(conditions, cond.RAY_CLUSTER_PROVISIONED)
            and annotations.get(C.DISABLE_PROVISIONED_HEAD_RESTART_ANNOTATION_KEY) == "true"
        ):
            return
        await self._require_mtls_ready()
        pod = build_head_pod(self.cluster, self.options, self.features, recreate_hash=cluster_hash)
        pod["metadata"]["namespace"] = self.ns
        stamp_template_hash(pod, self.cluster, self.spec.get("headGroupSpec") or {})
        self._stamp(pod, C.RAY_NODE_HEAD_GROUP_LABEL_VALUE)
        try:
            created = await self.ctx.create(pod)
        except ApiError as exc:
            self.ctx.event(
                self.cluster,
                WARNING,
                "FailedToCreateHeadPod",
                f"Failed to create head Pod {self.ns}/{_pod_label(pod)}, {exc.message or exc}",
                "Create",
            )
            raise ReconcileError(str(exc.message or exc), "FailedCreateHeadPod") from exc
        name = created["metadata"]["name"]
        self.ctx.expectations.expect_creations(group_key(self.cluster, HEAD_GROUP), [name])
        self.ctx.event(
            self.cluster, NORMAL, "CreatedHeadPod", f"Created head Pod {self.ns}/{name}", "Create"
        )

    # ----- workers --------------------------------------------------------------------------
    async def _reconcile_group(self, group: Obj) -> None:
        group_name = group.get("groupName", "")
        key = group_key(self.cluster, group_name)
        if not self._satisfied(group_name):
            return
        pods = self._pods(
            **{C.RAY_NODE_GROUP_LABEL_KEY: group_name, C.RAY_NODE_TYPE_LABEL_KEY: C.WORKER_NODE}
        )
        if group.get("suspend"):
            await self._suspend_group(key, group_name, pods)
            return
        desired = worker_group_desired_replicas(group)
        if is_multi_host_indexing(group, self.features):
            await self._reconcile_multi_host(group, pods, desired)
            return

        unhealthy = []
        for pod in pods:
            delete, why = should_delete_pod(pod, C.WORKER_NODE)
            if delete:
                unhealthy.append((pod, why))
        if unhealthy:
            for pod, _ in unhealthy:
                ref = f"{self.ns}/{pod['metadata']['name']}"
                phase, policy, terminated = pod_state(pod)
                await self._delete_worker(
                    key,
                    pod,
                    f"Deleted worker Pod {ref}; Pod status: {phase}; Pod restart policy: "
                    f"{policy}; Ray container terminated status: {terminated}",
                    f"Failed deleting worker Pod {ref}; Pod status: {phase}; Pod restart policy: "
                    f"{policy}; Ray container terminated status: {terminated}",
                )
            raise ReconcileError(f"delete {len(unhealthy)} unhealthy worker Pods")

        # Pods named in workersToDelete are deleted (or, already terminating, awaited) and
        # no longer count; every other pod counts, terminating or not (KubeRay's diff).
        named = set(workers_to_delete(group))
        running: list[Obj] = []
        for pod in pods:
            if pod["metadata"]["name"] in named:
                ref = f"{self.ns}/{pod['metadata']['name']}"
                await self._delete_worker(
                    key, pod, f"Deleted pod {ref}", f"Failed deleting pod {ref}"
                )
            else:
                running.append(pod)
        diff = desired - len(running)
        if diff > 0:
            # No index held by a pod that still exists (terminating or just deleted) is reused.
            for index in lowest_free_indices(_replica_indices(pods), diff):
                await self._create_worker(key, group, replica_index=index)
        elif diff < 0:
            if not random_scale_down_allowed(self.cluster, self.options):
                return
            # Victims come from the pods counted above: terminating ones first (they are
            # going anyway), then pods not running yet, then the cache's order.
            running.sort(key=_victim_rank)
            for pod in running[:-diff]:
                ref = f"{self.ns}/{pod['metadata']['name']}"
                await self._delete_worker(
                    key, pod, f"Deleted Pod {ref}", f"Failed deleting Pod {ref}"
                )

    async def _suspend_group(self, key: str, group_name: str, pods: list[Obj]) -> None:
        live = [p for p in pods if not _terminating(p)]
        if not live:
            return
        try:
            for pod in live:
                await self._remove(key, pod)
        except ApiError as exc:
            self.ctx.event(
                self.cluster,
                WARNING,
                "FailedToDeleteWorkerPodCollection",
                f"Failed deleting worker Pods for suspended group {group_name} in RayCluster "
                f"{self.ns}/{self.name}, {exc}",
                "Delete",
            )
            raise ReconcileError(str(exc), "FailedDeleteWorkerPod") from exc
        self.ctx.event(
            self.cluster,
            NORMAL,
            "DeletedWorkerPod",
            f"Deleted all pods for suspended worker group {group_name} in RayCluster "
            f"{self.ns}/{self.name}",
            "Delete",
        )

    async def _create_worker(
        self,
        key: str,
        group: Obj,
        *,
        replica_index: int = 0,
        replica_name: str = "",
        host_index: int = 0,
    ) -> None:
        await self._require_mtls_ready()
        pod = build_worker_pod(
            self.cluster,
            group,
            self.options,
            self.features,
            replica_group_name=replica_name,
            replica_index=replica_index,
            host_index=host_index,
        )
        pod["metadata"]["namespace"] = self.ns
        stamp_template_hash(pod, self.cluster, group)
        self._stamp(pod, str(group.get("groupName") or ""))
        try:
            created = await self.ctx.create(pod)
        except ApiError as exc:
            self.ctx.event(
                self.cluster,
                WARNING,
                "FailedToCreateWorkerPod",
                f"Failed to create worker Pod for the cluster {self.ns}/{self.name}, "
                f"{exc.message or exc}",
                "Create",
            )
            raise ReconcileError(str(exc.message or exc), "FailedCreateWorkerPod") from exc
        name = created["metadata"]["name"]
        self.ctx.expectations.expect_creations(key, [name])
        self.ctx.event(
            self.cluster,
            NORMAL,
            "CreatedWorkerPod",
            f"Created worker Pod {self.ns}/{name}",
            "Create",
        )

    async def _remove(self, key: str, pod: Obj) -> bool:
        """Delete ``pod`` and expect it gone; True when a delete call removed it.

        A pod already terminating is not deleted again (the call would change
        nothing) but is expected gone all the same, so the group waits for it
        exactly as for a pod deleted now. ApiError propagates."""
        name = pod["metadata"]["name"]
        if _terminating(pod):
            self.ctx.expectations.expect_deletions(key, [name])
            return False
        if await self.ctx.delete_pod(pod):
            self.ctx.expectations.expect_deletions(key, [name])
            return True
        return False

    async def _delete_worker(self, key: str, pod: Obj, message: str, failure: str) -> None:
        """``_remove`` one worker with its Events: ``message`` on success, ``failure``
        followed by ``, <error>`` when the delete fails (KubeRay's texts differ by path)."""
        try:
            removed = await self._remove(key, pod)
        except ApiError as exc:
            self.ctx.event(
                self.cluster,
                WARNING,
                "FailedToDeleteWorkerPod",
                f"{failure}, {exc}",
                "Delete",
            )
            raise ReconcileError(str(exc), "FailedDeleteWorkerPod") from exc
        if removed:
            self.ctx.event(self.cluster, NORMAL, "DeletedWorkerPod", message, "Delete")

    # ----- multi-host -----------------------------------------------------------------------
    async def _delete_replica(self, key: str, group_name: str, pods: list[Obj], why: str) -> None:
        for pod in pods:
            ref = f"{self.ns}/{pod['metadata']['name']}"
            phase, policy, terminated = pod_state(pod)
            await self._delete_worker(
                key,
                pod,
                f"Deleted worker Pod {ref} for group {group_name}: {why}",
                f"Failed deleting worker Pod {ref} for group {group_name}; Pod status: {phase}; "
                f"Pod restart policy: {policy}; Ray container terminated status: {terminated}",
            )

    async def _reconcile_multi_host(self, group: Obj, pods: list[Obj], desired_pods: int) -> None:
        group_name = group.get("groupName", "")
        key = group_key(self.cluster, group_name)
        hosts = num_of_hosts(group)
        # Replicas by name, terminating members included. Pods without a replica name
        # (made by a KubeRay before replica names) are neither counted nor deleted.
        replicas: dict[str, list[Obj]] = defaultdict(list)
        for pod in pods:
            replica = _labels(pod).get(C.RAY_WORKER_REPLICA_NAME_KEY, "")
            if replica:
                replicas[replica].append(pod)

        incomplete = {n: ps for n, ps in replicas.items() if len(ps) < hosts}
        if incomplete:
            for members in incomplete.values():
                await self._delete_replica(
                    key, group_name, members, "cleanup of incomplete multi-host group"
                )
            raise ReconcileError(
                f"deleted {len(incomplete)} incomplete multi-host replicas of group {group_name}"
            )
        doomed: dict[str, str] = {}
        for name, members in replicas.items():
            for pod in members:
                delete, why = should_delete_pod(pod, C.WORKER_NODE)
                if delete:
                    doomed.setdefault(name, why)
        to_delete = set(workers_to_delete(group))
        for name, members in replicas.items():
            if any(p["metadata"]["name"] in to_delete for p in members):
                doomed.setdefault(name, "autoscaler scale-down request")
        if doomed:
            for name, why in doomed.items():
                await self._delete_replica(key, group_name, replicas[name], why)
            raise ReconcileError(f"deleted {len(doomed)} multi-host replicas of group {group_name}")
        if desired_pods % hosts != 0:
            raise ReconcileError(
                f"desired pods {desired_pods} of group {group_name} is not a multiple "
                f"of numOfHosts {hosts}"
            )
        want = desired_pods // hosts
        have = len(replicas)
        if want > have:
            for index in lowest_free_indices(_replica_indices(pods), want - have):
                replica_name = generate_ray_worker_replica_group_name(group_name)
                for host in range(hosts):
                    await self._create_worker(
                        key, group, replica_index=index, replica_name=replica_name, host_index=host
                    )
        elif want < have:
            if not random_scale_down_allowed(self.cluster, self.options):
                return
            names = list(replicas)
            random.shuffle(names)
            names.sort(key=lambda n: min(_victim_rank(p) for p in replicas[n]))
            for name in names[: have - want]:
                await self._delete_replica(key, group_name, replicas[name], "scaling down")
