"""Shared helpers of the commands: Ray labels, resource sums, condition lookups."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kuberay.api.v1 import constants as C
from kuberay.diagnosis.conditions import condition_true, find_condition, pod_ready
from kuberay.gocompat.quantity import Quantity, QuantityError
from kuberay.kubectl_ray.context import CLIError
from kuberay.kubectl_ray.output import OUTPUT_FORMATS

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

FIELD_MANAGER = "ray-kubectl-plugin"
RAY_VERSION = "2.52.0"
RAY_IMAGE_REPO = "rayproject/ray"
RAY_IMAGE = f"{RAY_IMAGE_REPO}:{RAY_VERSION}"
CLUSTER_LABEL = C.RAY_CLUSTER_LABEL_KEY
IS_RAY_NODE_LABEL = C.RAY_NODE_LABEL_KEY
GROUP_LABEL = C.RAY_NODE_GROUP_LABEL_KEY
NODE_TYPE_LABEL = C.RAY_NODE_TYPE_LABEL_KEY
NVIDIA_GPU = "nvidia.com/gpu"
GOOGLE_TPU = "google.com/tpu"
TPU_ACCELERATOR_SELECTOR = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_SELECTOR = "cloud.google.com/gke-tpu-topology"
MAX_INT32 = 2**31 - 1

#: kind aliases accepted as ``TYPE/NAME`` -> the Ray kind.
RAY_KINDS = {
    "raycluster": "RayCluster",
    "rayclusters": "RayCluster",
    "rayjob": "RayJob",
    "rayjobs": "RayJob",
    "rayservice": "RayService",
    "rayservices": "RayService",
}


def add_output_flag(parser: argparse.ArgumentParser, *, listing: bool = False) -> None:
    """``-o/--output json|yaml`` (default: a table or plain text); a ``listing`` (a
    ``get`` table) also takes ``wide`` and ``name``."""
    formats = (*OUTPUT_FORMATS, "wide", "name") if listing else OUTPUT_FORMATS
    parser.add_argument(
        "-o",
        "--output",
        choices=formats,
        default=None,
        help=f"output format: {'|'.join(formats)} (default: a table)",
    )


def add_all_namespaces_flag(parser: argparse.ArgumentParser, what: str) -> None:
    """``-A/--all-namespaces`` with KubeRay's help text."""
    parser.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        help=f"If present, list {what} across all namespaces. Namespace in current context "
        "is ignored even if specified with --namespace.",
    )


def key_values(text: str) -> dict[str, str]:
    """argparse type for pflag's StringToString (``a=b,c=d``)."""
    result: dict[str, str] = {}
    if not text:
        return result
    for part in text.split(","):
        if "=" not in part:
            raise argparse.ArgumentTypeError(f"{text} must be formatted as key=value")
        key, value = part.split("=", 1)
        result[key.strip()] = value
    return result


def merge_maps(values: list[dict[str, str]] | None) -> dict[str, str]:
    """Repeated StringToString flags add up."""
    merged: dict[str, str] = {}
    for value in values or []:
        merged.update(value)
    return merged


def quantity(raw: object, what: str = "value") -> Quantity:
    """A parsed resource quantity, or a CLIError naming ``what``."""
    try:
        return Quantity.from_json(raw)
    except QuantityError as exc:
        raise CLIError(f"{what} is not a valid resource quantity: {exc}") from exc


def validate_quantity(text: str, name: str) -> None:
    """KubeRay's ValidateResourceQuantity."""
    try:
        q = Quantity.parse(text)
    except QuantityError as exc:
        raise CLIError(f"{name} is not a valid resource quantity: {exc}") from exc
    if q.cmp(Quantity.parse("0")) < 0:
        raise CLIError(f"{name} cannot be negative")


def sum_quantities(values: Iterable[Quantity]) -> Quantity:
    """The sum (0 for none)."""
    total = Quantity.parse("0")
    for v in values:
        total = total.plus(v)
    return total


def pod_resources(pod_spec: Obj) -> dict[str, Quantity]:
    """Requests (limits where no request) summed over the pod's containers."""
    total: dict[str, Quantity] = {}
    for container in pod_spec.get("containers") or []:
        res = container.get("resources") or {}
        merged: dict[str, Any] = dict(res.get("requests") or {})
        for name, value in (res.get("limits") or {}).items():
            merged.setdefault(name, value)
        for name, value in merged.items():
            q = quantity(value, name)
            total[name] = total[name].plus(q) if name in total else q
    return total


def relevant_cluster_condition(cluster: Obj) -> Obj | None:
    """KubeRay's precedence: Provisioned > HeadPodReady > ReplicaFailure > Suspended >
    Suspending (the first that is True)."""
    for ctype in (
        "RayClusterProvisioned",
        "HeadPodReady",
        "ReplicaFailure",
        "RayClusterSuspended",
        "RayClusterSuspending",
    ):
        if condition_true(cluster, ctype):
            return find_condition(cluster, ctype)
    return None


def parse_type_name(arg: str, default_kind: str = "RayCluster") -> tuple[str, str]:
    """``NAME`` or ``TYPE/NAME`` -> (Ray kind, name)."""
    if "/" not in arg:
        return default_kind, arg
    parts = arg.split("/")
    if len(parts) != 2 or not parts[1]:
        raise CLIError(f"invalid resource type/name: {arg}")
    kind = RAY_KINDS.get(parts[0].lower())
    if kind is None:
        raise CLIError(f"unsupported resource type: {arg}")
    return kind, parts[1]


__all__ = [
    "CLUSTER_LABEL",
    "FIELD_MANAGER",
    "GOOGLE_TPU",
    "GROUP_LABEL",
    "IS_RAY_NODE_LABEL",
    "MAX_INT32",
    "NODE_TYPE_LABEL",
    "NVIDIA_GPU",
    "RAY_IMAGE",
    "RAY_KINDS",
    "RAY_VERSION",
    "add_all_namespaces_flag",
    "add_output_flag",
    "condition_true",
    "find_condition",
    "key_values",
    "merge_maps",
    "parse_type_name",
    "pod_ready",
    "pod_resources",
    "quantity",
    "relevant_cluster_condition",
    "sum_quantities",
    "validate_quantity",
]
