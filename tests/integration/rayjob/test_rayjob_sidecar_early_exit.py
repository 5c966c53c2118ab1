"""SidecarMode: the submitter container ends before the RayCluster was ever ``ready``.

Seen on the real node (tests/e2e/test_rayjob_real.py under load): Ray's head readiness probe
lags, the sample job finishes first, the ``ray-job-submitter`` container terminates (exit 0)
and, the head pod's restartPolicy being Never, the head pod stays ``Ready=False``
("containers with unready status: [ray-job-submitter]") for good. The RayCluster never
becomes ``ready``, so a RayJob that waits for ``ready`` in Initializing waits forever although
its Ray job SUCCEEDED (KubeRay v1.7 does the same: ray-project/kuberay#4945, #4199).

A user expects the RayJob to end as the job did: Complete/SUCCEEDED after a successful
submitter, Failed after a failed one (what kuberay#4946 proposes for the failure case).
"""

from __future__ import annotations

import pytest

from kuberay.kube import Client
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import (
    head_pod,
    now_rfc3339,
    rayjob,
    state,
    wait_job,
    wait_state,
)

pytestmark = pytest.mark.xfail(
    strict=True,
    reason="controller bug: SidecarMode RayJob stays Initializing when its submitter container "
    "ends before the RayCluster is ready (kuberay/controllers/rayjob/machine.py _initializing)",
)


async def _head_done_before_ready(
    client: Client, namespace: str, cluster: str, dashboard: FakeDashboard, exit_code: int
) -> None:
    """The head pod as the kubelet reports it: Ray up, the submitter container terminated,
    the pod not Ready (restartPolicy Never: it never will be)."""
    pod = await head_pod(client, namespace, cluster)
    now = now_rfc3339()
    terminated = {
        "exitCode": exit_code,
        "reason": "Completed" if exit_code == 0 else "Error",
        "startedAt": now,
        "finishedAt": now,
    }
    status = {
        "phase": "Running",
        "podIP": dashboard.host,
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "ContainersNotReady",
                "message": "containers with unready status: [ray-job-submitter]",
            },
            {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady"},
        ],
        "containerStatuses": [
            {
                "name": "ray-head",
                "image": "rayproject/ray:2.52.0",
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": now}},
            },
            {
                "name": "ray-job-submitter",
                "image": "rayproject/ray:2.52.0",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "started": False,
                "state": {"terminated": terminated},
            },
        ],
    }
    await client.patch_status("v1", "Pod", pod["metadata"]["name"], {"status": status}, namespace)


async def test_submitter_succeeded_before_the_cluster_was_ready(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("early", namespace, submissionMode="SidecarMode"))
    job = await wait_state(kclient, namespace, "early", "Initializing")
    cluster, job_id = job["status"]["rayClusterName"], job["status"]["jobId"]
    dashboard.add_job(job_id, status="SUCCEEDED")
    await _head_done_before_ready(kclient, namespace, cluster, dashboard, exit_code=0)

    async def cluster_saw_the_pod() -> bool:
        rc = await kclient.get("ray.io/v1", "RayCluster", cluster, namespace)
        conditions = (rc.get("status") or {}).get("conditions") or []
        return any(c["type"] == "HeadPodReady" and c["status"] == "False" for c in conditions)

    await eventually(cluster_saw_the_pod, timeout=30, message="RayCluster sees the head pod")
    done = await wait_job(
        kclient,
        namespace,
        "early",
        lambda j: state(j) in ("Complete", "Failed"),
        timeout=30,
        message="terminal although the cluster never became ready",
    )
    assert (state(done), done["status"].get("jobStatus")) == ("Complete", "SUCCEEDED")


async def test_submitter_failed_before_the_cluster_was_ready(
    operator: Operator, kclient: Client, namespace: str, dashboard: FakeDashboard
) -> None:
    await kclient.create(rayjob("early-fail", namespace, submissionMode="SidecarMode"))
    job = await wait_state(kclient, namespace, "early-fail", "Initializing")
    cluster = job["status"]["rayClusterName"]
    await _head_done_before_ready(kclient, namespace, cluster, dashboard, exit_code=1)
    done = await wait_job(
        kclient,
        namespace,
        "early-fail",
        lambda j: state(j) in ("Complete", "Failed"),
        timeout=30,
        message="terminal although the cluster never became ready",
    )
    assert state(done) == "Failed"
