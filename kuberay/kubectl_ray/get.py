"""``kubectl ray get cluster|workergroup|nodes|token`` with KubeRay's columns and
messages; ``-o json|yaml`` prints the underlying objects instead of the table."""

from __future__ import annotations

import argparse
import base64
from typing import TYPE_CHECKING, Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.controllers.builders.auth import auth_token_secret_name
from kuberay.gocompat.quantity import Quantity
from kuberay.kube import NotFound
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import (
    CLUSTER_LABEL,
    GOOGLE_TPU,
    GROUP_LABEL,
    IS_RAY_NODE_LABEL,
    MAX_INT32,
    NODE_TYPE_LABEL,
    NVIDIA_GPU,
    add_all_namespaces_flag,
    add_output_flag,
    pod_ready,
    pod_resources,
    quantity,
    relevant_cluster_condition,
)
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.listing import register_listings
from kuberay.kubectl_ray.output import age, as_list, emit, format_table

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

AUTH_TOKEN_KEY = "auth_token"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``get`` (alias ``list``) and its resources."""
    get = sub.add_parser(
        "get", aliases=["list"], help="Display one or many Ray resources.", parents=[common]
    )
    kinds = get.add_subparsers(dest="resource", metavar="RESOURCE", required=True)

    p = kinds.add_parser(
        "cluster", aliases=["clusters"], help="Get cluster information.", parents=[common]
    )
    p.add_argument("name", nargs="?", default="")
    add_all_namespaces_flag(p, "the requested clusters")
    add_output_flag(p, listing=True)
    p.set_defaults(handler=get_clusters)

    p = kinds.add_parser(
        "workergroup", aliases=["workergroups"], help="Get Ray worker groups", parents=[common]
    )
    p.add_argument("group", nargs="?", default="")
    p.add_argument("-c", "--ray-cluster", default="", help="Ray cluster")
    add_all_namespaces_flag(p, "workergroups")
    add_output_flag(p, listing=True)
    p.set_defaults(handler=get_workergroups)

    p = kinds.add_parser("node", aliases=["nodes"], help="Get Ray nodes", parents=[common])
    p.add_argument("node", nargs="?", default="")
    p.add_argument("-c", "--ray-cluster", default="", help="Ray cluster")
    add_all_namespaces_flag(p, "nodes")
    add_output_flag(p, listing=True)
    p.set_defaults(handler=get_nodes)

    p = kinds.add_parser("token", help="Get the auth token from the ray cluster.", parents=[common])
    p.add_argument("cluster")
    add_output_flag(p)
    p.set_defaults(handler=get_token)

    register_listings(kinds, common)


def _where(env: Env) -> str:
    return " in any namespace" if env.all_namespaces else f" in namespace {env.namespace}"


def no_resources(env: Env) -> None:
    """kubectl's note on stderr for an empty table (stdout stays empty, as KubeRay's)."""
    env.err(
        "No resources found"
        + ("" if env.all_namespaces else f" in {env.namespace} namespace")
        + "."
    )


# ----- clusters --------------------------------------------------------------------------
def cluster_rows(clusters: list[Obj]) -> list[list[object]]:
    """KubeRay's ``get cluster`` rows."""
    rows: list[list[object]] = []
    for c in clusters:
        status = k8s.status(c)
        cond = relevant_cluster_condition(c)
        rows.append(
            [
                c["metadata"]["name"],
                c["metadata"].get("namespace", ""),
                status.get("desiredWorkerReplicas", 0),
                status.get("availableWorkerReplicas", 0),
                str(quantity(status.get("desiredCPU", "0"))),
                str(quantity(status.get("desiredGPU", "0"))),
                str(quantity(status.get("desiredTPU", "0"))),
                str(quantity(status.get("desiredMemory", "0"))),
                cond.get("type", "") if cond else "",
                status.get("state", ""),
                age(c),
            ]
        )
    return rows


CLUSTER_HEADERS = [
    "Name",
    "Namespace",
    "Desired Workers",
    "Available Workers",
    "CPUs",
    "GPUs",
    "TPUs",
    "Memory",
    "Condition",
    "Status",
    "Age",
]


async def get_clusters(env: Env, args: argparse.Namespace) -> None:
    client = await env.client()
    field = f"metadata.name={args.name}" if args.name else None
    items, _ = await client.list_all(
        API_VERSION, "RayCluster", env.list_namespace(), field_selector=field
    )
    if args.name and not items:
        raise CLIError(
            f"Ray cluster {args.name} not found"
            + ("" if env.all_namespaces else f" in namespace {env.namespace}")
        )
    names = [f"raycluster.ray.io/{c['metadata']['name']}" for c in items]
    if emit(env, args.output, items[0] if args.name else as_list(items), names):
        return
    if not items:
        no_resources(env)
    env.stdout.write(format_table(CLUSTER_HEADERS, cluster_rows(items)))


# ----- worker groups ---------------------------------------------------------------------
def group_resources(group: Obj) -> dict[str, Quantity]:
    """A group's pod resources times its replicas (nothing when suspended)."""
    if group.get("suspend"):
        return {}
    replicas = int(group.get("replicas") or 0)
    per_pod = pod_resources(((group.get("template") or {}).get("spec")) or {})
    return {name: q.times(replicas) for name, q in per_pod.items()}


def workergroup_row(cluster: Obj, group: Obj, pods: list[Obj], all_ns: bool) -> list[object]:
    """One ``get workergroup`` row."""
    res = group_resources(group)
    ready = sum(1 for p in pods if k8s.labels(p).get(NODE_TYPE_LABEL) == "worker" and pod_ready(p))
    zero = Quantity.parse("0")
    row: list[object] = [cluster["metadata"].get("namespace", "")] if all_ns else []
    row += [
        group.get("groupName", ""),
        group.get("minReplicas") if group.get("minReplicas") is not None else 0,
        group.get("maxReplicas") if group.get("maxReplicas") is not None else MAX_INT32,
        f"{ready}/{group.get('replicas') or 0}",
        str(res.get("cpu", zero)),
        str(res.get(NVIDIA_GPU, zero)),
        str(res.get(GOOGLE_TPU, zero)),
        str(res.get("memory", zero)),
        cluster["metadata"]["name"],
    ]
    return row


WORKERGROUP_HEADERS = [
    "Name",
    "Min",
    "Max",
    "Replicas",
    "CPUs",
    "GPUs",
    "TPUs",
    "Memory",
    "Cluster",
]


async def get_workergroups(env: Env, args: argparse.Namespace) -> None:
    client = await env.client()
    field = f"metadata.name={args.ray_cluster}" if args.ray_cluster else None
    clusters, _ = await client.list_all(
        API_VERSION, "RayCluster", env.list_namespace(), field_selector=field
    )
    pairs = [
        (c, g)
        for c in clusters
        for g in k8s.spec(c).get("workerGroupSpecs") or []
        if not args.group or g.get("groupName") == args.group
    ]
    if args.group and not pairs:
        raise CLIError(
            f"Ray worker group {args.group} not found{_where(env)}"
            + (f" in Ray cluster {args.ray_cluster}" if args.ray_cluster else " in any Ray cluster")
        )
    rows: list[list[object]] = []
    documents: list[Obj] = []
    for cluster, group in pairs:
        selector = f"{NODE_TYPE_LABEL}=worker,{GROUP_LABEL}={group.get('groupName')}"
        selector += f",{CLUSTER_LABEL}={cluster['metadata']['name']}"
        pods, _ = await client.list_all(
            "v1", "Pod", cluster["metadata"]["namespace"], label_selector=selector
        )
        row = workergroup_row(cluster, group, pods, env.all_namespaces)
        rows.append(row)
        headers = (["Namespace"] if env.all_namespaces else []) + WORKERGROUP_HEADERS
        documents.append(
            {
                "cluster": cluster["metadata"]["name"],
                "namespace": cluster["metadata"]["namespace"],
                "summary": dict(zip([h.lower() for h in headers], row, strict=True)),
                "spec": group,
            }
        )
    names = [f"workergroup/{group.get('groupName')}" for _, group in pairs]
    if emit(env, args.output, documents, names):
        return
    headers = (["Namespace"] if env.all_namespaces else []) + WORKERGROUP_HEADERS
    if not rows:
        no_resources(env)
    env.stdout.write(format_table(headers, rows))


# ----- nodes -----------------------------------------------------------------------------
NODE_HEADERS = ["Name", "CPUs", "GPUs", "TPUs", "Memory", "Cluster", "Type", "Worker Group", "Age"]


def node_row(pod: Obj, all_ns: bool) -> list[object]:
    """One ``get nodes`` row (resources of the pod's first container's requests)."""
    labels = k8s.labels(pod)
    containers = k8s.spec(pod).get("containers") or [{}]
    requests = (containers[0].get("resources") or {}).get("requests") or {}
    row: list[object] = [pod["metadata"].get("namespace", "")] if all_ns else []
    row += [
        pod["metadata"]["name"],
        str(quantity(requests.get("cpu", "0"))),
        str(quantity(requests.get(NVIDIA_GPU, "0"))),
        str(quantity(requests.get(GOOGLE_TPU, "0"))),
        str(quantity(requests.get("memory", "0"))),
        labels.get(CLUSTER_LABEL, ""),
        labels.get(NODE_TYPE_LABEL, ""),
        labels.get(GROUP_LABEL, ""),
        age(pod),
    ]
    return row


async def get_nodes(env: Env, args: argparse.Namespace) -> None:
    client = await env.client()
    selector = f"{IS_RAY_NODE_LABEL}=yes"
    if args.ray_cluster:
        selector += f",{CLUSTER_LABEL}={args.ray_cluster}"
    field = f"metadata.name={args.node}" if args.node else None
    pods, _ = await client.list_all(
        "v1", "Pod", env.list_namespace(), label_selector=selector, field_selector=field
    )
    if args.node and not pods:
        raise CLIError(
            f"Ray node {args.node} not found{_where(env)}"
            + (f" in Ray cluster {args.ray_cluster}" if args.ray_cluster else " in any Ray cluster")
        )
    names = [f"pod/{p['metadata']['name']}" for p in pods]
    if emit(env, args.output, pods[0] if args.node else as_list(pods), names):
        return
    headers = (["Namespace"] if env.all_namespaces else []) + NODE_HEADERS
    if not pods:
        no_resources(env)
    env.stdout.write(format_table(headers, [node_row(p, env.all_namespaces) for p in pods]))


# ----- token -----------------------------------------------------------------------------
async def get_token(env: Env, args: argparse.Namespace) -> None:
    client = await env.client()
    ns, name = env.namespace, args.cluster
    try:
        cluster = await client.get(API_VERSION, "RayCluster", name, ns)
    except NotFound as exc:
        raise CLIError(f"failed to get RayCluster {ns}/{name}: {exc.message}") from exc
    auth = k8s.spec(cluster).get("authOptions") or {}
    if auth.get("mode") != "token":
        raise CLIError(f"RayCluster {ns}/{name} was not configured to use authentication tokens")
    secret_name = auth_token_secret_name(name, auth)
    try:
        secret = await client.get("v1", "Secret", secret_name, ns)
    except NotFound as exc:
        raise CLIError(f"failed to get secret {ns}/{secret_name}: {exc.message}") from exc
    raw = (secret.get("data") or {}).get(AUTH_TOKEN_KEY)
    if raw is None:
        raise CLIError(f"secret {ns}/{secret_name} does not have an auth_token")
    token = base64.b64decode(raw).decode()
    if emit(env, args.output, {"cluster": name, "namespace": ns, "token": token}):
        return
    env.stdout.write(token)
    env.stdout.flush()


__all__ = [
    "CLUSTER_HEADERS",
    "NODE_HEADERS",
    "WORKERGROUP_HEADERS",
    "cluster_rows",
    "get_clusters",
    "get_nodes",
    "get_token",
    "get_workergroups",
    "group_resources",
    "node_row",
    "register",
    "workergroup_row",
]
