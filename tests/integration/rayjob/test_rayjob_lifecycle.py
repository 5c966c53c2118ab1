"""Suspend/resume, clusterSelector, validation, deletion while running, managedBy,
the "why it waits" messages and idle passes (RJ-22..RJ-30, RJ-35..RJ-37)."""

from __future__ import annotations

import asyncio

from kuberay.controllers.rayjob.why import WAIT_PREFIX
from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually, wait_quiet
from tests.integration.rayjob.conftest import Operator, start_operator
from tests.integration.rayjob.helpers import (
    finish_submitter,
    get_job,
    head_pod,
    make_ready,
    rayjob,
    set_pod_status,
    state,
    wait_events,
    wait_gone,
    wait_job,
    wait_state,
)


async def test_created_suspended_then_resumed(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("susp", namespace, suspend=True, shutdownAfterJobFinishes=True))
    job = await wait_state(kclient, namespace, "susp", "Suspended")
    assert not job["status"].get("rayClusterName") and not job["status"].get("jobId")
    items, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert items == []

    await kclient.patch("ray.io/v1", "RayJob", "susp", {"spec": {"suspend": False}}, namespace)
    job = await wait_job(
        kclient,
        namespace,
        "susp",
        lambda j: state(j) == "Initializing" and bool(j["status"].get("rayClusterName")),
    )
    await make_ready(kclient, namespace, job["status"]["rayClusterName"], dashboard)
    await wait_state(kclient, namespace, "susp", "Running")
    await kclient.get("batch/v1", "Job", "susp", namespace)


async def test_suspending_a_running_job_is_atomic(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("atom", namespace, shutdownAfterJobFinishes=True))
    job = await wait_state(kclient, namespace, "atom", "Initializing")
    cluster = job["status"]["rayClusterName"]
    await make_ready(kclient, namespace, cluster, dashboard)
    await wait_state(kclient, namespace, "atom", "Running")
    # a finalizer of someone else's keeps the cluster from going away
    await kclient.patch(
        "ray.io/v1", "RayCluster", cluster, {"metadata": {"finalizers": ["test/block"]}}, namespace
    )
    await kclient.patch("ray.io/v1", "RayJob", "atom", {"spec": {"suspend": True}}, namespace)
    await wait_state(kclient, namespace, "atom", "Suspending")
    await wait_events(kclient, namespace, "atom", {"DeletedRayCluster", "DeletedRayJobSubmitter"})
    job = await wait_job(
        kclient,
        namespace,
        "atom",
        lambda j: "test/block" in (j["status"].get("message") or ""),
        message="the blocking finalizer named",
    )
    assert job["status"]["message"].startswith(WAIT_PREFIX)

    await kclient.patch("ray.io/v1", "RayJob", "atom", {"spec": {"suspend": False}}, namespace)
    await asyncio.sleep(1)
    assert state(await get_job(kclient, namespace, "atom")) == "Suspending"

    await kclient.patch(
        "ray.io/v1", "RayCluster", cluster, {"metadata": {"finalizers": []}}, namespace
    )
    # suspend is false again: Suspended -> New -> Initializing on a new cluster
    job = await wait_job(
        kclient,
        namespace,
        "atom",
        lambda j: state(j) == "Initializing" and j["status"].get("rayClusterName") != cluster,
        message="re-initialised on a new cluster",
    )
    assert not (job["status"].get("message") or "").startswith(WAIT_PREFIX)


async def test_cluster_selector_uses_an_existing_cluster(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    selector = {"ray.io/cluster": "shared"}
    await kclient.create(rayjob("sel", namespace, clusterSelector=selector, rayClusterSpec=None))
    await wait_events(kclient, namespace, "sel", {"RayClusterNotFound"})
    job = await wait_job(
        kclient,
        namespace,
        "sel",
        lambda j: "does not exist" in (j["status"].get("message") or ""),
        message="why it waits",
    )
    assert state(job) == "Initializing" and job["status"]["rayClusterName"] == "shared"

    spec = rayjob("x", namespace)["spec"]["rayClusterSpec"]
    await kclient.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "shared", "namespace": namespace},
            "spec": spec,
        }
    )
    await make_ready(kclient, namespace, "shared", dashboard)
    job = await wait_state(kclient, namespace, "sel", "Running")
    assert not (job["status"].get("message") or "").startswith(WAIT_PREFIX)
    dashboard.add_job(job["status"]["jobId"], status="SUCCEEDED")
    await finish_submitter(kclient, namespace, "sel")
    await wait_state(kclient, namespace, "sel", "Complete")
    await asyncio.sleep(2)
    await kclient.get("ray.io/v1", "RayCluster", "shared", namespace)  # never deleted
    try:
        await kclient.get("v1", "Service", "sel-head-svc", namespace)
        raise AssertionError("no RayJob head Service in clusterSelector mode")
    except NotFound:
        pass


async def test_invalid_rayjob_is_validation_failed(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(rayjob("bad", namespace, suspend=True, shutdownAfterJobFinishes=False))
    job = await wait_state(kclient, namespace, "bad", "ValidationFailed")
    assert job["status"]["reason"] == "ValidationFailed"
    assert "shutdownAfterJobFinishes" in job["status"]["message"]
    assert not job["metadata"].get("finalizers")
    events = await wait_events(kclient, namespace, "bad", {"InvalidRayJobSpec"})
    note = next(e["note"] for e in events if e["reason"] == "InvalidRayJobSpec")
    assert note.startswith(f"{namespace}/bad: ") and "suspend" in note
    items, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert items == []


async def test_deleting_a_running_rayjob_stops_its_job(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("del", namespace))
    job = await wait_state(kclient, namespace, "del", "Initializing")
    await make_ready(kclient, namespace, job["status"]["rayClusterName"], dashboard)
    await wait_state(kclient, namespace, "del", "Running")
    job_id = job["status"]["jobId"]
    dashboard.add_job(job_id, status="RUNNING")
    await wait_job(kclient, namespace, "del", lambda j: j["status"].get("jobStatus") == "RUNNING")

    await kclient.delete("ray.io/v1", "RayJob", "del", namespace)
    await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, "del")
    await eventually(
        lambda: ("POST", f"/api/jobs/{job_id}/stop") in dashboard.requests,
        timeout=30,
        message="stop requested",
    )
    assert dashboard.jobs[job_id]["status"] == "STOPPED"


async def test_rayjob_managed_by_kueue_is_left_alone(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(rayjob("kueue", namespace, managedBy="kueue.x-k8s.io/multikueue"))
    await asyncio.sleep(3)
    job = await get_job(kclient, namespace, "kueue")
    assert not job.get("status") and not job["metadata"].get("finalizers")


async def test_why_it_waits_for_an_image_that_cannot_be_pulled(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(rayjob("pull", namespace))
    job = await wait_state(kclient, namespace, "pull", "Initializing")
    pod = await head_pod(kclient, namespace, job["status"]["rayClusterName"])
    await set_pod_status(
        kclient,
        pod,
        {
            "phase": "Pending",
            "containerStatuses": [
                {
                    "name": "ray-head",
                    "image": "rayproject/ray:nope",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {
                        "waiting": {
                            "reason": "ImagePullBackOff",
                            "message": 'Back-off pulling image "rayproject/ray:nope"',
                        }
                    },
                }
            ],
        },
    )
    job = await wait_job(
        kclient,
        namespace,
        "pull",
        lambda j: "ImagePullBackOff" in (j["status"].get("message") or ""),
        message="the image pull problem",
    )
    assert "rayproject/ray:nope" in job["status"]["message"]
    assert state(job) == "Initializing"

    await set_pod_status(
        kclient,
        pod,
        {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/3 nodes are available: 3 Insufficient cpu.",
                }
            ],
            "containerStatuses": [],
        },
    )
    await wait_job(
        kclient,
        namespace,
        "pull",
        lambda j: "Insufficient cpu" in (j["status"].get("message") or ""),
        message="the scheduler's message",
    )


async def test_an_unchanged_world_makes_no_writes(
    crds_installed: None,
    kclient: Client,
    kubeconfig_path: object,
    namespace: str,
    dashboard: FakeDashboard,
) -> None:
    op_client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)  # type: ignore[arg-type]
    try:
        async with start_operator(op_client, namespace):
            await kclient.create(rayjob("idle", namespace))
            job = await wait_state(kclient, namespace, "idle", "Initializing")
            await make_ready(kclient, namespace, job["status"]["rayClusterName"], dashboard)
            dashboard.add_job(job["status"]["jobId"], status="RUNNING")
            await wait_job(
                kclient, namespace, "idle", lambda j: j["status"].get("jobStatus") == "RUNNING"
            )
            await wait_quiet(lambda: op_client.stats.writes, quiet=4.0, timeout=60)
            writes = op_client.stats.writes
            rv = (await get_job(kclient, namespace, "idle"))["metadata"]["resourceVersion"]
            # several 3 s requeues and dashboard refreshes over an unchanged world
            await asyncio.sleep(7)
            assert op_client.stats.writes == writes
            assert (await get_job(kclient, namespace, "idle"))["metadata"]["resourceVersion"] == rv
    finally:
        await op_client.close()
