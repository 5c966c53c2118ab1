"""``kubectl ray why KIND/NAME``: why a RayCluster, RayJob or RayService is not ready
(rules in :mod:`.diagnosis`; this module only reads the API). Plain text, ``-o json``
or ``-o yaml``. Exit code 0 when ready, 1 when not (so scripts can branch on it)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.diagnosis.inputs import (
    WARNING_EVENTS,
    auth_secret_to_read,
    cluster_events,
    clusters_to_read,
    events_selector,
    head_service_to_read,
)
from kuberay.diagnosis.rules import Diagnosis, Snapshot, diagnose
from kuberay.kube import Client, NotFound
from kuberay.kubectl_ray.common import CLUSTER_LABEL, add_output_flag, parse_type_name
from kuberay.kubectl_ray.concise import format_report
from kuberay.kubectl_ray.context import CLIError, Env
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
    items, _ = await client.list_all("v1", "Event", ns, field_selector=events_selector(kind, name))
    return items


async def cluster_snapshot(client: Client, cluster: Obj) -> Snapshot:
    """Pods, Events and the auth Secret of a RayCluster."""
    ns, name = cluster["metadata"]["namespace"], cluster["metadata"]["name"]
    pods, _ = await client.list_all("v1", "Pod", ns, label_selector=f"{CLUSTER_LABEL}={name}")
    own = await _events(client, ns, "RayCluster", name)
    warnings, _ = await client.list_all("v1", "Event", ns, field_selector=WARNING_EVENTS)
    secrets: dict[str, Obj | None] = {}
    secret_name = auth_secret_to_read(cluster)
    if secret_name is not None:
        secrets[secret_name] = await _get(client, "v1", "Secret", secret_name, ns)
    services: dict[str, Obj | None] = {}
    svc_name = head_service_to_read(cluster)
    if svc_name is not None:
        services[svc_name] = await _get(client, "v1", "Service", svc_name, ns)
    events = cluster_events(name, pods, own, warnings)
    return Snapshot(obj=cluster, pods=pods, events=events, secrets=secrets, services=services)


async def take_snapshot(client: Client, kind: str, name: str, ns: str) -> Snapshot:
    """Everything ``why`` looks at for ``kind/name``."""
    obj = await _get(client, API_VERSION, kind, name, ns)
    if obj is None:
        raise CLIError(f"{kind} {name} not found in namespace {ns}")
    if kind == "RayCluster":
        return await cluster_snapshot(client, obj)
    jobs: list[Obj] = []
    if kind == "RayJob":
        submitter = await _get(client, "batch/v1", "Job", name, ns)
        if submitter is not None:
            jobs.append(submitter)
    clusters: list[Snapshot] = []
    for cname in clusters_to_read(obj):
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
