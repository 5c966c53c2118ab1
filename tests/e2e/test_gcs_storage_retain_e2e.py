"""Embedded GCS storage (gate GCSFaultToleranceEmbeddedStorage) on the full cluster, where
kube-controller-manager's garbage collector runs: switching ``deletionPolicy`` to
``Retain`` after the claim exists keeps the claim (the data) when the cluster is
deleted; under ``DeleteWithCluster`` it is collected with the cluster."""

from __future__ import annotations

from typing import Any

from kuberay.kube import Client, NotFound
from tests.e2e.conftest import E2ECluster, OperatorStarter
from tests.e2e.harness import sample_raycluster
from tests.helpers import eventually

RAY = "ray.io/v1"
GATE = "--feature-gates=GCSFaultToleranceEmbeddedStorage=true"


async def _pvc(admin: Client, ns: str, name: str) -> dict[str, Any] | None:
    try:
        return await admin.get("v1", "PersistentVolumeClaim", name, ns)
    except NotFound:
        return None


async def _cluster_gone(admin: Client, ns: str, name: str) -> bool:
    try:
        await admin.get(RAY, "RayCluster", name, ns)
    except NotFound:
        return True
    return False


async def test_retain_switched_later_keeps_the_claim(
    e2e_cluster: E2ECluster, start_operator: OperatorStarter, admin: Client, ns: str
) -> None:
    op = start_operator("gcs-retain", leader_election=False, extra_args=[GATE])
    await op.wait_ready(e2e_cluster.timeout(60))
    bodies = {}
    for name in ("kept", "dropped"):
        body = sample_raycluster(name, ns, replicas=0)
        body["spec"]["gcsFaultToleranceOptions"] = {"backend": "rocksdb", "storage": {}}
        bodies[name] = await admin.create(body)

    for name in ("kept", "dropped"):
        uid = bodies[name]["metadata"]["uid"]

        async def owned(name: str = name, uid: str = uid) -> bool:
            pvc = await _pvc(admin, ns, f"{name}-gcs-pvc")
            refs = (pvc or {}).get("metadata", {}).get("ownerReferences") or []
            return [r["uid"] for r in refs] == [uid]

        await eventually(owned, timeout=e2e_cluster.timeout(30), message=f"{name} PVC owned")

    await admin.patch(
        RAY,
        "RayCluster",
        "kept",
        {"spec": {"gcsFaultToleranceOptions": {"storage": {"deletionPolicy": "Retain"}}}},
        ns,
    )

    async def released() -> bool:
        pvc = await _pvc(admin, ns, "kept-gcs-pvc")
        return pvc is not None and not pvc["metadata"].get("ownerReferences")

    await eventually(released, timeout=e2e_cluster.timeout(30), message="owner ref removed")
    for name in ("kept", "dropped"):
        await admin.delete(RAY, "RayCluster", name, ns)

    async def dropped_collected() -> bool:
        if not await _cluster_gone(admin, ns, "dropped"):
            return False
        pvc = await _pvc(admin, ns, "dropped-gcs-pvc")
        return pvc is None or bool(pvc["metadata"].get("deletionTimestamp"))

    # The garbage collector is working: the DeleteWithCluster claim goes with its cluster.
    await eventually(dropped_collected, timeout=e2e_cluster.timeout(60), message="GC ran")
    assert await _cluster_gone(admin, ns, "kept")
    kept = await _pvc(admin, ns, "kept-gcs-pvc")
    assert kept is not None and not kept["metadata"].get("deletionTimestamp")
