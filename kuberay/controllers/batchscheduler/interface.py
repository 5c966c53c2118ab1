"""The batch-scheduler plugin contract (KubeRay ``batchscheduler/interface``).

A plugin is told when a RayCluster's pods are about to be reconciled, or a RayJob is
initialising (:meth:`BatchScheduler.do_batch_scheduling_on_submission`: create or resize
what the scheduler needs up front, e.g. a PodGroup); it stamps its labels, annotations and
``schedulerName`` on every child it should schedule
(:meth:`BatchScheduler.add_metadata_to_child_resource`); and it releases what it holds
when a RayJob finishes or is suspended (:meth:`BatchScheduler.cleanup_on_completion`) or
a RayCluster is suspended (:meth:`BatchScheduler.cleanup_on_suspend`, beyond KubeRay:
its PR #5200). The base class is KubeRay's no-op default scheduler.

Objects are plain dicts as the apiserver returns them. A ``child`` is a Pod, a pod
template (no ``kind``) or a RayCluster; ``schedulerName`` is only set on the first two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.kube import Client
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

#: The kinds whose objects :meth:`add_metadata_to_child_resource` gives a schedulerName
#: (``None``: a pod template, which carries no kind).
_POD_LIKE = (None, "Pod")


class BatchSchedulerError(Exception):
    """A plugin refused an object or could not reach the apiserver; the reconcile that
    called it is retried (KubeRay returns the error from Reconcile)."""


def is_pod_like(child: Mapping[str, Any]) -> bool:
    """A Pod or a pod template (what KubeRay's ``AddSchedulerNameToObject`` touches)."""
    return child.get("kind") in _POD_LIKE


def set_scheduler_name(child: Obj, name: str) -> None:
    """``spec.schedulerName = name`` on a Pod or pod template; other kinds untouched."""
    if is_pod_like(child):
        child.setdefault("spec", {})["schedulerName"] = name


def labels_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """``metadata.labels`` (``{}`` when absent)."""
    return dict(k8s.meta(obj).get("labels") or {})


def set_label(child: Obj, key: str, value: str) -> None:
    """Add one label to ``child`` in place."""
    meta = child.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), key: value}


def set_annotation(child: Obj, key: str, value: str) -> None:
    """Add one annotation to ``child`` in place."""
    meta = child.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), key: value}


def copy_label(parent: Mapping[str, Any], child: Obj, key: str, target: str = "") -> None:
    """Copy ``parent``'s label ``key`` (as ``target``, default the same key) when non-empty."""
    value = labels_of(parent).get(key)
    if value:
        set_label(child, target or key, value)


def kind_of(obj: Mapping[str, Any]) -> str:
    """``kind`` of a parent object (``RayCluster`` or ``RayJob``)."""
    return str(obj.get("kind") or "")


class BatchScheduler:
    """KubeRay's default scheduler: every hook is a no-op. Plugins override what they
    need; ``client`` is the operator's API client (None for plugins that write nothing)."""

    #: The ``--batch-scheduler`` value selecting this plugin.
    plugin_name = "default"
    #: ``(apiVersion, kind)`` of the objects the plugin creates, owned by the controllers.
    owned_kinds: tuple[tuple[str, str], ...] = ()

    def __init__(self, client: Client | None = None) -> None:
        self.client = client

    def name(self) -> str:
        """The scheduler's name as pods carry it in ``spec.schedulerName``."""
        return self.plugin_name

    async def do_batch_scheduling_on_submission(self, obj: Obj) -> None:
        """Prepare the scheduler for ``obj`` (a RayCluster or RayJob); raises
        :class:`BatchSchedulerError` to fail the reconcile."""

    def add_metadata_to_child_resource(self, parent: Obj, child: Obj, group_name: str) -> None:
        """Stamp ``child`` (in place) so that the scheduler picks it up; ``group_name`` is
        ``headgroup``, a worker group, ``submittergroup`` or ``""`` (a RayCluster)."""

    async def cleanup_on_completion(self, obj: Obj) -> bool:
        """Release what the scheduler holds for a finished/suspended RayJob; True when
        something was written (the caller records ``BatchSchedulerCleanedUp``)."""
        return False

    async def cleanup_on_suspend(self, cluster: Obj) -> bool:
        """Release what the scheduler holds for a suspended RayCluster (beyond KubeRay);
        True when something was written."""
        return False


__all__ = [
    "BatchScheduler",
    "BatchSchedulerError",
    "copy_label",
    "is_pod_like",
    "kind_of",
    "labels_of",
    "set_annotation",
    "set_label",
    "set_scheduler_name",
]
