"""Every submission mode from creation to Complete, on the real apiserver with the
RayCluster controller running and a fake Ray dashboard behind the head pod."""

from __future__ import annotations

import pytest

from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import (
    finish_submitter,
    get_job,
    head_pod,
    make_ready,
    now_rfc3339,
    rayjob,
    state,
    wait_events,
    wait_gone,
    wait_job,
    wait_state,
)


async def test_k8sjob_mode_new_to_complete(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("k8s", namespace, shutdownAfterJobFinishes=True))

    job = await wait_state(kclient, namespace, "k8s", "Initializing")
    meta, status = job["metadata"], job["status"]
    assert "ray.io/rayjob-finalizer" in meta["finalizers"]
    cluster_name, job_id = status["rayClusterName"], status["jobId"]
    assert cluster_name.startswith("k8s-") and job_id.startswith("k8s-") and cluster_name != job_id
    assert status.get("startTime") and not status.get("dashboardURL")

    cluster = await eventually(
        lambda: kclient.get("ray.io/v1", "RayCluster", cluster_name, namespace), timeout=30
    )
    assert cluster["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"
    assert cluster["metadata"]["labels"]["ray.io/originated-from-cr-name"] == "k8s"
    assert cluster["metadata"]["annotations"] == {"foo": "bar"}
    owner = cluster["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("RayJob", "k8s", True)

    await make_ready(kclient, namespace, cluster_name, dashboard)
    job = await wait_state(kclient, namespace, "k8s", "Running")
    assert job["status"]["dashboardURL"] == (
        f"{cluster_name}-head-svc.{namespace}.svc.cluster.local:8265"
    )
    submitter = await kclient.get("batch/v1", "Job", "k8s", namespace)
    assert submitter["metadata"]["labels"]["app.kubernetes.io/created-by"] == "kuberay-operator"
    assert submitter["metadata"]["ownerReferences"][0]["name"] == "k8s"
    service = await eventually(
        lambda: kclient.get("v1", "Service", "k8s-head-svc", namespace), timeout=30
    )
    assert service["spec"]["selector"]["ray.io/cluster"] == cluster_name
    await wait_events(
        kclient,
        namespace,
        "k8s",
        {"CreatedRayCluster", "CreatedRayJobSubmitter", "CreatedService"},
    )

    # the submitter would submit; the fake has the job once it "ran"
    dashboard.add_job(job_id, status="RUNNING")
    await wait_job(kclient, namespace, "k8s", lambda j: j["status"].get("jobStatus") == "RUNNING")
    dashboard.set_job_status(job_id, "SUCCEEDED")
    job = await wait_job(
        kclient, namespace, "k8s", lambda j: j["status"].get("jobStatus") == "SUCCEEDED"
    )
    assert state(job) == "Running"  # not terminal before the submitter finished

    await finish_submitter(kclient, namespace, "k8s")
    job = await wait_state(kclient, namespace, "k8s", "Complete")
    status = job["status"]
    assert status["succeeded"] == 1 and status["failed"] == 0
    assert status.get("endTime") and status["rayJobInfo"].get("endTime")
    assert status["message"] == "Job finished successfully."

    # shutdownAfterJobFinishes (TTL 0): the cluster goes, the submitter Job stays
    await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, cluster_name)
    await kclient.get("batch/v1", "Job", "k8s", namespace)
    await wait_events(kclient, namespace, "k8s", {"DeletedRayCluster"})


async def test_http_mode_submits_on_not_found(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(
        rayjob("http", namespace, submissionMode="HTTPMode", metadata={"team": "a"})
    )
    job = await wait_state(kclient, namespace, "http", "Initializing")
    cluster_name, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    await make_ready(kclient, namespace, cluster_name, dashboard)
    await wait_state(kclient, namespace, "http", "Running")

    await eventually(lambda: job_id in dashboard.jobs, timeout=30, message="job submitted")
    submitted = dashboard.jobs[job_id]
    assert submitted["entrypoint"] == "python -c 'print(42)'"
    assert submitted["metadata"] == {"team": "a"}
    assert [r for r in dashboard.requests if r == ("POST", "/api/jobs/")] == [
        ("POST", "/api/jobs/")
    ]
    dashboard.set_job_status(job_id, "RUNNING")
    await wait_job(kclient, namespace, "http", lambda j: j["status"].get("jobStatus") == "RUNNING")
    dashboard.set_job_status(job_id, "SUCCEEDED")
    job = await wait_state(kclient, namespace, "http", "Complete")
    assert job["status"]["jobStatus"] == "SUCCEEDED" and job["status"]["succeeded"] == 1
    with pytest.raises(NotFound):
        await kclient.get("batch/v1", "Job", "http", namespace)  # no submitter Job in HTTPMode
    assert (await get_job(kclient, namespace, "http"))["status"].get("endTime")


async def test_interactive_mode_waits_for_a_job_id(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("inter", namespace, submissionMode="InteractiveMode"))
    job = await wait_state(kclient, namespace, "inter", "Initializing")
    assert not job["status"].get("jobId")
    await make_ready(kclient, namespace, job["status"]["rayClusterName"], dashboard)
    await wait_state(kclient, namespace, "inter", "Waiting")

    dashboard.add_job("fake-id", status="RUNNING")
    await kclient.patch("ray.io/v1", "RayJob", "inter", {"spec": {"jobId": "fake-id"}}, namespace)
    job = await wait_job(
        kclient, namespace, "inter", lambda j: j["status"].get("jobStatus") == "RUNNING"
    )
    assert job["status"]["jobId"] == "fake-id" and state(job) == "Running"
    dashboard.set_job_status("fake-id", "STOPPED")
    job = await wait_state(kclient, namespace, "inter", "Complete")
    assert job["status"]["jobStatus"] == "STOPPED"


async def test_sidecar_mode_follows_the_head_pod_container(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("side", namespace, submissionMode="SidecarMode"))
    job = await wait_state(kclient, namespace, "side", "Initializing")
    cluster_name, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    cluster = await eventually(
        lambda: kclient.get("ray.io/v1", "RayCluster", cluster_name, namespace), timeout=30
    )
    head_template = cluster["spec"]["headGroupSpec"]["template"]["spec"]
    assert head_template["restartPolicy"] == "Never"
    assert [c["name"] for c in head_template["containers"]][-1] == "ray-job-submitter"
    assert cluster["metadata"]["annotations"]["ray.io/disable-provisioned-head-restart"] == "true"

    await make_ready(kclient, namespace, cluster_name, dashboard)
    await wait_state(kclient, namespace, "side", "Running")
    dashboard.add_job(job_id, status="SUCCEEDED")
    await wait_job(
        kclient, namespace, "side", lambda j: j["status"].get("jobStatus") == "SUCCEEDED"
    )
    pod = await head_pod(kclient, namespace, cluster_name)
    await kclient.patch_status(
        "v1",
        "Pod",
        pod["metadata"]["name"],
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "ray-job-submitter",
                        "image": "ray",
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "terminated": {
                                "exitCode": 0,
                                "reason": "Completed",
                                "startedAt": "2026-01-01T00:00:00Z",
                                "finishedAt": now_rfc3339(),
                            }
                        },
                    }
                ]
            }
        },
        namespace,
    )
    job = await wait_state(kclient, namespace, "side", "Complete")
    assert job["status"]["succeeded"] == 1
    with pytest.raises(NotFound):
        await kclient.get("batch/v1", "Job", "side", namespace)


async def test_sidecar_submitter_exit_code_fails_the_rayjob(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("sidefail", namespace, submissionMode="SidecarMode"))
    job = await wait_state(kclient, namespace, "sidefail", "Initializing")
    cluster_name = job["status"]["rayClusterName"]
    await make_ready(kclient, namespace, cluster_name, dashboard)
    await wait_state(kclient, namespace, "sidefail", "Running")
    pod = await head_pod(kclient, namespace, cluster_name)
    terminated = {
        "exitCode": 1,
        "reason": "Error",
        "startedAt": now_rfc3339(),
        "finishedAt": now_rfc3339(),
    }
    status = {
        "name": "ray-job-submitter",
        "image": "ray",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"terminated": terminated},
    }
    await kclient.patch_status(
        "v1",
        "Pod",
        pod["metadata"]["name"],
        {"status": {"containerStatuses": [status]}},
        namespace,
    )
    job = await wait_state(kclient, namespace, "sidefail", "Failed")
    assert job["status"]["reason"] == "SubmissionFailed"
    assert job["status"]["message"].startswith(
        "Ray head pod container ray-job-submitter terminated with exit code 1: Error. "
    )
