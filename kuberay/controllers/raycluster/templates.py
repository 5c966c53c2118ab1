"""Which pods run an older template of their group: condition ``PodTemplateApplied`` (beyond
KubeRay).

KubeRay (and this operator) never restarts a running pod because its group's template changed
unless ``upgradeStrategy: Recreate``; KubeRay says nothing about it (its issues #3905, #787).
Here every pod the operator creates carries ``ray.io/pod-template-hash``
(:data:`~kuberay.api.v1.constants.POD_TEMPLATE_HASH_KEY`): the hash of

* its group's spec (``headGroupSpec`` or its ``workerGroupSpecs`` entry) without what scales a
  group rather than shapes its pods (``replicas``, ``minReplicas``, ``maxReplicas``,
  ``scaleStrategy``, ``suspend``, ``idleTimeoutSeconds``), without the head group's Service
  and Ingress settings (``serviceType``, ``headService``, ``enableIngress``) and without the
  template's ``tolerations`` and ``schedulingGates`` (left out of KubeRay's Recreate hash
  too: Kueue edits them);
* the cluster-wide fields (every spec field outside the groups but ``suspend``,
  ``upgradeStrategy``, ``managedBy``, ``headServiceAnnotations`` and ``networkPolicy``, which
  shape no pod);
* and the head's address every pod is given: the head Service's name and the GCS port
  (``headGroupSpec.headService.metadata.name``, ``headGroupSpec.rayStartParams.port``).

While any live pod of a group in the spec carries a hash other than its group's current one,
the status has condition ``PodTemplateApplied`` False, reason ``PodsRunOlderTemplate``, its
message naming each such group with its outdated/total pod counts; otherwise the condition is
absent (so a cluster whose template never changed reads as in KubeRay, and nothing flaps
between True and absent). Not judged: terminating pods, pods without the annotation (made by
KubeRay or before it existed: counted in the total, never as outdated), pods of groups no
longer in the spec (:mod:`.removed_groups` deletes them), and clusters with
``upgradeStrategy: Recreate`` (the operator recreates their pods itself). Nothing here
deletes or restarts a pod.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import orjson

from kuberay.api.v1 import constants as C
from kuberay.api.v1.rules import head_port
from kuberay.controllers.builders.names import head_service_name
from kuberay.controllers.raycluster import conditions as cond
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

POD_TEMPLATE_APPLIED = "PodTemplateApplied"
PODS_RUN_OLDER_TEMPLATE = "PodsRunOlderTemplate"

#: Group fields that shape no pod: what scales a worker group, and the head group's Service
#: and Ingress settings.
_NOT_POD_FIELDS = (
    "replicas",
    "minReplicas",
    "maxReplicas",
    "scaleStrategy",
    "suspend",
    "idleTimeoutSeconds",
    "serviceType",
    "headService",
    "enableIngress",
)
#: Cluster-wide spec fields that are no pod's template.
_NOT_TEMPLATE = (
    "headGroupSpec",
    "workerGroupSpecs",
    "suspend",
    "upgradeStrategy",
    "managedBy",
    "headServiceAnnotations",
    "networkPolicy",
)
#: The key of the head group in :func:`outdated_groups` (no worker group is named "").
HEAD = ""


def _group_template(group: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in group.items() if k not in _NOT_POD_FIELDS}
    template = out.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        pod_spec = {
            k: v for k, v in template["spec"].items() if k not in ("tolerations", "schedulingGates")
        }
        out["template"] = {**template, "spec": pod_spec}
    return out


def template_hash(cluster: Obj, group: Mapping[str, Any]) -> str:
    """The hash of ``group``'s template in ``cluster`` (``group``: the ``headGroupSpec`` or a
    ``workerGroupSpecs`` entry, as in the spec)."""
    spec = k8s.spec(cluster)
    doc = {
        "cluster": {k: v for k, v in spec.items() if k not in _NOT_TEMPLATE},
        "head": [head_service_name(cluster), head_port(cluster)],
        "group": _group_template(group),
    }
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:20]


def stamp_template_hash(pod: Obj, cluster: Obj, group: Mapping[str, Any]) -> None:
    """Annotate ``pod`` (about to be created for ``group``) with its template's hash."""
    annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[C.POD_TEMPLATE_HASH_KEY] = template_hash(cluster, group)


@attrs.frozen
class GroupTemplates:
    """One group's live pods: how many run an older template, of how many. ``group`` is
    the worker group's name, or :data:`HEAD`."""

    group: str
    outdated: int
    total: int


def outdated_groups(cluster: Obj, pods: Iterable[Obj]) -> list[GroupTemplates]:
    """The groups of ``cluster``'s spec with a live pod of an older template: the head
    group first, then the worker groups in spec order."""
    spec = k8s.spec(cluster)
    current = {HEAD: template_hash(cluster, spec.get("headGroupSpec") or {})}
    for group in spec.get("workerGroupSpecs") or []:
        current.setdefault(str(group.get("groupName") or ""), template_hash(cluster, group))
    outdated = dict.fromkeys(current, 0)
    total = dict.fromkeys(current, 0)
    for pod in pods:
        meta = k8s.meta(pod)
        if meta.get("deletionTimestamp"):
            continue
        labels = meta.get("labels") or {}
        node_type = labels.get(C.RAY_NODE_TYPE_LABEL_KEY)
        if node_type == C.HEAD_NODE:
            key = HEAD
        elif node_type == C.WORKER_NODE and labels.get(C.RAY_NODE_GROUP_LABEL_KEY):
            key = str(labels[C.RAY_NODE_GROUP_LABEL_KEY])
        else:
            continue
        if key not in current:
            continue
        total[key] += 1
        stamped = (meta.get("annotations") or {}).get(C.POD_TEMPLATE_HASH_KEY)
        if stamped and stamped != current[key]:
            outdated[key] += 1
    return [GroupTemplates(g, outdated[g], total[g]) for g in current if outdated[g]]


def template_message(groups: Iterable[GroupTemplates]) -> str:
    """The condition's message: every group with its outdated/total pod counts."""
    parts = [
        f"{'head group' if g.group == HEAD else f'worker group {g.group}'} {g.outdated}/{g.total}"
        for g in groups
    ]
    return "Pods run an older template of their group (outdated/total): " + ", ".join(parts)


def set_template_condition(
    conditions: list[Obj], cluster: Obj, pods: Iterable[Obj], now: str
) -> None:
    """Set ``PodTemplateApplied`` False in ``conditions`` while a pod runs an older
    template, remove it otherwise (in place)."""
    strategy = (k8s.spec(cluster).get("upgradeStrategy") or {}).get("type")
    groups = [] if strategy == C.UPGRADE_STRATEGY_RECREATE else outdated_groups(cluster, pods)
    if not groups:
        cond.remove_condition(conditions, POD_TEMPLATE_APPLIED)
        return
    cond.set_condition(
        conditions,
        POD_TEMPLATE_APPLIED,
        False,
        PODS_RUN_OLDER_TEMPLATE,
        template_message(groups),
        now,
    )


__all__ = [
    "HEAD",
    "PODS_RUN_OLDER_TEMPLATE",
    "POD_TEMPLATE_APPLIED",
    "GroupTemplates",
    "outdated_groups",
    "set_template_condition",
    "stamp_template_hash",
    "template_hash",
    "template_message",
]
