"""RayJobs on real Ray: KubeRay's ``ray-job.sample.yaml`` on the real node.

The operator runs on the host (its ServiceAccount, shipped RBAC) and may dial the real
node's pod network (``KUBERAY_DASHBOARD_ALLOWED_NETWORKS``), so HTTPMode submissions and
every job-status lookup go to the real Ray dashboard of the head pod.

* the sample reaches SUCCEEDED / Complete in K8sJobMode, HTTPMode and SidecarMode, with the
  job's real output in the submitter Job's pod log, the head pod's submitter container log
  and the dashboard's job logs; ``shutdownAfterJobFinishes`` deletes the cluster;
* a failing entrypoint ends Failed / AppFailed after ``backoffLimit: 1`` retry, each attempt
  on a new RayCluster;
* a sleeping job past ``activeDeadlineSeconds`` ends STOPPED in Ray (issue 44, item 2).

The sample is changed only where this machine needs it: container resources shrunk to fit
2 cores, and the ``pip`` part of its runtime environment removed with the one line of the
job checking it — pods cannot reach PyPI (no packet leaves the machine). The runtime
environment's ``env_vars`` stay, and the job still asserts them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import yaml

from kuberay.kube import Client, NotFound
from tests.e2e.harness import OperatorProcess, cluster_pods, node_type, pod_ready, record_timing
from tests.e2e.realcluster import (
    POD_CIDR,
    RealCluster,
    RealIdentity,
    diagnose_namespace,
    host_operator,
    wait_for,
)
from tests.kuberay_samples import requires_kuberay_samples, sample

SAMPLE = sample("ray-job.sample.yaml")  # KubeRay's, unchanged
pytestmark = requires_kuberay_samples
#: What the sample job prints (its counter actor, five increments).
EXPECTED_OUTPUT = [f"test_counter got {i}" for i in range(1, 6)]


@pytest.fixture(scope="module")
async def rayjob_operator(
    real_cluster: RealCluster, real_identity: RealIdentity
) -> AsyncIterator[OperatorProcess]:
    """kuberay-operator on the host, NOT allowed to dial the real node's pod network (only
    loopback, its default): every dashboard call goes through the apiserver's service proxy,
    the fallback an operator run outside its cluster uses (issue 26, item 15)."""
    async with host_operator(
        "rayjob-real-operator", real_cluster, real_identity, allow_pod_network=False
    ) as op:
        yield op


# --------------------------------------------------------------------------- the sample


def rayjob_sample(name: str, ns: str, **spec: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """KubeRay's ray-job.sample.yaml as (RayJob named ``name``, its code ConfigMap), in
    ``ns``, resources shrunk, runtime env without ``pip``; ``spec`` overrides spec keys."""
    docs = [d for d in yaml.safe_load_all(SAMPLE.read_text()) if d]
    job = next(d for d in docs if d["kind"] == "RayJob")
    config_map = next(d for d in docs if d["kind"] == "ConfigMap")
    job["metadata"] = {"name": name, "namespace": ns}
    config_map["metadata"]["namespace"] = ns
    runtime_env = yaml.safe_load(job["spec"]["runtimeEnvYAML"])
    runtime_env.pop("pip")
    job["spec"]["runtimeEnvYAML"] = yaml.safe_dump(runtime_env)
    code = config_map["data"]["sample_code.py"]
    config_map["data"]["sample_code.py"] = "\n".join(
        line for line in code.splitlines() if "requests.__version__" not in line
    )
    cluster = job["spec"]["rayClusterSpec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["resources"] = {
        "limits": {"cpu": "1", "memory": "2Gi"},
        "requests": {"cpu": "100m", "memory": "512Mi"},
    }
    for group in cluster["workerGroupSpecs"]:
        for container in group["template"]["spec"]["containers"]:
            container["resources"] = {
                "limits": {"cpu": "1", "memory": "1Gi"},
                "requests": {"cpu": "100m", "memory": "256Mi"},
            }
    job["spec"].update(spec)
    return job, config_map


def test_sample_runtime_env_and_pod_cidr_as_this_module_assumes() -> None:
    """The only changes to the sample are the ones described above; the pod network the
    operator is allowed to dial is the real node's."""
    from hack.cluster import realnode

    assert POD_CIDR == realnode.POD_CIDR
    job, config_map = rayjob_sample("s", "ns")
    assert yaml.safe_load(job["spec"]["runtimeEnvYAML"]) == {
        "env_vars": {"counter_name": "test_counter"}
    }
    code = config_map["data"]["sample_code.py"]
    assert 'assert self.name == "test_counter"' in code and "requests.__version__" not in code
    assert "submissionMode" not in job["spec"] and job["spec"]["entrypoint"] == (
        "python /home/ray/samples/sample_code.py"
    )


# --------------------------------------------------------------------------- fixtures


# --------------------------------------------------------------------------- helpers


async def diagnose(admin: Client, cluster: RealCluster, ns: str, name: str) -> str:
    """The RayJob's status, the namespace's Events, pods and their log tails."""
    return await diagnose_namespace(admin, cluster, ns, "RayJob", name)


async def wait_rayjob(
    admin: Client,
    cluster: RealCluster,
    ns: str,
    name: str,
    check: Callable[[dict[str, Any]], bool],
    what: str,
    *,
    timeout: float,
    seen: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Poll the RayJob until ``check`` holds (``seen`` is called with every read);
    on timeout fail with :func:`diagnose`."""
    deadline = time.monotonic() + timeout
    while True:
        job = await admin.get("ray.io/v1", "RayJob", name, ns)
        if seen is not None:
            seen(job)
        if check(job):
            return job
        if time.monotonic() > deadline:
            detail = await diagnose(admin, cluster, ns, name)
            raise AssertionError(f"RayJob {ns}/{name}: {what} not within {timeout:.0f}s\n{detail}")
        await asyncio.sleep(1)


def _state(job: dict[str, Any]) -> str:
    return str((job.get("status") or {}).get("jobDeploymentStatus") or "")


def _terminal(job: dict[str, Any]) -> bool:
    return _state(job) in ("Complete", "Failed")


async def _gone(admin: Client, api_version: str, kind: str, ns: str, name: str) -> bool:
    try:
        await admin.get(api_version, kind, name, ns)
    except NotFound:
        return True
    return False


def _has_output(text: str) -> bool:
    return all(line in text for line in EXPECTED_OUTPUT)


async def _events(admin: Client, ns: str, name: str, reason: str) -> list[str]:
    items, _ = await admin.list_all("events.k8s.io/v1", "Event", ns)
    return [
        str(e.get("note") or "")
        for e in items
        if (e.get("regarding") or {}).get("name") == name and e.get("reason") == reason
    ]


def _dashboard_logs(pod_ip: str, job_id: str) -> str:
    """``GET /api/jobs/{id}/logs`` of the head's dashboard (the real node's pod network)."""
    url = f"http://{pod_ip}:8265/api/jobs/{job_id}/logs"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(json.loads(resp.read())["logs"])


# --------------------------------------------------------------------------- tests


async def test_sample_succeeds_in_k8sjob_http_and_sidecar_modes(
    real_cluster: RealCluster,
    real_admin: Client,
    rayjob_operator: OperatorProcess,
    rns: str,
) -> None:
    """The three modes run side by side (each its own RayCluster) to keep the module short.
    The operator may not dial the pod network: it reaches every dashboard (HTTPMode's
    submission included) through the apiserver's service proxy."""
    modes: dict[str, dict[str, Any]] = {
        "k8s-job": {"submissionMode": "K8sJobMode", "shutdownAfterJobFinishes": True},
        "http": {"submissionMode": "HTTPMode"},
        "sidecar": {"submissionMode": "SidecarMode"},
    }
    began = time.monotonic()
    config_map: dict[str, Any] = {}
    for name, spec in modes.items():
        job, config_map = rayjob_sample(name, rns, **spec)
        await real_admin.create(job)
    await real_admin.create(config_map)

    clusters: dict[str, str] = {}

    async def one(name: str) -> dict[str, Any]:
        def remember(job: dict[str, Any]) -> None:
            cluster_name = (job.get("status") or {}).get("rayClusterName")
            if cluster_name:
                clusters[name] = cluster_name

        job = await wait_rayjob(
            real_admin, real_cluster, rns, name, _terminal, "Complete", timeout=300, seen=remember
        )
        record_timing(f"real RayJob {name}: created -> {_state(job)}", time.monotonic() - began)
        return job

    # every mode's outcome is reported, not only the first to fail
    outcomes = await asyncio.gather(*(one(name) for name in modes), return_exceptions=True)
    problems: list[str] = []
    finished: dict[str, dict[str, Any]] = {}
    for name, outcome in zip(modes, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            problems.append(f"[{name}] {outcome}")
            continue
        finished[name] = outcome
        status = outcome["status"]
        if (_state(outcome), status.get("jobStatus")) != ("Complete", "SUCCEEDED"):
            detail = await diagnose(real_admin, real_cluster, rns, name)
            problems.append(
                f"[{name}] ended {_state(outcome)}/{status.get('jobStatus')}:\n{detail}"
            )
    assert not problems, "\n\n".join(problems)
    for name, job in finished.items():
        status = job["status"]
        assert status["succeeded"] == 1 and status.get("failed", 0) == 0, (name, status)
        assert status.get("endTime") and status["rayJobInfo"].get("endTime"), (name, status)

    async def explain_k8s() -> str:
        return await diagnose(real_admin, real_cluster, rns, "k8s-job")

    # K8sJobMode: the submitter Job's pod followed the job and logged its output
    submitter = await real_admin.get("batch/v1", "Job", "k8s-job", rns)
    assert any(
        c["type"] == "Complete" and c["status"] == "True" for c in submitter["status"]["conditions"]
    ), submitter["status"]
    k8s_log = real_cluster.kubectl("-n", rns, "logs", "job/k8s-job")
    assert _has_output(k8s_log), f"submitter log lacks the job's output:\n{k8s_log}"
    assert finished["k8s-job"]["status"]["jobId"] in k8s_log
    # shutdownAfterJobFinishes: the cluster goes (and with it its pods); the Job stays
    await wait_for(
        "shutdownAfterJobFinishes deletes the RayCluster",
        lambda: _gone(real_admin, "ray.io/v1", "RayCluster", rns, clusters["k8s-job"]),
        120,
        explain_k8s,
    )
    assert await _events(real_admin, rns, "k8s-job", "DeletedRayCluster")
    await real_admin.get("batch/v1", "Job", "k8s-job", rns)

    # SidecarMode: the head pod's submitter container logged the output
    (head,) = [
        p
        for p in await cluster_pods(real_admin, rns, clusters["sidecar"])
        if node_type(p) == "head"
    ]
    sidecar_log = real_cluster.kubectl(
        "-n", rns, "logs", head["metadata"]["name"], "-c", "ray-job-submitter"
    )
    assert _has_output(sidecar_log), f"sidecar submitter log lacks the output:\n{sidecar_log}"
    assert not await _events(real_admin, rns, "sidecar", "DeletedRayCluster")

    # HTTPMode: the operator submitted; the dashboard has the job and its output
    (head,) = [
        p for p in await cluster_pods(real_admin, rns, clusters["http"]) if node_type(p) == "head"
    ]
    assert pod_ready(head)
    http_status = finished["http"]["status"]
    logs = _dashboard_logs(head["status"]["podIP"], http_status["jobId"])
    assert _has_output(logs), f"dashboard job logs lack the output:\n{logs}"
    with pytest.raises(NotFound):
        await real_admin.get("batch/v1", "Job", "http", rns)  # nothing but the operator submitted
    assert http_status["dashboardURL"] == (
        f"{clusters['http']}-head-svc.{rns}.svc.cluster.local:8265"
    )
    # the operator reached each cluster's dashboard through the apiserver's proxy
    operator_log = rayjob_operator.log_path.read_text(errors="replace")
    for name in ("k8s-job", "http", "sidecar"):
        assert re.search(
            rf'dialling through the apiserver proxy.*"name":"{re.escape(clusters[name])}"',
            operator_log,
        ), f"no proxy fallback logged for {clusters[name]}"


async def test_failing_entrypoint_retries_once_on_a_new_cluster_then_fails(
    real_cluster: RealCluster,
    real_admin: Client,
    rayjob_operator: OperatorProcess,
    rns: str,
) -> None:
    """``backoffLimit: 1``: two attempts, each on its own RayCluster; then Failed/AppFailed.
    HTTPMode (no submitter pod to wait for); no workers (the entrypoint needs none)."""
    name = "failing"
    job, config_map = rayjob_sample(
        name,
        rns,
        submissionMode="HTTPMode",
        entrypoint="python -c \"import sys; print('failing on purpose'); sys.exit(3)\"",
        backoffLimit=1,
        shutdownAfterJobFinishes=True,
    )
    group = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    group.update(replicas=0, minReplicas=0)
    await real_admin.create(config_map)
    began = time.monotonic()
    await real_admin.create(job)

    attempts: dict[str, set[str]] = {}  # cluster name -> job ids seen with it

    def remember(obj: dict[str, Any]) -> None:
        status = obj.get("status") or {}
        if status.get("rayClusterName"):
            attempts.setdefault(status["rayClusterName"], set()).add(status.get("jobId") or "")

    done = await wait_rayjob(
        real_admin,
        real_cluster,
        rns,
        name,
        lambda j: _state(j) == "Failed",
        "Failed",
        timeout=480,
        seen=remember,
    )
    record_timing(
        "real RayJob failing (backoffLimit 1): created -> Failed", time.monotonic() - began
    )
    status = done["status"]
    explain = (
        f"{json.dumps(status, indent=1)}\n{await diagnose(real_admin, real_cluster, rns, name)}"
    )
    assert (status.get("reason"), status.get("jobStatus")) == ("AppFailed", "FAILED"), explain
    assert status["failed"] == 2 and status.get("succeeded", 0) == 0, explain
    created = await _events(real_admin, rns, name, "CreatedRayCluster")
    names = {note.rsplit("/", 1)[-1] for note in created}
    assert len(names) == 2, f"one RayCluster per attempt: {created}\n{explain}"
    assert set(attempts) <= names and status["rayClusterName"] in names, (attempts, names)
    # each attempt had its own Ray job id
    job_ids = [ids for ids in attempts.values()]
    assert all(len(ids) == 1 for ids in job_ids), attempts
    assert len(set().union(*job_ids)) == len(attempts), attempts

    # every attempt's cluster is gone: the first at the retry, the last by shutdown
    async def all_gone() -> bool:
        return all([await _gone(real_admin, "ray.io/v1", "RayCluster", rns, n) for n in names])

    async def explain_gone() -> str:
        return await diagnose(real_admin, real_cluster, rns, name)

    await wait_for("every attempt's RayCluster deleted", all_gone, 120, explain_gone)
    assert len(await _events(real_admin, rns, name, "DeletedRayCluster")) >= 2


def _ray_job_status(pod_ip: str, job_id: str) -> str:
    """``status`` of ``GET /api/jobs/{id}`` on the head's dashboard (Ray's own record)."""
    url = f"http://{pod_ip}:8265/api/jobs/{job_id}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(json.loads(resp.read())["status"])


async def test_a_sleeping_job_past_its_deadline_ends_stopped_in_ray(
    real_cluster: RealCluster,
    real_admin: Client,
    rayjob_operator: OperatorProcess,
    rns: str,
) -> None:
    """Issue 44, item 2 (KubeRay #2314): a RayJob that passes ``activeDeadlineSeconds`` stops
    its Ray job, which KubeRay leaves running on a kept cluster. HTTPMode, no workers, no
    ``shutdownAfterJobFinishes`` (the cluster stays); the deadline is set once the job runs
    (elapsed + 2 s), so the test waits for no cluster start it cannot predict. The stop goes
    through the apiserver's service proxy (this module's operator may not dial pods); Ray's
    own job API, read from the host, must say STOPPED."""
    name = "deadline"
    job, config_map = rayjob_sample(
        name,
        rns,
        submissionMode="HTTPMode",
        entrypoint="python -c \"import time; print('sleeping', flush=True); time.sleep(600)\"",
    )
    group = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    group.update(replicas=0, minReplicas=0)
    await real_admin.create(config_map)
    began = time.monotonic()
    await real_admin.create(job)
    running = await wait_rayjob(
        real_admin,
        real_cluster,
        rns,
        name,
        lambda j: (j.get("status") or {}).get("jobStatus") == "RUNNING",
        "Ray job RUNNING",
        timeout=300,
    )
    status = running["status"]
    job_id, cluster_name = status["jobId"], status["rayClusterName"]
    start = dt.datetime.fromisoformat(status["startTime"].replace("Z", "+00:00"))
    deadline = int((dt.datetime.now(dt.UTC) - start).total_seconds()) + 2
    await real_admin.patch(
        "ray.io/v1", "RayJob", name, {"spec": {"activeDeadlineSeconds": deadline}}, rns
    )
    done = await wait_rayjob(
        real_admin, real_cluster, rns, name, lambda j: _state(j) == "Failed", "Failed", timeout=90
    )
    record_timing("real RayJob past its deadline: created -> Failed", time.monotonic() - began)
    status = done["status"]
    explain = (
        f"{json.dumps(status, indent=1)}\n{await diagnose(real_admin, real_cluster, rns, name)}"
    )
    assert status.get("reason") == "DeadlineExceeded", explain
    assert status["message"].endswith(
        f"Stopped Ray job {job_id}; jobStatus RUNNING is the last one observed."
    ), explain
    assert await _events(real_admin, rns, name, "StoppedRayJob"), explain

    (head,) = [
        p for p in await cluster_pods(real_admin, rns, cluster_name) if node_type(p) == "head"
    ]
    pod_ip = head["status"]["podIP"]

    async def stopped_in_ray() -> bool:
        return await asyncio.to_thread(_ray_job_status, pod_ip, job_id) == "STOPPED"

    async def explain_ray() -> str:
        seen = await asyncio.to_thread(_ray_job_status, pod_ip, job_id)
        return f"Ray says {seen}\n{explain}"

    await wait_for("Ray reports the job STOPPED", stopped_in_ray, 60, explain_ray)
    await real_admin.get("ray.io/v1", "RayCluster", cluster_name, rns)  # the cluster is kept
