"""The collector image on the real node writes to the local object store.

The shared real-node cluster (tests/e2e/conftest.py) plus the store ``controlplane.py up
--history-server`` starts (``hack/cluster/object_store.py`` on the node's bridge address, as
``ControlPlane(history_server=True)`` places it). A RayCluster on Ray 2.60.0 with the
``RayClusterHistoryServer`` gate on and ``historyServerOptions.collectorOptions`` as in
KubeRay's ``ray-cluster.historyserver.yaml`` (image ``quay.io/kuberay/collector:nightly``, the
env taken unchanged from ``object-store.env``) gets the operator's collector sidecar; the store
then holds, in KubeRay's layout (``kuberay/historyserver/layout.py``):

* the head's ``cluster-metadata/raycluster/<ns>_<name>/<session>`` marker and the
  ``fetched_endpoints/restful__api__v0__cluster_metadata`` snapshot while the cluster runs;
* the head's ``<node>/logs/...`` (``raylet.out`` among them), put while the cluster runs
  (our collector scans every 10 s; KubeRay v1.7's puts them only at shutdown), still there
  after the RayCluster is deleted.

Needs root and the images ``make images`` builds (the collector among the node's imports).
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.historyserver.layout import ClusterRef, Layout
from kuberay.historyserver.storage import ObjectStore
from kuberay.historyserver.storage.config import open_store, storage_settings
from kuberay.kube import Client
from tests.chromium import require_chromium
from tests.e2e import history_in_cluster, history_views
from tests.e2e.harness import TIMINGS, cluster_pods, node_type
from tests.e2e.realcluster import (
    RealCluster,
    RealIdentity,
    diagnose_namespace,
    host_operator,
    wait_for,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")

COLLECTOR_IMAGE = "quay.io/kuberay/collector:nightly"  # KubeRay's sample names this tag
RAY_VERSION = "2.60.0"  # hack/images.RAY_NEW_VERSION (checked below)
GATE = "--feature-gates=RayClusterHistoryServer=true"


@pytest.fixture(scope="module")
def store_env(
    real_cluster: RealCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """The history server's store where ``up --history-server`` puts it with a real node;
    the env file's values."""
    from hack.cluster import object_store
    from kuberay.testing import envtest as controlplane

    server = object_store.ObjectStoreServer(
        tmp_path_factory.mktemp("object-store"),
        controlplane.object_store_host(real_node=True),
    )
    info = server.start()
    try:
        yield object_store.read_env_file(info.env_file)
    finally:
        server.stop()


@pytest.fixture
async def store(store_env: dict[str, str]) -> AsyncIterator[ObjectStore]:
    """The store opened from the host with the env file's values (as the collector does)."""
    opened = await open_store(storage_settings(env=store_env))
    try:
        yield opened
    finally:
        await opened.close()


def _raycluster(name: str, ns: str, env: dict[str, str]) -> dict[str, Any]:
    """KubeRay's ray-cluster.historyserver.yaml, head only and shrunk to fit two cores."""
    head = {
        "name": "ray-head",
        "image": f"rayproject/ray:{RAY_VERSION}",
        "resources": {
            "requests": {"cpu": "250m", "memory": "1Gi"},
            "limits": {"cpu": "1", "memory": "3Gi"},
        },
        "ports": [
            {"containerPort": 6379, "name": "gcs-server"},
            {"containerPort": 8265, "name": "dashboard"},
            {"containerPort": 10001, "name": "client"},
        ],
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "rayVersion": RAY_VERSION,
            "historyServerOptions": {
                "collectorOptions": {
                    "image": COLLECTOR_IMAGE,
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": {"cpu": "200m", "memory": "256Mi"},
                    },
                    "env": [{"name": k, "value": v} for k, v in env.items()],
                }
            },
            "headGroupSpec": {
                "rayStartParams": {"num-cpus": "0"},
                "template": {"spec": {"containers": [head]}},
            },
        },
    }


async def _keys(store: ObjectStore, prefix: str) -> list[str]:
    out: list[str] = []
    token: str | None = None
    while True:
        page = await store.list(prefix, delimiter=None, token=token)
        out += [o.key for o in page.objects]
        token = page.next_token
        if not token:
            return out


async def test_collector_sidecar_uploads_to_the_local_store(
    real_cluster: RealCluster,
    real_identity: RealIdentity,
    real_admin: Client,
    rns: str,
    store_env: dict[str, str],
    store: ObjectStore,
) -> None:
    from hack.release import images

    assert images.RAY_NEW_VERSION == RAY_VERSION
    present = real_cluster.cp.real_node.ctr("images", "ls", "-q").stdout.split()
    assert COLLECTOR_IMAGE in present, "the real node did not import the collector image"
    assert store_env["S3_ENDPOINT"].startswith("http://10.250.0.1:")  # the pods' gateway

    name = "raycluster-historyserver"
    layout = Layout(ClusterRef(rns, name))
    marker_dir = layout.metadata_prefix() + f"raycluster/{rns}_{name}/"

    async def explain() -> str:
        keys = await _keys(store, "")
        return (
            await diagnose_namespace(real_admin, real_cluster, rns, "RayCluster", name)
            + f"\nstore keys: {keys}"
        )

    async with host_operator("history-operator", real_cluster, real_identity, extra_args=[GATE]):
        began = time.monotonic()
        await real_admin.create(_raycluster(name, rns, store_env))

        async def marker() -> list[str]:
            return await _keys(store, marker_dir)

        markers = await wait_for("the head's session marker", marker, 300, explain)
        TIMINGS.setdefault("history: RayCluster created -> session marker", []).append(
            time.monotonic() - began
        )
        assert len(markers) == 1, markers
        session = markers[0].rsplit("/", 1)[1]
        assert session.startswith("session_"), markers
        assert await store.get(markers[0]) == b""

        snapshot = layout.endpoint_key(session, "/api/v0/cluster_metadata")

        async def fetched() -> bool:
            return await store.exists(snapshot)

        await wait_for("the cluster_metadata snapshot", fetched, 120, explain)

        session_prefix = layout.session_prefix(session) + "/"

        async def logs() -> list[str]:
            return [k for k in await _keys(store, session_prefix) if "/logs/" in k]

        # our collector puts the live session's logs every scan (KubeRay v1.7 only at shutdown)
        uploaded = await wait_for("the head's logs", logs, 180, explain)
        TIMINGS.setdefault("history: RayCluster created -> logs uploaded", []).append(
            time.monotonic() - began
        )
        node_dirs = {k[len(session_prefix) :].split("/", 1)[0] for k in uploaded}
        assert len(node_dirs) == 1, node_dirs  # the head's node ID (hex)
        assert all(len(n) == 56 and int(n, 16) >= 0 for n in node_dirs), node_dirs

        async def raylet_log() -> bool:
            return any(k.endswith("/logs/raylet.out") for k in await logs())

        await wait_for("the head's logs/raylet.out", raylet_log, 120, explain)

        # deletion: the sidecar's flush on SIGTERM; what is stored stays
        await real_admin.delete("ray.io/v1", "RayCluster", name, rns)

        async def pods_gone() -> bool:
            return not await cluster_pods(real_admin, rns, name, include_terminating=True)

        await wait_for("the head pod gone", pods_gone, 120, explain)
        assert set(uploaded) <= set(await logs())
        assert await store.exists(markers[0])


# --------------------------------------------------------------------------- a RayJob's history

JOB_CODE = """\
import time

import ray
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

ray.init()


@ray.remote(num_cpus=0)
def square(x):
    return x * x


@ray.remote(num_cpus=0)
def parent(n):
    return sum(ray.get([square.remote(i) for i in range(n)]))


@ray.remote(num_cpus=0)
class Counter:
    def __init__(self):
        self.n = 0

    def add(self):
        self.n += 1
        return self.n


print("history-e2e sum", ray.get(parent.remote(10)), flush=True)
counter = Counter.remote()
print("history-e2e count", ray.get([counter.add.remote() for _ in range(3)])[-1], flush=True)
pg = placement_group([{"CPU": 0.01}], name="history-e2e-pg")
ray.get(pg.ready())
in_pg = square.options(scheduling_strategy=PlacementGroupSchedulingStrategy(pg)).remote(7)
print("history-e2e pg", ray.get(in_pg), flush=True)
time.sleep(HOLD)
print("history-e2e done", flush=True)
"""
JOB_HOLD_SECONDS = 75  # the driver runs this long after its tasks: live upload and SIGKILL


def _rayjob(name: str, ns: str, env: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A K8sJobMode RayJob (cluster deleted when it finishes) whose head carries the
    collector, and the ConfigMap holding its driver."""
    cluster = _raycluster(name, ns, env)["spec"]
    head = cluster["headGroupSpec"]
    head["rayStartParams"] = {"num-cpus": "1"}
    head["template"]["spec"]["volumes"] = [{"name": "code", "configMap": {"name": f"{name}-code"}}]
    head["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "code", "mountPath": "/home/ray/samples"}
    ]
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "entrypoint": "python /home/ray/samples/job.py",
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 0,
            "rayClusterSpec": cluster,
            "submitterPodTemplate": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "ray-job-submitter",
                            "image": f"rayproject/ray:{RAY_VERSION}",
                            "resources": {
                                "requests": {"cpu": "50m", "memory": "200Mi"},
                                "limits": {"cpu": "500m", "memory": "1Gi"},
                            },
                        }
                    ],
                }
            },
        },
    }
    code = JOB_CODE.replace("HOLD", str(JOB_HOLD_SECONDS))
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-code", "namespace": ns},
        "data": {"job.py": code},
    }
    return job, config_map


def _collector_container_id(pod: dict[str, Any]) -> str:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == "ray-history-collector" and status.get("containerID"):
            return str(status["containerID"]).split("://", 1)[1]
    return ""


def _restarts(pod: dict[str, Any]) -> int:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == "ray-history-collector":
            return int(status.get("restartCount") or 0)
    return 0


async def test_a_rayjobs_history_outlives_its_cluster_and_is_served(
    real_cluster: RealCluster,
    real_identity: RealIdentity,
    real_admin: Client,
    rns: str,
    store_env: dict[str, str],
    store: ObjectStore,
    tmp_path: Path,
) -> None:
    """A real RayJob with the collector: its driver log is in the store while it runs; its
    collector, killed with SIGKILL mid-job, comes back (the kubelet restarts it) and loses or
    duplicates no event; after the job ends and its cluster is deleted, the store holds the
    session marker, the driver log with the whole output and the job's task events, each
    event once. Then the history server, deployed from ``manifests/historyserver`` with its
    image and reached through ``kubectl ray history open`` (``history_in_cluster``), answers
    the dashboard API for the dead cluster, and Ray's own UI, served by it, shows the job, its
    tasks and its actor in headless Chromium (``history_views``)."""
    from kuberay.historyserver.server.event_files import (
        find_event_files,
        read_session_events,
    )

    name = "history-job"
    job, config_map = _rayjob(name, rns, store_env)
    await real_admin.create(config_map)
    async with host_operator(
        "history-job-operator", real_cluster, real_identity, extra_args=[GATE]
    ):
        began = time.monotonic()
        await real_admin.create(job)

        async def current() -> dict[str, Any]:
            return await real_admin.get("ray.io/v1", "RayJob", name, rns)

        async def cluster_name() -> str:
            return str(((await current()).get("status") or {}).get("rayClusterName") or "")

        async def explain() -> str:
            keys = await _keys(store, "")
            return (
                await diagnose_namespace(real_admin, real_cluster, rns, "RayJob", name)
                + f"\nstore keys ({len(keys)}): {keys[:80]}"
            )

        cluster = await wait_for("the RayJob's cluster", cluster_name, 60, explain)
        layout = Layout(ClusterRef(rns, cluster, "rayjob", name))
        marker_dir = layout.metadata_prefix() + f"rayjob/{rns}_{name}_{cluster}/"

        async def marker() -> list[str]:
            return await _keys(store, marker_dir)

        (marker_key,) = await wait_for("the RayJob head's session marker", marker, 300, explain)
        session = marker_key.rsplit("/", 1)[1]
        session_prefix = layout.session_prefix(session) + "/"

        async def submission_id() -> str:
            return str(((await current()).get("status") or {}).get("jobId") or "")

        job_id = await wait_for("the submission id", submission_id, 120, explain)

        async def live_driver_log() -> str | None:
            for key in await _keys(store, session_prefix):
                if key.endswith(f"/logs/job-driver-{job_id}.log"):
                    text = (await store.get(key)).decode(errors="replace")
                    if "history-e2e count 3" in text:
                        return key
            return None

        # while the driver still runs (it holds JOB_HOLD_SECONDS after its tasks)
        driver_key = await wait_for("the running driver's log", live_driver_log, 150, explain)

        async def running() -> bool:  # the operator's status poll may lag the driver's output
            return ((await current()).get("status") or {}).get("jobStatus") == "RUNNING"

        await wait_for(
            "the RayJob's jobStatus RUNNING while the driver holds", running, 50, explain
        )
        TIMINGS.setdefault("history: RayJob created -> live driver log", []).append(
            time.monotonic() - began
        )

        # SIGKILL the collector mid-job; the kubelet restarts it in the same pod
        (head,) = [
            p for p in await cluster_pods(real_admin, rns, cluster) if node_type(p) == "head"
        ]
        container = _collector_container_id(head)
        assert container, head.get("status")
        real_cluster.cp.real_node.ctr("tasks", "kill", "--signal", "SIGKILL", container)

        async def restarted() -> bool:
            pods = await cluster_pods(real_admin, rns, cluster)
            return any(node_type(p) == "head" and _restarts(p) >= 1 for p in pods)

        await wait_for("the killed collector restarted", restarted, 120, explain)

        async def finished() -> bool:
            status = (await current()).get("status") or {}
            return status.get("jobDeploymentStatus") in ("Complete", "Failed")

        await wait_for("the RayJob finished", finished, 300, explain)
        assert ((await current()).get("status") or {}).get("jobStatus") == "SUCCEEDED"

        async def cluster_gone() -> bool:
            return not await cluster_pods(real_admin, rns, cluster, include_terminating=True)

        await wait_for("the RayJob's cluster deleted", cluster_gone, 180, explain)
        TIMINGS.setdefault("history: RayJob created -> cluster gone", []).append(
            time.monotonic() - began
        )

    assert await store.exists(marker_key)
    driver_log = (await store.get(driver_key)).decode(errors="replace")
    for line in ("history-e2e sum 285", "history-e2e count 3", "history-e2e done"):
        assert line in driver_log, driver_log[-2000:]
    files = await find_event_files(store, layout, session)
    events = await read_session_events(store, files)
    assert files and events, await explain()
    counts = collections.Counter(e.get("eventId") for e in events)
    duplicated = {i for i, n in counts.items() if n > 1}
    assert not duplicated, f"{len(duplicated)} events stored twice across {len(files)} files"
    names = {
        str((e.get("taskDefinitionEvent") or {}).get("taskName") or "")
        for e in events
        if e.get("eventType") == "TASK_DEFINITION_EVENT"
    }
    assert any(n.endswith("square") for n in names), sorted(names)
    assert any(n.endswith("parent") for n in names), sorted(names)
    assert any(f.job_id for f in files), [f.key for f in files]  # filed by job too

    # the history server as a user deploys it (manifests/historyserver, the server image with
    # Ray's UI builds) and reaches it: `kubectl ray history open` port-forwards to its pod
    require_chromium()
    deployed = history_in_cluster.deployed_history_server(real_cluster, real_admin, store_env)
    opened = history_in_cluster.history_open(real_cluster, rns, name, tmp_path)
    async with deployed, opened as (url, printed):
        assert printed == f"{url}/enter_cluster/{rns}/rayjob/{name}/{session}"
        await history_views.check_api(url, rns, name, cluster, session, job_id)
        shots = await history_views.check_ui(url, rns, name, session, job_id, tmp_path)
        print("history UI screenshots:", *shots)
