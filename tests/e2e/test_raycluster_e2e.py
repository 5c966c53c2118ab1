"""The operator process against a full cluster: identity, probes/metrics, a RayCluster's
life (ready, scaled up and down, deleted with every child garbage-collected). One
operator (leader election on) serves the whole module."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kuberay.kube import Client, Forbidden, NotFound
from tests.e2e.conftest import E2ECluster, OperatorIdentity
from tests.e2e.harness import (
    CONTROLLER,
    OperatorProcess,
    cluster_pods,
    metric_sum,
    node_type,
    pod_ready,
    record_timing,
    sample_raycluster,
    set_replicas,
    worker_group,
    workers,
)
from tests.helpers import eventually

RAY = "ray.io/v1"


async def get_cluster(client: Client, namespace: str, name: str) -> dict[str, Any]:
    return await client.get(RAY, "RayCluster", name, namespace)


async def wait_ready(
    client: Client, namespace: str, name: str, want_workers: int, timeout: float
) -> dict[str, Any]:
    """Wait for state ready with ``want_workers`` ready workers and a ready head."""

    async def ready() -> dict[str, Any] | None:
        rc = await get_cluster(client, namespace, name)
        status = rc.get("status") or {}
        if status.get("state") != "ready":
            return None
        if status.get("readyWorkerReplicas") != want_workers:
            return None
        pods = await cluster_pods(client, namespace, name)
        heads = [p for p in pods if node_type(p) == "head"]
        ws = [p for p in pods if node_type(p) == "worker"]
        if len(heads) != 1 or len(ws) != want_workers:
            return None
        if not all(pod_ready(p) for p in pods):
            return None
        return rc

    result: dict[str, Any] = await eventually(
        ready, timeout=timeout, interval=0.1, message=f"{name} ready with {want_workers} workers"
    )
    return result


async def wait_scaled(
    cluster: E2ECluster, client: Client, namespace: str, name: str, n: int
) -> None:
    """``n`` workers: ready ones on the local cluster (kwok runs anything at once); on an
    existing cluster just ``n`` worker pods (they may not fit or pull the image in time)."""
    if cluster.local:
        await wait_ready(client, namespace, name, n, cluster.timeout(60))
        return

    async def exact() -> bool:
        return len(await workers(client, namespace, name)) == n

    await eventually(
        exact, timeout=cluster.timeout(60), interval=0.1, message=f"{n} workers of {name}"
    )


# --------------------------------------------------------------------------- tests


async def test_operator_runs_as_its_service_account(
    operator_identity: OperatorIdentity, shared_operator: OperatorProcess, admin: Client
) -> None:
    """The operator's kubeconfig authenticates as the ServiceAccount, which is no admin."""
    client = await Client.from_kubeconfig(operator_identity.kubeconfig, qps=0, burst=1)
    try:
        review = await client.request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            verb="create",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )
        assert review["status"]["userInfo"]["username"] == operator_identity.username
        # what the RBAC grants ...
        await client.list(RAY, "RayCluster", limit=1)
        await client.list("v1", "Pod", limit=1)
        # ... and what it must not
        try:
            await client.list("v1", "Node", limit=1)
        except Forbidden:
            pass
        else:
            raise AssertionError("the operator's identity may list nodes: is it cluster-admin?")
        try:
            await client.get("rbac.authorization.k8s.io/v1", "ClusterRole", "cluster-admin")
        except Forbidden:
            pass
        else:
            raise AssertionError("the operator's identity may read ClusterRoles")
    finally:
        await client.close()


async def test_probes_and_metrics(shared_operator: OperatorProcess, admin: Client, ns: str) -> None:
    assert await shared_operator.probe("/healthz") == 200
    assert await shared_operator.probe("/readyz") == 200
    # Histograms have samples only once observed: reconcile something first, whatever
    # ran before this test.
    before = await shared_operator.reconciles()
    await admin.create(sample_raycluster("metrics", ns, replicas=0))

    async def reconciled() -> bool:
        return await shared_operator.reconciles() > before

    await eventually(reconciled, timeout=60, message="a reconcile counted in /metrics")

    async def complete() -> bool:  # scraped until every series is there
        samples = await shared_operator.metrics()
        for name in (
            "controller_runtime_reconcile_total",
            "controller_runtime_reconcile_errors_total",
            "controller_runtime_reconcile_time_seconds_bucket",
            "controller_runtime_max_concurrent_reconciles",
            "controller_runtime_active_workers",
            "workqueue_depth",
            "workqueue_adds_total",
            "workqueue_queue_duration_seconds_bucket",
            "workqueue_work_duration_seconds_bucket",
            "workqueue_retries_total",
            "leader_election_master_status",
        ):
            assert name in samples, f"/metrics lacks {name}"
        controllers = {labels.get("controller") for labels, _ in samples["workqueue_depth"]}
        assert CONTROLLER in controllers, controllers
        assert metric_sum(samples, "controller_runtime_max_concurrent_reconciles") >= 1
        return True

    await eventually(complete, timeout=60, message="/metrics series")


async def test_sample_becomes_ready(
    e2e_cluster: E2ECluster, shared_operator: OperatorProcess, admin: Client, ns: str
) -> None:
    """(a) 1 head + 2 workers, all Running/Ready, a head service, state ready."""
    body = sample_raycluster("sample", ns, replicas=2)
    before = await shared_operator.reconciles()
    began = time.monotonic()
    await admin.create(body)
    rc = await wait_ready(admin, ns, "sample", 2, e2e_cluster.timeout(60))
    record_timing("RayCluster 1 head + 2 workers: create -> ready", time.monotonic() - began)

    status = rc["status"]
    assert status["desiredWorkerReplicas"] == 2
    assert status["availableWorkerReplicas"] == 2
    assert (status.get("head") or {}).get("podIP"), status
    pods = await cluster_pods(admin, ns, "sample")
    assert sorted(node_type(p) for p in pods) == ["head", "worker", "worker"]
    uids = {rc["metadata"]["uid"]}
    for pod in pods:
        owners = pod["metadata"].get("ownerReferences") or []
        assert [(o["kind"], o["uid"], o.get("controller")) for o in owners] == [
            ("RayCluster", *uids, True)
        ], owners
        if node_type(pod) == "worker":
            assert pod["metadata"]["labels"]["ray.io/group"] == worker_group(body)
    svc = await admin.get("v1", "Service", "sample-head-svc", ns)
    assert svc["spec"]["selector"]["ray.io/node-type"] == "head"
    assert await shared_operator.reconciles() > before


async def test_scale_up_and_down(
    e2e_cluster: E2ECluster, shared_operator: OperatorProcess, admin: Client, ns: str
) -> None:
    """(b) replicas 2 -> 5 -> 1 through the spec; no overshoot either way."""
    await admin.create(sample_raycluster("scale", ns, replicas=2, max_replicas=6))
    await wait_scaled(e2e_cluster, admin, ns, "scale", 2)

    began = time.monotonic()
    await set_replicas(admin, ns, "scale", 5)
    await wait_scaled(e2e_cluster, admin, ns, "scale", 5)
    record_timing("scale 2 -> 5 workers ready", time.monotonic() - began)
    await asyncio.sleep(1.0)
    assert len(await workers(admin, ns, "scale")) == 5

    began = time.monotonic()
    await set_replicas(admin, ns, "scale", 1)
    await wait_scaled(e2e_cluster, admin, ns, "scale", 1)
    record_timing("scale 5 -> 1 worker", time.monotonic() - began)

    async def terminated() -> bool:
        pods = await cluster_pods(admin, ns, "scale", include_terminating=True)
        return len(pods) == 2

    await eventually(terminated, timeout=e2e_cluster.timeout(60), message="extra workers gone")
    await asyncio.sleep(1.0)
    assert len(await workers(admin, ns, "scale")) == 1

    async def desired_one() -> bool:  # the status is written after the pods change
        rc = await get_cluster(admin, ns, "scale")
        return (rc.get("status") or {}).get("desiredWorkerReplicas") == 1

    await eventually(desired_one, timeout=e2e_cluster.timeout(60), message="desired 1 worker")


async def test_delete_garbage_collects_children(
    e2e_cluster: E2ECluster, shared_operator: OperatorProcess, admin: Client, ns: str
) -> None:
    """(c) deleting the RayCluster removes every pod and service it owned (kcm's GC)."""
    await admin.create(sample_raycluster("gc", ns, replicas=2))
    await wait_scaled(e2e_cluster, admin, ns, "gc", 2)
    uid = (await get_cluster(admin, ns, "gc"))["metadata"]["uid"]

    async def owned() -> list[tuple[str, str]]:
        found = []
        for kind in ("Pod", "Service", "Secret", "ServiceAccount"):
            items, _ = await admin.list_all("v1", kind, ns)
            for item in items:
                refs = item["metadata"].get("ownerReferences") or []
                if any(r.get("uid") == uid for r in refs):
                    found.append((kind, item["metadata"]["name"]))
        return found

    children = await owned()
    kinds = sorted({k for k, _ in children})
    assert "Pod" in kinds and "Service" in kinds, children

    began = time.monotonic()
    await admin.delete(RAY, "RayCluster", "gc", ns)

    async def all_gone() -> bool:
        try:
            await get_cluster(admin, ns, "gc")
            return False
        except NotFound:
            pass
        labelled = await cluster_pods(admin, ns, "gc", include_terminating=True)
        services, _ = await admin.list_all("v1", "Service", ns, label_selector="ray.io/cluster=gc")
        return not labelled and not services and not await owned()

    await eventually(all_gone, timeout=e2e_cluster.timeout(60), message="children collected")
    record_timing(f"delete -> {len(children)} children collected", time.monotonic() - began)
    await asyncio.sleep(1.0)  # and the operator does not bring any back
    assert not await cluster_pods(admin, ns, "gc", include_terminating=True)
