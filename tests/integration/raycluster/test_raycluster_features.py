"""Feature areas of the RayCluster controller on the real apiserver: ingress, token auth,
multi-host groups, serve service, embedded GCS storage, history-server collector."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator, start_operator
from tests.integration.raycluster.helpers import (
    get_cluster,
    pods_of,
    raycluster,
    wait_event_reasons,
    wait_observed,
    wait_status,
)

HEAD = {"ray.io/node-type": "head"}
WORKER = {"ray.io/node-type": "worker"}


async def get_or_none(
    client: Client, api_version: str, kind: str, name: str, ns: str
) -> dict[str, Any] | None:
    try:
        return await client.get(api_version, kind, name, ns)
    except NotFound:
        return None


async def test_ingress_created_and_drift_repaired(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    body = raycluster("ing", namespace, replicas=0)
    body["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx", "foo": "bar"}
    body["spec"]["headGroupSpec"]["enableIngress"] = True
    body["spec"]["headGroupSpec"]["ingressOptions"] = {"host": "ray.example.com"}
    await kclient.create(body)

    async def ingress() -> dict[str, Any] | None:
        return await get_or_none(
            kclient, "networking.k8s.io/v1", "Ingress", "ing-head-ingress", namespace
        )

    ing = await eventually(ingress, timeout=60, message="ingress")
    assert ing["spec"]["ingressClassName"] == "nginx"
    assert ing["metadata"]["annotations"] == {"foo": "bar"}
    rule = ing["spec"]["rules"][0]
    assert rule["host"] == "ray.example.com"
    path = rule["http"]["paths"][0]
    assert (path["path"], path["pathType"]) == ("/", "Prefix")
    assert path["backend"]["service"] == {"name": "ing-head-svc", "port": {"number": 8265}}
    # Someone edits the host: the operator puts it back.
    ing["spec"]["rules"][0]["host"] = "evil.example.com"
    await kclient.update(ing)

    async def repaired() -> bool:
        live = await ingress()
        return live is not None and live["spec"]["rules"][0]["host"] == "ray.example.com"

    # The cluster itself did not change, so the repair comes from the owned-object watch.
    await eventually(repaired, timeout=60, message="ingress drift repaired")
    # Events are written by the recorder's background task: wait for them.
    await wait_event_reasons(kclient, namespace, "ing", {"CreatedIngress", "UpdatedIngress"})


async def test_token_auth_secret_and_env(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    body = raycluster(
        "auth", namespace, replicas=1, rayVersion="2.52.0", authOptions={"mode": "token"}
    )
    await kclient.create(body)

    async def secret() -> dict[str, Any] | None:
        return await get_or_none(kclient, "v1", "Secret", "auth", namespace)

    sec = await eventually(secret, timeout=60, message="auth secret")
    token = base64.b64decode(sec["data"]["auth_token"])
    assert len(token) >= 32
    assert sec["metadata"]["labels"]["ray.io/cluster"] == "auth"

    async def two_pods() -> list[dict[str, Any]] | None:
        pods = await pods_of(kclient, namespace, "auth")
        return pods if len(pods) == 2 else None

    for pod in await eventually(two_pods, timeout=60):
        env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
        assert env["RAY_AUTH_MODE"]["value"] == "token"
        assert env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"] == {
            "name": "auth",
            "key": "auth_token",
        }
    await asyncio.sleep(1.0)
    again = await secret()
    assert again is not None and again["data"] == sec["data"]  # never rotated


async def test_multi_host_group_and_headless_service(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    body = raycluster("mh", namespace, replicas=2)
    body["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    await kclient.create(body)

    async def four() -> list[dict[str, Any]] | None:
        pods = await pods_of(kclient, namespace, "mh", **WORKER)
        return pods if len(pods) == 4 else None

    pods = await eventually(four, timeout=60, message="2 replicas x 2 hosts")
    by_replica: dict[str, list[dict[str, str]]] = {}
    for p in pods:
        labels = p["metadata"]["labels"]
        by_replica.setdefault(labels["ray.io/worker-group-replica-name"], []).append(labels)
    assert len(by_replica) == 2
    for members in by_replica.values():
        assert sorted(m["ray.io/replica-host-index"] for m in members) == ["0", "1"]
        assert len({m["ray.io/worker-group-replica-index"] for m in members}) == 1
    svc = await eventually(
        lambda: get_or_none(kclient, "v1", "Service", "mh-headless", namespace),
        timeout=60,
        message="headless service",
    )
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["selector"] == {"ray.io/cluster": "mh", "ray.io/node-type": "worker"}
    # Losing one host deletes its whole replica and a complete one replaces it.
    await wait_observed(operator, namespace, "mh")
    victim = pods[0]
    await kclient.delete("v1", "Pod", victim["metadata"]["name"], namespace, grace_period_seconds=0)
    doomed = victim["metadata"]["labels"]["ray.io/worker-group-replica-name"]

    async def rebuilt() -> bool:
        now = await pods_of(kclient, namespace, "mh", **WORKER)
        names = {p["metadata"]["labels"]["ray.io/worker-group-replica-name"] for p in now}
        return len(now) == 4 and doomed not in names

    await eventually(rebuilt, timeout=60, message="replica replaced atomically")
    await wait_status(
        kclient,
        namespace,
        "mh",
        lambda rc: (rc.get("status") or {}).get("desiredWorkerReplicas") == 4,
        message="desiredWorkerReplicas 4",
    )


async def test_serve_service_opt_in(operator: Operator, kclient: Client, namespace: str) -> None:
    body = raycluster("srv", namespace, replicas=0)
    body["metadata"]["annotations"] = {"ray.io/enable-serve-service": "true"}
    body["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "serve", "containerPort": 8000}
    ]
    await kclient.create(body)

    async def svc() -> dict[str, Any] | None:
        return await get_or_none(kclient, "v1", "Service", "srv-serve-svc", namespace)

    service = await eventually(svc, timeout=60)
    assert service["spec"]["selector"] == {"ray.io/cluster": "srv"}
    assert service["metadata"]["labels"]["ray.io/serve"] == "srv-serve"
    assert [(p["name"], p["port"]) for p in service["spec"]["ports"]] == [("serve", 8000)]


async def test_embedded_gcs_storage_pvc(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace, gates="GCSFaultToleranceEmbeddedStorage=true"):
        body = raycluster("rocks", namespace, replicas=0)
        body["spec"]["gcsFaultToleranceOptions"] = {
            "backend": "rocksdb",
            "storage": {"size": "2Gi"},
        }
        await kclient.create(body)

        async def pvc() -> dict[str, Any] | None:
            return await get_or_none(
                kclient, "v1", "PersistentVolumeClaim", "rocks-gcs-pvc", namespace
            )

        claim = await eventually(pvc, timeout=60, message="gcs pvc")
        assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"

        async def head() -> dict[str, Any] | None:
            heads = await pods_of(kclient, namespace, "rocks", **HEAD)
            return heads[0] if heads else None

        pod = await eventually(head, timeout=60)
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        assert env["RAY_gcs_storage"] == "rocksdb"
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        assert volumes["gcs-storage"]["persistentVolumeClaim"]["claimName"] == "rocks-gcs-pvc"
        rc = await get_cluster(kclient, namespace, "rocks")
        assert "ray.io/gcs-ft-redis-cleanup-finalizer" not in (
            rc["metadata"].get("finalizers") or []
        )


async def test_history_server_collector_sidecar(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace, gates="RayClusterHistoryServer=true"):
        body = raycluster("hist", namespace, replicas=1)
        body["spec"]["historyServerOptions"] = {
            "collectorOptions": {
                "image": "collector:1",
                "env": [
                    {"name": "STORAGE_BACKEND", "value": "s3"},
                    {"name": "S3_REGION", "value": "us-east-1"},
                ],
            }
        }
        await kclient.create(body)

        async def two() -> list[dict[str, Any]] | None:
            pods = await pods_of(kclient, namespace, "hist")
            return pods if len(pods) == 2 else None

        for pod in await eventually(two, timeout=60):
            names = [c["name"] for c in pod["spec"]["containers"]]
            assert "ray-history-collector" in names
