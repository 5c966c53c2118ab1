"""``kubectl ray log --follow`` (stream a Ray node's output, as ``kubectl logs -f``) and
``--link gke`` (KubeRay's Cloud Logging query link)."""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import TYPE_CHECKING

from kuberay.kube import objects as k8s
from kuberay.kube.paths import segment
from kuberay.kubectl_ray.common import CLUSTER_LABEL, NODE_TYPE_LABEL
from kuberay.kubectl_ray.context import CLIError, Env

if TYPE_CHECKING:
    from kuberay.kube import Client
    from kuberay.kube.objects import Object as Obj

CONSOLE = "https://console.cloud.google.com/logs/query;query="


def gke_query(namespace: str, cluster: str, node_type: str) -> str:
    """The Cloud Logging query for the cluster's Ray containers."""
    lines = [
        'resource.type="k8s_container"',
        f'resource.labels.namespace_name="{namespace}"',
        f'labels."k8s-pod/ray_io/cluster"="{cluster}"',
    ]
    if node_type in ("head", "worker"):
        lines.append(f'labels."k8s-pod/ray_io/node-type"="{node_type}"')
    else:
        lines.append('labels."k8s-pod/ray_io/is-ray-node"="yes"')
    return "\n".join(lines)


async def print_gke_link(env: Env, client: Client, cluster: str, node_type: str) -> None:
    """Print the Cloud Console link; warn (stderr) when the head pod has no ``fluentbit``
    container or the context does not look like a GKE one (``gke_PROJECT_...``)."""
    heads, _ = await client.list_all(
        "v1",
        "Pod",
        env.namespace,
        label_selector=f"{NODE_TYPE_LABEL}=head,{CLUSTER_LABEL}={cluster}",
    )
    if heads:
        names = [c.get("name") for c in k8s.spec(heads[0]).get("containers") or []]
        if "fluentbit" not in names:
            env.err(
                "Warning: The head pod does not have a 'fluentbit' container. Logs might not "
                "be exported to Google Cloud Logging."
            )
    url = CONSOLE + urllib.parse.quote_plus(gke_query(env.namespace, cluster, node_type))
    context = env.connection().context
    if context.startswith("gke_"):
        project = context.split("_", 2)[1]
        url += "?project=" + urllib.parse.quote_plus(project)
    else:
        env.err(
            "Warning: The current kubectl context does not appear to be a GKE cluster. The "
            "generated link may not work."
        )
    env.out(url)


async def _stream(env: Env, client: Client, pod: Obj, prefix: str) -> None:
    meta = pod["metadata"]
    container = (k8s.spec(pod).get("containers") or [{}])[0].get("name", "")
    path = (
        f"/api/v1/namespaces/{segment('namespace', meta['namespace'])}"
        f"/pods/{segment('pod name', meta['name'])}/log"
    )
    import aiohttp

    headers = await client._headers(None, "*/*")
    async with client.session.get(
        client.host + path,
        params={"container": container, "follow": "true"},
        headers=headers,
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=client.request_timeout),
        server_hostname=client._ssl_server_name,
    ) as resp:
        if resp.status >= 400:
            body = (await resp.read()).decode(errors="replace")
            raise CLIError(
                f"cannot follow the log of pod {meta['name']}: HTTP {resp.status} {body}"
            )
        async for line in resp.content:
            env.stdout.write(prefix + line.decode(errors="replace"))
            env.stdout.flush()


async def follow(env: Env, client: Client, cluster: str, node_type: str) -> None:
    """Stream the output of the head pod (``--node-type worker``: of every worker pod,
    each line prefixed with ``[pod]``) until the streams end or Ctrl-C."""
    which = "worker" if node_type == "worker" else "head"
    pods, _ = await client.list_all(
        "v1",
        "Pod",
        env.namespace,
        label_selector=f"{CLUSTER_LABEL}={cluster},{NODE_TYPE_LABEL}={which}",
    )
    pods = [p for p in pods if k8s.spec(p).get("nodeName")]
    if not pods:
        raise CLIError(f"No running {which} node found for Ray cluster {cluster}")
    many = len(pods) > 1
    await asyncio.gather(
        *(_stream(env, client, p, f"[{p['metadata']['name']}] " if many else "") for p in pods)
    )


__all__ = ["follow", "gke_query", "print_gke_link"]
