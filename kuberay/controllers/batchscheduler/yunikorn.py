"""YuniKorn (``--batch-scheduler=yunikorn``): nothing is created up front. Children get
``schedulerName: yunikorn`` and the legacy ``applicationId`` / ``queue`` labels copied from
the parent's ``yunikorn.apache.org/app-id`` / ``yunikorn.apache.org/queue``. With the
parent labelled ``ray.io/gang-scheduling-enabled`` (any value), they also get the
``yunikorn.apache.org/task-groups`` annotation (the parent's own, or the task groups built
here: head 1, each worker group minReplicas x numOfHosts, and for a RayJob the submitter
1) and ``yunikorn.apache.org/task-group-name`` = the child's group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.controllers.batchscheduler.interface import (
    BatchScheduler,
    copy_label,
    kind_of,
    labels_of,
    set_annotation,
    set_scheduler_name,
)
from kuberay.controllers.batchscheduler.resources import resources_json, submitter_template
from kuberay.controllers.builders.resources import calculate_pod_resource
from kuberay.gocompat.gojson import go_string, marshal_value
from kuberay.gocompat.gojson import marshal as go_marshal
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

PLUGIN_NAME = "yunikorn"
APP_ID_LABEL_KEY = "yunikorn.apache.org/app-id"
QUEUE_LABEL_KEY = "yunikorn.apache.org/queue"
POD_APP_ID_LABEL_KEY = "applicationId"
POD_QUEUE_LABEL_KEY = "queue"
TASK_GROUP_NAME_ANNOTATION_KEY = "yunikorn.apache.org/task-group-name"
TASK_GROUPS_ANNOTATION_KEY = "yunikorn.apache.org/task-groups"


def _task_group(name: str, min_member: int, pod_spec: Mapping[str, Any]) -> Obj:
    return {
        "name": name,
        "minMember": min_member,
        "minResource": resources_json(calculate_pod_resource(pod_spec)),
        "nodeSelector": pod_spec.get("nodeSelector"),
        "tolerations": pod_spec.get("tolerations"),
        "affinity": pod_spec.get("affinity"),
    }


def task_groups(parent: Mapping[str, Any]) -> list[Obj]:
    """KubeRay's task groups of a RayCluster or RayJob (see the module docstring)."""
    spec = k8s.spec(parent)
    cluster_spec = spec.get("rayClusterSpec") or {} if kind_of(parent) == C.KIND_RAYJOB else spec
    head = (cluster_spec.get("headGroupSpec") or {}).get("template") or {}
    groups = [_task_group(C.RAY_NODE_HEAD_GROUP_LABEL_VALUE, 1, head.get("spec") or {})]
    for group in cluster_spec.get("workerGroupSpecs") or []:
        hosts = group.get("numOfHosts")
        hosts = hosts if isinstance(hosts, int) else 1
        minimum = group.get("minReplicas")
        minimum = minimum if isinstance(minimum, int) else 0
        pod_spec = (group.get("template") or {}).get("spec") or {}
        groups.append(_task_group(str(group.get("groupName") or ""), minimum * hosts, pod_spec))
    if kind_of(parent) == C.KIND_RAYJOB:
        submitter = submitter_template(parent).get("spec") or {}
        groups.append(_task_group(C.RAY_NODE_SUBMITTER_GROUP_LABEL_VALUE, 1, submitter))
    return groups


def _marshal_group(group: Mapping[str, Any]) -> str:
    """One task group as Go's ``encoding/json`` writes KubeRay's ``TaskGroup`` struct."""
    parts = [f'"minResource":{marshal_value(dict(sorted(group["minResource"].items())))}']
    if group.get("nodeSelector"):
        parts.append(f'"nodeSelector":{marshal_value(dict(sorted(group["nodeSelector"].items())))}')
    if group.get("affinity") is not None:
        parts.append(f'"affinity":{go_marshal(group["affinity"], "core/v1.Affinity").decode()}')
    parts.append(f'"name":{go_string(str(group["name"]))}')
    if group.get("tolerations"):
        tolerations = ",".join(
            go_marshal(t, "core/v1.Toleration").decode() for t in group["tolerations"]
        )
        parts.append(f'"tolerations":[{tolerations}]')
    parts.append(f'"minMember":{int(group["minMember"])}')
    return "{" + ",".join(parts) + "}"


def task_groups_annotation(parent: Mapping[str, Any]) -> str:
    """The ``yunikorn.apache.org/task-groups`` value KubeRay writes (Go JSON bytes)."""
    return "[" + ",".join(_marshal_group(g) for g in task_groups(parent)) + "]"


class YuniKornScheduler(BatchScheduler):
    """The yunikorn plugin (writes no objects of its own)."""

    plugin_name = PLUGIN_NAME

    def add_metadata_to_child_resource(self, parent: Obj, child: Obj, group_name: str) -> None:
        copy_label(parent, child, APP_ID_LABEL_KEY, POD_APP_ID_LABEL_KEY)
        copy_label(parent, child, QUEUE_LABEL_KEY, POD_QUEUE_LABEL_KEY)
        set_scheduler_name(child, self.name())
        if C.RAY_GANG_SCHEDULING_ENABLED_LABEL_KEY not in labels_of(parent):
            return
        own = (k8s.meta(parent).get("annotations") or {}).get(TASK_GROUPS_ANNOTATION_KEY)
        set_annotation(child, TASK_GROUPS_ANNOTATION_KEY, own or task_groups_annotation(parent))
        if group_name:
            set_annotation(child, TASK_GROUP_NAME_ANNOTATION_KEY, group_name)


__all__ = [
    "APP_ID_LABEL_KEY",
    "PLUGIN_NAME",
    "QUEUE_LABEL_KEY",
    "TASK_GROUPS_ANNOTATION_KEY",
    "TASK_GROUP_NAME_ANNOTATION_KEY",
    "YuniKornScheduler",
    "task_groups",
    "task_groups_annotation",
]
