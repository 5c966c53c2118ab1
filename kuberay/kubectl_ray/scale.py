"""``kubectl ray scale cluster NAME -w GROUP [-r N] [--min-replicas N] [--max-replicas N]``."""

from __future__ import annotations

import argparse
from typing import Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.kube import ApiError
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import FIELD_MANAGER, MAX_INT32
from kuberay.kubectl_ray.context import CLIError, Env


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``scale cluster``."""
    scale = sub.add_parser("scale", help="Scale a Ray resource", parents=[common])
    kinds = scale.add_subparsers(dest="resource", metavar="RESOURCE", required=True)
    p = kinds.add_parser("cluster", help="Scale a Ray cluster", parents=[common])
    p.add_argument("cluster")
    p.add_argument("-w", "--worker-group", required=True, help="worker group")
    p.add_argument(
        "-r", "--replicas", type=int, default=-1, help="Desired number of replicas in worker group"
    )
    p.add_argument(
        "--min-replicas",
        type=int,
        default=-1,
        help="Minimum desired number of replicas for worker group",
    )
    p.add_argument(
        "--max-replicas",
        type=int,
        default=-1,
        help="Maximum desired number of replicas for worker group",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="wait until the group's ready pods match its replicas, with progress (beyond KubeRay)",
    )
    p.add_argument("--timeout", default="5m", help="the timeout for --wait")
    p.set_defaults(handler=scale_cluster)


def validate(args: argparse.Namespace) -> None:
    """KubeRay's flag checks (a value of -1 means "not given")."""
    lo, hi, want = args.min_replicas, args.max_replicas, args.replicas
    if not args.worker_group:
        raise CLIError("must specify -w/--worker-group")
    if lo == -1 and hi == -1 and want == -1:
        raise CLIError(
            "must specify at least one of --replicas, --min-replicas, or --max-replicas "
            "(non-negative integers)"
        )
    for value, flag in ((lo, "--min-replicas"), (hi, "--max-replicas"), (want, "--replicas")):
        if value != -1 and value < 0:
            raise CLIError(f"{flag} must be a non-negative integer")
    if lo != -1 and hi != -1 and lo > hi:
        raise CLIError(f"--min-replicas ({lo}) cannot be greater than --max-replicas ({hi})")
    if want != -1:
        if lo != -1 and want < lo:
            raise CLIError(f"--replicas ({want}) cannot be less than --min-replicas ({lo})")
        if hi != -1 and want > hi:
            raise CLIError(f"--replicas ({want}) cannot be greater than --max-replicas ({hi})")


async def scale_cluster(env: Env, args: argparse.Namespace) -> None:
    validate(args)
    ns, name, group_name = env.namespace, args.cluster, args.worker_group
    client = await env.client()
    try:
        cluster = await client.get(API_VERSION, "RayCluster", name, ns)
    except ApiError as exc:
        raise CLIError(
            f"failed to scale worker group {group_name} in Ray cluster {name} in namespace "
            f"{ns}: {exc.message or exc}"
        ) from exc
    groups = k8s.spec(cluster).get("workerGroupSpecs") or []
    index = next((i for i, g in enumerate(groups) if g.get("groupName") == group_name), -1)
    if index < 0:
        raise CLIError(
            f"worker group {group_name} not found in Ray cluster {name} in namespace {ns}. "
            f"Available worker groups: {', '.join(str(g.get('groupName')) for g in groups)}"
        )
    group = groups[index]
    current = {
        "minReplicas": group.get("minReplicas") if group.get("minReplicas") is not None else 0,
        "maxReplicas": group.get("maxReplicas")
        if group.get("maxReplicas") is not None
        else MAX_INT32,
        "replicas": group.get("replicas") if group.get("replicas") is not None else 0,
    }
    final = dict(current)
    changes: list[str] = []
    for field, value, label in (
        ("minReplicas", args.min_replicas, "minReplicas"),
        ("maxReplicas", args.max_replicas, "maxReplicas"),
        ("replicas", args.replicas, "Replicas"),
    ):
        if value >= 0 and value != current[field]:
            final[field] = value
            changes.append(f"Scaled {label}: {current[field]} to {value}")
    if final["minReplicas"] > final["maxReplicas"]:
        raise CLIError(
            f"cannot set --min-replicas ({final['minReplicas']}) greater than --max-replicas "
            f"({final['maxReplicas']})"
        )
    if final["replicas"] < final["minReplicas"]:
        raise CLIError(
            f"cannot set --replicas ({final['replicas']}) less than --min-replicas "
            f"({final['minReplicas']})"
        )
    if final["replicas"] > final["maxReplicas"]:
        raise CLIError(
            f"cannot set --replicas ({final['replicas']}) greater than --max-replicas "
            f"({final['maxReplicas']})"
        )
    if not changes:
        env.out(
            f"Worker group {group_name} in Ray cluster {name} in namespace {ns} already matches "
            "the requested configuration. Skipping."
        )
        if args.wait:
            await wait_group(env, name, group_name, final["replicas"], args.timeout)
        return
    # Only the changed fields of this group, guarded by the group's name and the
    # object's resourceVersion (no read-modify-write of the whole spec).
    patch: list[dict[str, Any]] = [
        {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": cluster["metadata"]["resourceVersion"],
        },
        {"op": "test", "path": f"/spec/workerGroupSpecs/{index}/groupName", "value": group_name},
    ]
    for field in ("minReplicas", "maxReplicas", "replicas"):
        if final[field] != current[field]:
            patch.append(
                {
                    "op": "add",
                    "path": f"/spec/workerGroupSpecs/{index}/{field}",
                    "value": final[field],
                }
            )
    try:
        await client.patch(
            API_VERSION,
            "RayCluster",
            name,
            patch,
            ns,
            patch_type="json",
            field_manager=FIELD_MANAGER,
        )
    except ApiError as exc:
        raise CLIError(
            f"failed to update worker group {group_name} in Ray cluster {name} in namespace "
            f"{ns}: {exc.message or exc}"
        ) from exc
    env.out(
        f"Updated worker group {group_name} in Ray cluster {name} in namespace {ns} "
        f"({', '.join(changes)})"
    )
    if args.wait:
        await wait_group(env, name, group_name, final["replicas"], args.timeout)


async def wait_group(env: Env, cluster: str, group: str, replicas: int, timeout: str) -> None:
    """Until ``replicas`` pods of the group are ready and no more run (progress on stderr)."""
    from kuberay.kubectl_ray.progress import pods_ready
    from kuberay.kubectl_ray.waiting import parse_duration, poll

    try:
        seconds = parse_duration(timeout)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    client = await env.client()

    async def probe() -> tuple[bool | None, str]:
        ready = await pods_ready(client, env.namespace, cluster, group)
        if ready == replicas:
            return True, ""
        return None, f"Scaling worker group {group} of {cluster}: pods ready {ready}/{replicas}"

    await poll(env, probe, timeout=seconds, what=f"worker group {group} of {cluster}")
    env.out(f"Worker group {group} of Ray cluster {cluster} has {replicas} ready pods")


__all__ = ["register", "scale_cluster", "validate"]
