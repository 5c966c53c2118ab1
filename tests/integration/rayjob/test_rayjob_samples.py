"""Every RayJob in KubeRay's samples (read from outside the repository, see
``tests/kuberay_samples.py``), on the real apiserver with the RayCluster and RayJob controllers
running: we play the kubelet (pods Running/Ready, the head's IP is a fake
Ray dashboard), the Job controller (the submitter Job completes) and Ray (the job SUCCEEDED),
and each sample reaches the end state KubeRay reaches for its spec."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import random
import uuid
from typing import Any

import attrs
import yaml

from kuberay.kube import Client, NotFound
from kuberay.testing.fake_dashboard import FakeDashboard
from tests.helpers import eventually
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import (
    finish_submitter,
    get_job,
    head_pod,
    now_rfc3339,
    set_pod_status,
    state,
    wait_gone,
    wait_job,
    wait_state,
)
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

pytestmark = requires_kuberay_samples  # plays every one of KubeRay's RayJob samples

# Kinds a sample ships that the plain apiserver does not serve (no Volcano CRDs installed).
UNSERVED = {"Queue"}

# The end states a RayJob reaches, as KubeRay's controller drives it.
COMPLETE = "Complete, cluster kept"
SHUTDOWN = "Complete, then the RayCluster is deleted after the TTL"
WAITING = "Waiting until spec.jobId is set, then Complete"
SELECTOR = "Complete on the selected existing RayCluster, which is kept"
DELETE_SELF = "deletion rules: workers, then cluster, then the RayJob itself are deleted"


@attrs.frozen
class Expect:
    """What KubeRay does with one sample, and why (read off the sample's spec)."""

    outcome: str
    why: str
    ttl: int | None = None  # shortened ttlSecondsAfterFinished for the copy, if any


EXPECTED: dict[str, Expect] = {
    "agent-sandbox_ray-cluster.yaml": Expect(COMPLETE, "K8sJobMode, no shutdown"),
    "pytorch-mnist_ray-job.pytorch-mnist.yaml": Expect(COMPLETE, "shutdownAfterJobFinishes false"),
    "pytorch-resnet-image-classifier_ray-job.pytorch-image-classifier.yaml": Expect(
        SHUTDOWN, "shutdownAfterJobFinishes, TTL unset (0)"
    ),
    "pytorch-text-classifier_ray-job.pytorch-distributed-training.yaml": Expect(
        SHUTDOWN, "shutdownAfterJobFinishes, TTL unset (0)"
    ),
    # The sample's TTL is 30s: shortened to 2s in the copy to bound the runtime.
    "ray-data-image-resize_ray-data-image-resize-gcsfusecsi-job.yaml": Expect(
        SHUTDOWN, "shutdownAfterJobFinishes, TTL 30", ttl=2
    ),
    "ray-data-image-resize_ray-job.image-resize.yaml": Expect(
        COMPLETE, "shutdownAfterJobFinishes false"
    ),
    "ray-job.batch-inference.yaml": Expect(COMPLETE, "K8sJobMode, no shutdown"),
    "ray-job.custom-head-svc.yaml": Expect(COMPLETE, "custom head Service only; no shutdown"),
    # The sample's TTLs are 30/60/90s: shortened to 2/4/6s, same order, in the copy.
    "ray-job.deletion-rules.yaml": Expect(
        DELETE_SELF, "RayJobDeletionPolicy (default on): SUCCEEDED rules end in DeleteSelf"
    ),
    "ray-job.interactive-mode.yaml": Expect(WAITING, "InteractiveMode with an empty jobId"),
    # suspend is commented out in the sample: it runs like any shutdown sample (TTL 10 kept).
    "ray-job.kueue-toy-sample.yaml": Expect(SHUTDOWN, "shutdownAfterJobFinishes, TTL 10"),
    "ray-job.light-weight-submitter.yaml": Expect(COMPLETE, "K8sJobMode, custom submitter pod"),
    "ray-job.platform-events.yaml": Expect(COMPLETE, "K8sJobMode, no shutdown"),
    "ray-job.resources.yaml": Expect(COMPLETE, "entrypoint resources only; no shutdown"),
    "ray-job.sample.yaml": Expect(COMPLETE, "K8sJobMode, no shutdown"),
    # The sample's TTL is 600s: shortened to 2s in the copy.
    "ray-job.sandbox.yaml": Expect(SHUTDOWN, "shutdownAfterJobFinishes, TTL 600", ttl=2),
    "ray-job.shutdown.yaml": Expect(SHUTDOWN, "shutdownAfterJobFinishes, TTL 10"),
    "ray-job.sidecar-mode.yaml": Expect(COMPLETE, "SidecarMode: the head's submitter exits 0"),
    "ray-job.tpu-jax.yaml": Expect(COMPLETE, "K8sJobMode, 1 host TPU worker"),
    "ray-job.tpu-v6e-16-multihost.yaml": Expect(COMPLETE, "K8sJobMode, 4-host TPU slice"),
    "ray-job.tpu-v6e-256-multihost.yaml": Expect(COMPLETE, "K8sJobMode, 64-host TPU slice"),
    "ray-job.tpu-v6e-singlehost.yaml": Expect(COMPLETE, "K8sJobMode, 1 host TPU worker"),
    "ray-job.use-existing-raycluster.yaml": Expect(
        SELECTOR, "clusterSelector ray.io/cluster=ray-cluster-kuberay"
    ),
    "ray-job.volcano-scheduler-queue.yaml": Expect(
        COMPLETE, "no batch scheduler enabled: the queue label is inert"
    ),
    "ray-job.yunikorn-scheduler.yaml": Expect(
        COMPLETE, "no batch scheduler enabled: the yunikorn labels are inert"
    ),
}
DELETION_RULE_TTLS = {30: 2, 60: 4, 90: 6}
# Samples played at once (each has its own operator; the machine has 2 cores).
CONCURRENCY = 8


def documents(file: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((SAMPLES / file).read_text()) if d]


def rayjob_files() -> list[str]:
    return sorted(
        p.name
        for p in SAMPLES.glob("*.yaml")
        if any(d.get("kind") == "RayJob" for d in documents(p.name))
    )


def test_every_rayjob_sample_has_an_expectation() -> None:
    assert set(rayjob_files()) == set(EXPECTED)


def pod_count(spec: dict[str, Any]) -> int:
    """Head plus every worker host the RayCluster controller creates for ``spec``."""
    total = 1
    for group in spec.get("workerGroupSpecs") or []:
        replicas = int(group.get("replicas", 1))
        lo, hi = group.get("minReplicas"), group.get("maxReplicas")
        if lo is not None:
            replicas = max(replicas, int(lo))
        if hi is not None:
            replicas = min(replicas, int(hi))
        total += replicas * int(group.get("numOfHosts", 1))
    return total


async def play_kubelet(
    client: Client, namespace: str, cluster: str, want: int, dashboard: FakeDashboard
) -> None:
    """Every pod of ``cluster`` Running and Ready as it appears, until ``want`` of them are;
    the head's IP is the fake dashboard's loopback address."""

    async def all_running() -> bool:
        items, _ = await client.list_all(
            "v1", "Pod", namespace, label_selector=f"ray.io/cluster={cluster}"
        )
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        for i, pod in enumerate(live):
            if (pod.get("status") or {}).get("phase") == "Running":
                continue
            is_head = pod["metadata"]["labels"].get("ray.io/node-type") == "head"
            await set_pod_status(
                client,
                pod,
                {
                    "phase": "Running",
                    "podIP": dashboard.host if is_head else f"10.9.{i // 250}.{i % 250 + 2}",
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "ContainersReady", "status": "True"},
                    ],
                },
            )
        return len(live) >= want

    await eventually(all_running, timeout=60, interval=0.2, message=f"{want} pods of {cluster}")


async def exit_sidecar_submitter(client: Client, namespace: str, cluster: str) -> None:
    """What the kubelet reports when the head's submitter container exits 0."""
    pod = await head_pod(client, namespace, cluster)
    terminated = {
        "exitCode": 0,
        "reason": "Completed",
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
    await set_pod_status(client, pod, {"containerStatuses": [status]})


def prepare(doc: dict[str, Any], namespace: str, expect: Expect) -> dict[str, Any]:
    """The sample's RayJob in ``namespace``; only the TTLs named in EXPECTED are shortened."""
    job = copy.deepcopy(doc)
    job["metadata"]["namespace"] = namespace
    if expect.ttl is not None:
        job["spec"]["ttlSecondsAfterFinished"] = expect.ttl
    for rule in (job["spec"].get("deletionStrategy") or {}).get("deletionRules") or []:
        cond = rule["condition"]
        cond["ttlSeconds"] = DELETION_RULE_TTLS[cond["ttlSeconds"]]
    return job


async def create_existing_cluster(client: Client, namespace: str, name: str) -> dict[str, Any]:
    """The cluster a clusterSelector sample names, built from KubeRay's RayCluster sample."""
    (cluster,) = [d for d in documents("ray-cluster.sample.yaml") if d["kind"] == "RayCluster"]
    cluster["metadata"] = {"name": name, "namespace": namespace}
    return await client.create(cluster)


async def cluster_exists(client: Client, namespace: str, name: str) -> bool:
    try:
        await client.get("ray.io/v1", "RayCluster", name, namespace)
    except NotFound:
        return False
    return True


async def test_every_sample_reaches_kuberays_end_state(
    crds_installed: None, kclient: Client
) -> None:
    """All samples at once (a few at a time), each in its own namespace with its own
    operator and fake dashboard; every failure is reported with its sample's file."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(index: int, file: str) -> None:
        async with gate:
            await run_sample(kclient, index, file)

    files = sorted(EXPECTED)
    results = await asyncio.gather(
        *(one(i, f) for i, f in enumerate(files)), return_exceptions=True
    )
    failed = {f: repr(r) for f, r in zip(files, results, strict=True) if r is not None}
    assert not failed, "\n".join(f"{f}: {why}" for f, why in failed.items())


async def run_sample(kclient: Client, index: int, file: str) -> None:
    """One sample in a fresh namespace, from creation to its expected end state."""
    namespace = f"s{index}-{uuid.uuid4().hex[:6]}"
    host = f"127.{random.randint(20, 250)}.{index}.{random.randint(2, 250)}"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        async with FakeDashboard(host, 8265) as dashboard, start_operator(kclient, namespace):
            await play_sample(kclient, namespace, dashboard, file)
    finally:
        with contextlib.suppress(Exception):
            await kclient.delete("v1", "Namespace", namespace)


async def play_sample(kclient: Client, namespace: str, dashboard: FakeDashboard, file: str) -> None:
    """Create the sample, play kubelet/Job controller/Ray, and assert KubeRay's end state."""
    expect = EXPECTED[file]
    docs = documents(file)
    (doc,) = [d for d in docs if d["kind"] == "RayJob"]
    for other in docs:
        if other["kind"] not in UNSERVED | {"RayJob"}:
            other["metadata"]["namespace"] = namespace
            await kclient.create(other)

    spec = doc["spec"]
    selector = (spec.get("clusterSelector") or {}).get("ray.io/cluster")
    if selector:
        existing = await create_existing_cluster(kclient, namespace, selector)
        want_pods = pod_count(existing["spec"])
    else:
        want_pods = pod_count(spec["rayClusterSpec"])

    created = await kclient.create(prepare(doc, namespace, expect))
    name = created["metadata"]["name"]
    mode = spec.get("submissionMode", "K8sJobMode")

    job = await wait_job(
        kclient, namespace, name, lambda j: bool((j.get("status") or {}).get("rayClusterName"))
    )
    cluster = job["status"]["rayClusterName"]
    if selector:
        assert cluster == selector
    await play_kubelet(kclient, namespace, cluster, want_pods, dashboard)

    if mode == "InteractiveMode":
        job = await wait_state(kclient, namespace, name, "Waiting")
        assert not job["status"].get("jobId")
        dashboard.add_job("sample-job", status="SUCCEEDED")
        await kclient.patch(
            "ray.io/v1", "RayJob", name, {"spec": {"jobId": "sample-job"}}, namespace
        )
    else:
        job = await wait_state(kclient, namespace, name, "Running")
        dashboard.add_job(job["status"]["jobId"], status="SUCCEEDED")
        await wait_job(
            kclient, namespace, name, lambda j: j["status"].get("jobStatus") == "SUCCEEDED"
        )
        if mode == "SidecarMode":
            await exit_sidecar_submitter(kclient, namespace, cluster)
        else:
            await finish_submitter(kclient, namespace, name)

    if expect.outcome == DELETE_SELF:
        await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, cluster)
        await wait_gone(kclient, "ray.io/v1", "RayJob", namespace, name)
        return

    job = await wait_state(kclient, namespace, name, "Complete")
    assert job["status"]["jobStatus"] == "SUCCEEDED"
    assert job["status"]["succeeded"] == 1
    if expect.outcome == SHUTDOWN:
        ttl = int(job["spec"].get("ttlSecondsAfterFinished") or 0)
        await wait_gone(kclient, "ray.io/v1", "RayCluster", namespace, cluster, timeout=ttl + 60)
    else:
        assert await cluster_exists(kclient, namespace, cluster)
        assert state(await get_job(kclient, namespace, name)) == "Complete"
