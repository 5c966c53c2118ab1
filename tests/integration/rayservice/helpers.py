"""RayService test helpers: manifests, fake dashboards on 127.x addresses, status waits."""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

from kuberay.kube import Client, NotFound
from kuberay.testing import FakeDashboard
from tests.helpers import eventually
from tests.integration.operator_harness import wait_for
from tests.integration.raycluster.helpers import set_running

RS = ("ray.io/v1", "RayService")

SERVE_CONFIG = """\
applications:
  - name: app1
    import_path: fruit.deployment_graph
    route_prefix: /fruit
    deployments:
      - name: MangoStand
        num_replicas: 1
      - name: PearStand
        num_replicas: 1
"""


def rayservice(
    name: str, namespace: str, *, image: str = "rayproject/ray:2.46.0", **spec: Any
) -> dict[str, Any]:
    """A small RayService: one head (default ports, incl. dashboard 8265 and serve 8000),
    one worker group with no replicas, one Serve application ``app1``."""
    body: dict[str, Any] = {
        "serveConfigV2": SERVE_CONFIG,
        "rayClusterConfig": {
            "rayVersion": "2.46.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "ray-head", "image": image}]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small-group",
                    "replicas": 0,
                    "minReplicas": 0,
                    "maxReplicas": 2,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [{"name": "ray-worker", "image": image}]}},
                }
            ],
        },
    }
    body.update(spec)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }


def loopback_ip() -> str:
    """A random 127.x.y.z (other tests may run fake dashboards on the machine at once)."""
    return f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"


@contextlib.asynccontextmanager
async def fake_dashboard() -> AsyncIterator[FakeDashboard]:
    """A fake dashboard on 8265 plus its Serve proxy on 8000 at a fresh loopback address."""
    for _ in range(20):
        fake = FakeDashboard(loopback_ip(), 8265, serve_port=8000)
        try:
            await fake.start()
        except OSError:
            continue
        try:
            yield fake
        finally:
            await fake.stop()
        return
    raise RuntimeError("no free loopback address for a fake dashboard")


async def get_rs(client: Client, namespace: str, name: str) -> dict[str, Any]:
    return await client.get(*RS, name, namespace)


def cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def active_name(rs: dict[str, Any]) -> str:
    return str(
        ((rs.get("status") or {}).get("activeServiceStatus") or {}).get("rayClusterName") or ""
    )


def pending_name(rs: dict[str, Any]) -> str:
    return str(
        ((rs.get("status") or {}).get("pendingServiceStatus") or {}).get("rayClusterName") or ""
    )


async def wait_rs(
    client: Client,
    namespace: str,
    name: str,
    check: Callable[[dict[str, Any]], Any],
    *,
    timeout: float = 60.0,
    message: str = "status",
) -> dict[str, Any]:
    """Wait until ``check(rayservice)`` holds; returns the RayService."""

    found: dict[str, Any] = await wait_for(
        lambda: get_rs(client, namespace, name),
        check,
        timeout=timeout,
        message=f"{name}: {message}",
    )
    return found


async def head_pod(
    client: Client, namespace: str, cluster: str, *, timeout: float = 60.0
) -> dict[str, Any]:
    """The cluster's head pod, once the RayCluster controller made it."""

    async def find() -> dict[str, Any] | None:
        pods, _ = await client.list_all(
            "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster},ray.io/node-type=head"
        )
        return pods[0] if pods else None

    pod: dict[str, Any] = await eventually(find, timeout=timeout, message=f"head pod of {cluster}")
    return pod


async def serve_head(
    client: Client, namespace: str, cluster: str, fake: FakeDashboard
) -> dict[str, Any]:
    """Make ``cluster``'s head pod Running and Ready at the fake dashboard's address."""
    pod = await head_pod(client, namespace, cluster)
    await set_running(client, pod, ip=fake.host)
    return pod


async def wait_put(fake: FakeDashboard, count: int = 1, *, timeout: float = 60.0) -> None:
    """Wait until the fake received ``count`` Serve config PUTs."""

    def enough(seen: int) -> bool:
        assert seen >= count, f"{seen} PUTs"
        return True

    await wait_for(
        lambda: puts(fake),
        enough,
        timeout=timeout,
        interval=0.1,
        message=f"{count} Serve config PUTs",
    )


def puts(fake: FakeDashboard) -> int:
    return len([r for r in fake.requests if r == ("PUT", "/api/serve/applications/")])


def run_apps(fake: FakeDashboard) -> None:
    """Every application the fake knows becomes RUNNING (deployments HEALTHY)."""
    for app in list(fake.applications):
        fake.set_app_status(app, "RUNNING")


async def add_ready_endpoint(
    client: Client, namespace: str, service: str, uid: str, ip: str, *, slice_name: str = ""
) -> None:
    """What the EndpointSlice controller would write for one ready pod behind ``service``."""
    await client.create(
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": slice_name or f"{service}-{uid[:5]}",
                "namespace": namespace,
                "labels": {"kubernetes.io/service-name": service},
            },
            "addressType": "IPv4",
            "endpoints": [
                {
                    "addresses": [ip],
                    "conditions": {"ready": True},
                    "targetRef": {"kind": "Pod", "name": "p", "namespace": namespace, "uid": uid},
                }
            ],
            "ports": [{"name": "serve", "port": 8000, "protocol": "TCP"}],
        }
    )


async def cluster_exists(client: Client, namespace: str, name: str) -> bool:
    try:
        await client.get("ray.io/v1", "RayCluster", name, namespace)
    except NotFound:
        return False
    return True


async def deploy(
    client: Client, namespace: str, name: str, fake: FakeDashboard, **spec: Any
) -> dict[str, Any]:
    """Create a RayService and bring it to an active cluster serving ``app1`` (RUNNING)."""
    await client.create(rayservice(name, namespace, **spec))
    rs = await wait_rs(client, namespace, name, pending_name, message="pending cluster named")
    cluster = pending_name(rs)
    await serve_head(client, namespace, cluster, fake)
    await wait_put(fake)
    run_apps(fake)
    return await wait_rs(
        client, namespace, name, lambda r: active_name(r) == cluster, message="promoted"
    )
