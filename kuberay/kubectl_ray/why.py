"""``kubectl ray why KIND/NAME``: why a RayCluster, RayJob or RayService is not ready
(rules in :mod:`.diagnosis`; this module only reads the API). Plain text, ``-o json``
or ``-o yaml``. Exit code 0 when ready, 1 when not (so scripts can branch on it)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.controllers.builders.auth import auth_token_secret_name
from kuberay.controllers.builders.names import head_service_name
from kuberay.kube import Client, NotFound
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import CLUSTER_LABEL, add_output_flag, parse_type_name
from kuberay.kubectl_ray.concise import format_report
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.diagnosis.rules import Diagnosis, Snapshot, diagnose
from kuberay.kubectl_ray.output import emit

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``why``."""
    p = sub.add_parser(
        "why",
        help="Explain why a RayCluster, RayJob or RayService is not ready",
        parents=[common],
    )
    p.add_argument(
        "resource", metavar="KIND/NAME", help="e.g. raycluster/demo (bare NAME: RayCluster)"
    )
    add_output_flag(p)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="every finding with its whole message (default: one line each, repeats once)",
    )
    p.set_defaults(handler=why)


async def _get(client: Client, api_version: str, kind: str, name: str, ns: str) -> Obj | None:
    try:
        obj = await client.get(api_version, kind, name, ns)
    except NotFound:
        return None
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    return obj


async def _events(client: Client, ns: str, kind: str, name: str) -> list[Obj]:
    """Every Event about ``kind/name``."""
    items, _ = await client.list_all(
        "v1", "Event", ns, field_selector=f"involvedObject.kind={kind},involvedObject.name={name}"
    )
    return items


async def cluster_snapshot(client: Client, cluster: Obj) -> Snapshot:
    """Pods, Events and the auth Secret of a RayCluster."""
    ns, name = cluster["metadata"]["namespace"], cluster["metadata"]["name"]
    pods, _ = await client.list_all("v1", "Pod", ns, label_selector=f"{CLUSTER_LABEL}={name}")
    names = {name} | {p["metadata"]["name"] for p in pods}
    own = await _events(client, ns, "RayCluster", name)
    warnings, _ = await client.list_all("v1", "Event", ns, field_selector="type=Warning")
    events = own + [
        e
        for e in warnings
        if (e.get("involvedObject") or {}).get("name") in names
        and (e.get("involvedObject") or {}).get("kind") != "RayCluster"
    ]
    secrets: dict[str, Obj | None] = {}
    auth = k8s.spec(cluster).get("authOptions") or {}
    if auth.get("mode") == "token":
        secret_name = auth_token_secret_name(name, auth)
        secrets[secret_name] = await _get(client, "v1", "Secret", secret_name, ns)
    services: dict[str, Obj | None] = {}
    if cluster.get("status"):
        svc_name = head_service_name(cluster)
        services[svc_name] = await _get(client, "v1", "Service", svc_name, ns)
    return Snapshot(obj=cluster, pods=pods, events=events, secrets=secrets, services=services)


async def take_snapshot(client: Client, kind: str, name: str, ns: str) -> Snapshot:
    """Everything ``why`` looks at for ``kind/name``."""
    obj = await _get(client, API_VERSION, kind, name, ns)
    if obj is None:
        raise CLIError(f"{kind} {name} not found in namespace {ns}")
    if kind == "RayCluster":
        return await cluster_snapshot(client, obj)
    status = k8s.status(obj)
    cluster_names: list[str] = []
    jobs: list[Obj] = []
    if kind == "RayJob":
        if status.get("rayClusterName"):
            cluster_names.append(status["rayClusterName"])
        submitter = await _get(client, "batch/v1", "Job", name, ns)
        if submitter is not None:
            jobs.append(submitter)
    else:
        for which in ("activeServiceStatus", "pendingServiceStatus"):
            cname = (status.get(which) or {}).get("rayClusterName")
            if cname:
                cluster_names.append(cname)
    clusters: list[Snapshot] = []
    for cname in cluster_names:
        cluster = await _get(client, API_VERSION, "RayCluster", cname, ns)
        if cluster is not None:
            clusters.append(await cluster_snapshot(client, cluster))
    events = await _events(client, ns, kind, name)
    return Snapshot(obj=obj, events=events, clusters=clusters, jobs=jobs)


def format_diagnosis(d: Diagnosis, verbose: bool = False) -> str:
    """The plain-text report (concise; ``verbose``: every finding in full)."""
    return format_report(d, verbose)


async def why(env: Env, args: argparse.Namespace) -> int:
    kind, name = parse_type_name(args.resource)
    client = await env.client()
    snap = await take_snapshot(client, kind, name, env.namespace)
    result = diagnose(snap)
    if not emit(env, args.output, result.as_dict()):
        env.stdout.write(format_diagnosis(result, args.verbose))
    return 0 if result.ready else 1


__all__ = ["cluster_snapshot", "format_diagnosis", "register", "take_snapshot", "why"]
