"""Node label delivery's decisions (KubeRay v1.8, gate NodeLabelDelivery): pure functions,
no I/O; the handlers in :mod:`kuberay.webhooks.pods` read the cluster and call them.

* at pods CREATE (:func:`prepare_worker_patch`), a worker pod of a group with ``labelRefs``
  gets the env var ``RAY_NODE_LABELS_JSON`` (a downward API reference to the Pod annotation
  ``ray.io/node-labels``) and its generated ``ray start`` is wrapped
  (:func:`ray_start_with_node_labels`): it writes that JSON to ``/tmp/ray-labels.yaml`` and
  passes ``--labels-file``, or exits with a message naming the problem when the annotation
  is missing or a value is empty;
* at pods/binding CREATE (:func:`node_labels_for` and :func:`binding_patch`), the bound
  Node's labels the group refers to become that annotation on the Binding, which the
  apiserver copies onto the Pod together with ``spec.nodeName``; a missing one withholds
  the annotation (the worker then exits before ``ray start``) with
  :data:`WITHHELD_REASON` as a Warning Event on the Pod.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from kuberay.api.v1.constants import (
    KUBERAY_GEN_RAY_START_CMD,
    RAY_NODE_LABELS_ANNOTATION_KEY,
    RAY_NODE_LABELS_FILE_PATH,
    RAY_NODE_LABELS_JSON,
)
from kuberay.api.v1.raycluster_types import LabelRef
from kuberay.api.v1.validation.label_refs import node_label_key, ray_label_key
from kuberay.gocompat.go_text import go_quote

__all__ = [
    "WITHHELD_ACTION",
    "WITHHELD_REASON",
    "NodeLabelsWithheld",
    "PodRefused",
    "binding_patch",
    "node_labels_for",
    "prepare_worker_patch",
    "ray_start_with_node_labels",
    "withheld_message",
]

#: The reason and action of the Warning Event on a pod whose labels were withheld.
WITHHELD_REASON: Final = "RequiredNodeLabelMissing"
WITHHELD_ACTION: Final = "DeliverNodeLabels"
_RAY_CONTAINER = 0
_FIELD_REF: Final = f"metadata.annotations['{RAY_NODE_LABELS_ANNOTATION_KEY}']"


class PodRefused(ValueError):
    """The pods webhook denies the pod; the message says why (KubeRay's words)."""


class NodeLabelsWithheld(ValueError):
    """The binding goes through without labels; the message names each missing one."""


def ray_start_with_node_labels(ray_start_cmd: str) -> str:
    """The shell fragment replacing ``ray_start_cmd``: refuse an empty or partial label JSON,
    write it to the labels file, then ``ray_start_cmd --labels-file=<file>``."""
    env, path = RAY_NODE_LABELS_JSON, RAY_NODE_LABELS_FILE_PATH
    return (
        f'if [ -z "${env}" ]; then echo "{env} is empty: node labels were not delivered to '
        f'this pod, see the pod events" >&2; exit 1; fi; '
        f'case "${env}" in *\'":""\'*) echo "{env} contains an empty label value" >&2; '
        f"exit 1;; esac; "
        f"printf '%s\\n' \"${env}\" > {path}; {ray_start_cmd} --labels-file={path}"
    )


def _env_pointer() -> dict[str, Any]:
    return {"name": RAY_NODE_LABELS_JSON, "valueFrom": {"fieldRef": {"fieldPath": _FIELD_REF}}}


def prepare_worker_patch(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch preparing a labelRefs worker pod (empty when it already is, e.g. on a
    webhook reinvocation); :class:`PodRefused` when the pod is not KubeRay's generated
    shape."""
    containers = (pod.get("spec") or {}).get("containers") or []
    if len(containers) <= _RAY_CONTAINER:
        raise PodRefused("pod has no Ray container")
    container = containers[_RAY_CONTAINER]
    env: Sequence[Mapping[str, Any]] = container.get("env") or []
    for entry in env:
        if entry.get("name") != RAY_NODE_LABELS_JSON:
            continue
        field_ref = (entry.get("valueFrom") or {}).get("fieldRef") or {}
        if field_ref.get("fieldPath") == _FIELD_REF:
            return []
        raise PodRefused(
            f"{RAY_NODE_LABELS_JSON} is managed by KubeRay when labelRefs is set and must not "
            "be set in the pod template"
        )
    generated = next((e for e in env if e.get("name") == KUBERAY_GEN_RAY_START_CMD), None)
    ray_start_cmd = generated.get("value") if generated is not None else None
    if not isinstance(ray_start_cmd, str) or not ray_start_cmd:
        raise PodRefused(
            f"the Ray container has no {KUBERAY_GEN_RAY_START_CMD} env var; node label delivery "
            "needs the KubeRay-generated ray start command"
        )
    args = container.get("args") or []
    if len(args) != 1 or not isinstance(args[0], str):
        raise PodRefused(
            "expected the Ray container to have exactly one args element carrying the "
            f"generated ray start command, got {len(args)}"
        )
    count = args[0].count(ray_start_cmd)
    if count == 0:
        raise PodRefused(
            f"the generated ray start command ({KUBERAY_GEN_RAY_START_CMD}) was not found in "
            "the container args; node label delivery needs the KubeRay-generated ray start "
            "command"
        )
    if count > 1:
        raise PodRefused(
            f"the generated ray start command appears {count} times in the container args"
        )
    wrapped = args[0].replace(ray_start_cmd, ray_start_with_node_labels(ray_start_cmd), 1)
    base = f"/spec/containers/{_RAY_CONTAINER}"
    patch: list[dict[str, Any]] = [{"op": "replace", "path": f"{base}/args/0", "value": wrapped}]
    if "env" in container and container["env"] is not None:
        patch.append({"op": "add", "path": f"{base}/env/-", "value": _env_pointer()})
    else:
        patch.append({"op": "add", "path": f"{base}/env", "value": [_env_pointer()]})
    return patch


def node_labels_for(
    node_labels: Mapping[str, str], refs: Sequence[LabelRef], allowed: Collection[str]
) -> dict[str, str]:
    """The Ray node labels ``refs`` deliver from a Node labelled ``node_labels``;
    :class:`NodeLabelsWithheld` naming every ref that cannot be (not allowlisted, missing)."""
    labels: dict[str, str] = {}
    problems: list[str] = []
    for ref in refs:
        try:
            node_label = node_label_key(ref.value_from.node_ref.field_path)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if node_label not in allowed:
            problems.append(
                f"node label {go_quote(node_label)} is not in the operator's allowedNodeLabels"
            )
        elif node_label not in node_labels:
            problems.append(f"node lacks label {go_quote(node_label)}")
        else:
            labels[ray_label_key(ref.name, node_label)] = node_labels[node_label]
    if problems:
        raise NodeLabelsWithheld("; ".join(problems))
    return labels


def withheld_message(node_name: str, cause: str) -> str:
    """The note of the :data:`WITHHELD_REASON` Event."""
    return f"node labels not delivered for the binding to node {node_name}: {cause}"


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def binding_patch(binding: Mapping[str, Any], labels: Mapping[str, str]) -> list[dict[str, Any]]:
    """The JSON Patch writing ``labels`` (compact JSON, Go's key order) into the Binding's
    :data:`~kuberay.api.v1.constants.RAY_NODE_LABELS_ANNOTATION_KEY` annotation."""
    encoded = json.dumps(dict(sorted(labels.items())), separators=(",", ":"), ensure_ascii=False)
    annotations = (binding.get("metadata") or {}).get("annotations")
    if isinstance(annotations, Mapping):
        path = f"/metadata/annotations/{_pointer_token(RAY_NODE_LABELS_ANNOTATION_KEY)}"
        return [{"op": "add", "path": path, "value": encoded}]
    value = {RAY_NODE_LABELS_ANNOTATION_KEY: encoded}
    return [{"op": "add", "path": "/metadata/annotations", "value": value}]
