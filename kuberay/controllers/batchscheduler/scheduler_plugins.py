"""scheduler-plugins (``--batch-scheduler=scheduler-plugins``): pods go to the
``scheduler-plugins-scheduler``; a RayCluster labelled ``ray.io/gang-scheduling-enabled``
(any value) gets a ``scheduling.x-k8s.io/v1alpha1`` PodGroup named like the cluster
(minMember desired workers + 1, minResources the desired totals; created once, never
resized, as in KubeRay) and its pods the ``scheduling.x-k8s.io/pod-group`` label.
RayCluster only: KubeRay refuses a RayJob with an error on every pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import calculate_desired_replicas
from kuberay.controllers.batchscheduler.interface import (
    BatchScheduler,
    BatchSchedulerError,
    kind_of,
    labels_of,
    set_label,
    set_scheduler_name,
)
from kuberay.controllers.batchscheduler.resources import resources_json
from kuberay.controllers.builders.resources import calculate_desired_resources
from kuberay.kube import ApiError, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.children import ensure

PLUGIN_NAME = "scheduler-plugins"
SCHEDULER_NAME = "scheduler-plugins-scheduler"
POD_GROUP_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
POD_GROUP_KIND = "PodGroup"
POD_GROUP_LABEL_KEY = "scheduling.x-k8s.io/pod-group"


def _gang(obj: Mapping[str, Any]) -> bool:
    return C.RAY_GANG_SCHEDULING_ENABLED_LABEL_KEY in labels_of(obj)


def build_pod_group(cluster: Mapping[str, Any]) -> Obj:
    """KubeRay's scheduler-plugins PodGroup for ``cluster``. Its owner reference is not a
    controller reference (as in KubeRay), so the RayCluster's deletion collects it."""
    meta = k8s.meta(cluster)
    return {
        "apiVersion": POD_GROUP_API_VERSION,
        "kind": POD_GROUP_KIND,
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "ownerReferences": [
                {
                    "apiVersion": C.API_VERSION,
                    "kind": C.KIND_RAYCLUSTER,
                    "name": meta.get("name"),
                    "uid": meta.get("uid"),
                }
            ],
        },
        "spec": {
            "minMember": calculate_desired_replicas(cluster) + 1,
            "minResources": resources_json(calculate_desired_resources(cluster)),
        },
    }


class SchedulerPluginsScheduler(BatchScheduler):
    """The scheduler-plugins plugin (owns ``scheduling.x-k8s.io/v1alpha1`` PodGroups)."""

    plugin_name = PLUGIN_NAME
    owned_kinds = ((POD_GROUP_API_VERSION, POD_GROUP_KIND),)

    def name(self) -> str:
        return SCHEDULER_NAME

    async def do_batch_scheduling_on_submission(self, obj: Obj) -> None:
        if kind_of(obj) != C.KIND_RAYCLUSTER:
            # KubeRay prints the Go type of the object (``%T``).
            raise BatchSchedulerError(
                f"currently only RayCluster is supported, got *v1.{kind_of(obj) or 'unknown'}"
            )
        if not _gang(obj):
            return
        assert self.client is not None
        meta = obj["metadata"]
        try:
            await self.client.get(
                POD_GROUP_API_VERSION, POD_GROUP_KIND, meta["name"], meta["namespace"]
            )
            return
        except NotFound:
            pass
        except ApiError as exc:
            raise BatchSchedulerError(f"failed to get PodGroup: {exc}") from exc
        try:
            await ensure(self.client, build_pod_group(obj))
        except ApiError as exc:
            raise BatchSchedulerError(f"failed to create PodGroup: {exc}") from exc

    def add_metadata_to_child_resource(self, parent: Obj, child: Obj, group_name: str) -> None:
        if _gang(parent):
            set_label(child, POD_GROUP_LABEL_KEY, str(parent["metadata"]["name"]))
        set_scheduler_name(child, self.name())


__all__ = [
    "PLUGIN_NAME",
    "POD_GROUP_API_VERSION",
    "POD_GROUP_KIND",
    "POD_GROUP_LABEL_KEY",
    "SCHEDULER_NAME",
    "SchedulerPluginsScheduler",
    "build_pod_group",
]
