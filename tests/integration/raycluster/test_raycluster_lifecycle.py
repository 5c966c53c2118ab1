"""Recreate upgrades, drop-in takeover of KubeRay-made pods, GCS FT cleanup, samples."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml

from kuberay.controllers.builders.hashing import (
    generate_hash_without_replicas_and_workers_to_delete,
)
from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator, start_operator
from tests.integration.raycluster.helpers import (
    RAY_IMAGE,
    events_for,
    get_cluster,
    pods_of,
    raycluster,
    wait_event_reasons,
)
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

WORKER = {"ray.io/node-type": "worker"}
HEAD = {"ray.io/node-type": "head"}


def names(pods: list[dict[str, Any]]) -> set[str]:
    return {p["metadata"]["name"] for p in pods}


async def test_recreate_upgrade_replaces_every_pod(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(
        raycluster("recreate", namespace, replicas=2, upgradeStrategy={"type": "Recreate"})
    )

    async def three() -> list[dict[str, Any]] | None:
        pods = await pods_of(kclient, namespace, "recreate")
        return pods if len(pods) == 3 else None

    old = names(await eventually(three, timeout=60))
    # Replicas-only changes never recreate.
    rc = await get_cluster(kclient, namespace, "recreate")
    groups = rc["spec"]["workerGroupSpecs"]
    groups[0]["replicas"] = 1
    await kclient.patch(
        "ray.io/v1", "RayCluster", "recreate", {"spec": {"workerGroupSpecs": groups}}, namespace
    )

    async def two() -> bool:
        return len(await pods_of(kclient, namespace, "recreate")) == 2

    await eventually(two, timeout=60)
    assert names(await pods_of(kclient, namespace, "recreate")) <= old
    # An image change recreates everything from the new spec.
    groups[0]["template"]["spec"]["containers"][0]["image"] = "rayproject/ray:2.53.0"
    await kclient.patch(
        "ray.io/v1", "RayCluster", "recreate", {"spec": {"workerGroupSpecs": groups}}, namespace
    )

    async def all_new() -> bool:
        pods = await pods_of(kclient, namespace, "recreate")
        return len(pods) == 2 and not (names(pods) & old)

    await eventually(all_new, timeout=60, message="pods recreated")
    worker = (await pods_of(kclient, namespace, "recreate", **WORKER))[0]
    assert worker["spec"]["containers"][0]["image"] == "rayproject/ray:2.53.0"
    await wait_event_reasons(kclient, namespace, "recreate", {"DeletedPod"})


async def test_takeover_of_kuberay_pods_changes_nothing(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    """Pods created by KubeRay (its version and hash annotations) are adopted as they are."""
    body = raycluster("adopted", namespace, replicas=2, upgradeStrategy={"type": "Recreate"})
    created = await kclient.create(body)
    # Pods as KubeRay built them: same builders, but KubeRay's version string and a hash
    # computed by Go (we cannot reproduce it byte for byte in every case: use a foreign one).
    head = build_head_pod(created, recreate_hash="KUBERAYGOHASHVALUE0000000000000")
    head["metadata"]["annotations"]["ray.io/kuberay-version"] = "v1.7.0"
    head["metadata"]["namespace"] = namespace
    made = [await kclient.create(head)]
    for i in range(2):
        w = build_worker_pod(created, "small-group", replica_index=i)
        w["metadata"]["namespace"] = namespace
        made.append(await kclient.create(w))
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "adopted-head-svc",
                "namespace": namespace,
                "labels": {
                    "ray.io/cluster": "adopted",
                    "ray.io/node-type": "head",
                    "ray.io/identifier": "adopted-head",
                    "app.kubernetes.io/name": "kuberay",
                    "app.kubernetes.io/created-by": "kuberay-operator",
                },
            },
            "spec": {
                "clusterIP": "None",
                "selector": {"ray.io/cluster": "adopted"},
                "ports": [{"name": "gcs-server", "port": 6379}],
            },
        }
    )
    original = {p["metadata"]["name"]: p["metadata"]["uid"] for p in made}
    async with start_operator(kclient, namespace):

        async def restamped() -> bool:
            pod = await kclient.get(
                "v1", "Pod", head["metadata"].get("name") or made[0]["metadata"]["name"], namespace
            )
            ann = pod["metadata"]["annotations"]
            return ann["ray.io/kuberay-version"] != "v1.7.0"

        await eventually(restamped, timeout=60, message="head pod restamped")
        await asyncio.sleep(3.0)
        pods = await pods_of(kclient, namespace, "adopted")
        assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == original
        head_now = await kclient.get("v1", "Pod", made[0]["metadata"]["name"], namespace)
        ours = generate_hash_without_replicas_and_workers_to_delete(created["spec"])
        assert head_now["metadata"]["annotations"]["ray.io/upgrade-strategy-recreate-hash"] == ours


async def test_gcs_ft_cleanup_finalizer_and_job(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace):
        body = raycluster(
            "ft", namespace, replicas=1, gcsFaultToleranceOptions={"redisAddress": "redis:6379"}
        )
        await kclient.create(body)

        async def has_finalizer() -> bool:
            rc = await get_cluster(kclient, namespace, "ft")
            return "ray.io/gcs-ft-redis-cleanup-finalizer" in (
                rc["metadata"].get("finalizers") or []
            )

        await eventually(has_finalizer, timeout=60)

        async def two_pods() -> bool:
            return len(await pods_of(kclient, namespace, "ft")) == 2

        await eventually(two_pods, timeout=60)
        head = (await pods_of(kclient, namespace, "ft", **HEAD))[0]
        assert head["metadata"]["annotations"]["ray.io/ft-enabled"] == "true"
        env = {e["name"]: e.get("value") for e in head["spec"]["containers"][0].get("env", [])}
        assert env["RAY_REDIS_ADDRESS"] == "redis:6379"

        await kclient.delete("ray.io/v1", "RayCluster", "ft", namespace)

        async def job() -> dict[str, Any] | None:
            try:
                return await kclient.get("batch/v1", "Job", "ft-redis-cleanup", namespace)
            except NotFound:
                return None

        cleanup = await eventually(job, timeout=60, message="cleanup job")
        assert cleanup["metadata"]["labels"]["ray.io/node-type"] == "redis-cleanup"
        assert cleanup["spec"]["backoffLimit"] == 0
        assert cleanup["spec"]["activeDeadlineSeconds"] == 300
        # What the Job controller would report when it is done.
        await kclient.patch_status(
            "batch/v1",
            "Job",
            "ft-redis-cleanup",
            {
                "status": {
                    "startTime": "2026-01-01T00:00:00Z",
                    "completionTime": "2026-01-01T00:00:10Z",
                    "succeeded": 1,
                    "conditions": [
                        {"type": "SuccessCriteriaMet", "status": "True"},
                        {"type": "Complete", "status": "True"},
                    ],
                }
            },
            namespace,
        )

        async def gone() -> bool:
            try:
                await get_cluster(kclient, namespace, "ft")
            except NotFound:
                return True
            return False

        await eventually(gone, timeout=60, message="cluster deleted after cleanup")


async def test_gcs_ft_stuck_deletion_is_forced_after_timeout(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace):
        body = raycluster(
            "stuck", namespace, replicas=0, gcsFaultToleranceOptions={"redisAddress": "redis:6379"}
        )
        body["metadata"]["annotations"] = {"ray.io/gcs-ft-deletion-timeout": "3"}
        await kclient.create(body)

        async def has_finalizer() -> bool:
            rc = await get_cluster(kclient, namespace, "stuck")
            return bool(rc["metadata"].get("finalizers"))

        await eventually(has_finalizer, timeout=60)
        await kclient.delete("ray.io/v1", "RayCluster", "stuck", namespace)

        async def gone() -> bool:
            try:
                await get_cluster(kclient, namespace, "stuck")
            except NotFound:
                return True
            return False

        await eventually(gone, timeout=60, message="force-deleted")

        # Events are written asynchronously
        await wait_event_reasons(kclient, namespace, "stuck", {"ForceDeletedStuckCluster"})


def _sample_clusters() -> list[Path]:
    out = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        if any(d.get("kind") == "RayCluster" for d in docs):
            out.append(path)
    return out


@requires_kuberay_samples
async def test_every_sample_raycluster_reconciles(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    clusters: list[dict[str, Any]] = []
    for path in _sample_clusters():
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "RayCluster":
                doc["metadata"]["namespace"] = namespace
                doc["metadata"]["name"] = f"s{len(clusters)}-{doc['metadata']['name']}"[:50].rstrip(
                    "-"
                )
                clusters.append(doc)
    async with start_operator(kclient, namespace, gates="RayClusterHistoryServer=true") as op:
        for doc in clusters:
            await kclient.create(doc)

        async def every_head_exists() -> list[str]:
            missing = []
            for doc in clusters:
                name = doc["metadata"]["name"]
                if doc["spec"].get("suspend"):
                    continue
                if not await pods_of(kclient, namespace, name, **HEAD):
                    missing.append(name)
            return missing

        async def settled() -> bool:
            missing = await every_head_exists()
            # Samples that need things a bare apiserver lacks (cert-manager, a named
            # ServiceAccount, ...) must at least have been reported, not crashed on
            # (Events are written asynchronously: polled with the pods).
            for name in missing:
                events = await events_for(kclient, namespace, name)
                assert any(e["type"] == "Warning" for e in events), (
                    f"{name}: no pod and no Warning event"
                )
            assert len(missing) <= len(clusters) // 4, missing
            return True

        await eventually(settled, timeout=120, interval=1.0, message="every sample reconciled")
        assert op.task.done() is False
    _ = RAY_IMAGE
