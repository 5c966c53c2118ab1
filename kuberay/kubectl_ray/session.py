"""``kubectl ray session (RAYCLUSTER | TYPE/NAME)``: forward local ports to the head pod
through the apiserver: dashboard 8265 and client 10001 for a RayCluster, dashboard
for a RayJob, dashboard and Serve 8000 for a RayService. Local ports can be moved
with ``--dashboard-port/--client-port/--serve-port`` (beyond KubeRay)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.kube import Client, NotFound
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import CLUSTER_LABEL, NODE_TYPE_LABEL, parse_type_name
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.portforward import bind_local, serve_forward

DASHBOARD, CLIENT, SERVE = 8265, 10001, 8000
PORTS = {
    "RayCluster": [("Ray Dashboard", DASHBOARD), ("Ray Interactive Client", CLIENT)],
    "RayJob": [("Ray Dashboard", DASHBOARD)],
    "RayService": [("Ray Dashboard", DASHBOARD), ("Ray Serve", SERVE)],
}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``session``."""
    p = sub.add_parser(
        "session", help="Forward local ports to the Ray resources.", parents=[common]
    )
    p.add_argument("resource", metavar="RAYCLUSTER | TYPE/NAME")
    p.add_argument("-v", "--verbose", action="store_true", help="verbose output")
    p.add_argument("--dashboard-port", type=int, default=DASHBOARD, help="local dashboard port")
    p.add_argument("--client-port", type=int, default=CLIENT, help="local Ray client port")
    p.add_argument("--serve-port", type=int, default=SERVE, help="local Serve port")
    p.set_defaults(handler=session)


async def cluster_of(client: Client, kind: str, name: str, ns: str) -> str:
    """The RayCluster behind ``kind/name``."""
    try:
        obj = await client.get(API_VERSION, kind, name, ns)
    except NotFound as exc:
        raise CLIError(f"unable to find {kind} {name} in namespace {ns}") from exc
    status = k8s.status(obj)
    if kind == "RayCluster":
        return name
    found = (
        status.get("rayClusterName")
        if kind == "RayJob"
        else ((status.get("activeServiceStatus") or {}).get("rayClusterName"))
    )
    if not found:
        raise CLIError(f"{kind} {name} has no RayCluster yet; try again when it has started")
    return str(found)


async def head_pod(client: Client, ns: str, cluster: str) -> str:
    """The name of the running head pod of ``cluster``."""
    pods, _ = await client.list_all(
        "v1", "Pod", ns, label_selector=f"{CLUSTER_LABEL}={cluster},{NODE_TYPE_LABEL}=head"
    )
    running = [p for p in pods if k8s.status(p).get("phase") == "Running"]
    if not running:
        raise CLIError(
            f"the head pod of RayCluster {cluster} is not running (kubectl ray why {cluster})"
        )
    return str(running[0]["metadata"]["name"])


async def session(env: Env, args: argparse.Namespace) -> None:
    kind, name = parse_type_name(args.resource)
    local = {DASHBOARD: args.dashboard_port, CLIENT: args.client_port, SERVE: args.serve_port}
    # Local ports first: a taken port fails now, with its number, before any API call.
    sockets = [(what, remote, bind_local(local[remote], what)) for what, remote in PORTS[kind]]
    try:
        client = await env.client()
        cluster = await cluster_of(client, kind, name, env.namespace)
        await head_pod(client, env.namespace, cluster)

        async def resolve() -> str:
            return await head_pod(client, env.namespace, cluster)

        servers = []
        env.out(f"Forwarding ports to the head pod of RayCluster {cluster}")
        for what, remote, sock in sockets:
            servers.append(
                await serve_forward(client, env.namespace, resolve, sock, remote, env.err)
            )
            env.out(f"{what}: http://localhost:{local[remote]}")
        env.out("Press Ctrl-C to stop.")
        await asyncio.gather(*(s.serve_forever() for s in servers))
    finally:
        for _, _, sock in sockets:
            sock.close()


__all__ = ["cluster_of", "head_pod", "register", "session"]
