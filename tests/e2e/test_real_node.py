"""Real pods on a real node (kubelet + containerd + runc, CNI bridge, kube-proxy, CoreDNS).

One cluster for this module: ``ControlPlane(full=True, real_nodes=1, real_nodes_only=True)``
(no kwok nodes: every pod lands on the real node), images built by ``hack/release/images.py``.
The operator runs on the host as the other e2e tests run it (its own ServiceAccount token).

* plain pods (no operator): ``test_real_node_pods.py``; here, that nothing listens on a wildcard
  address;
* real Ray: KubeRay's ``ray-cluster.autoscaler.yaml`` (resources shrunk, structure unchanged)
  goes ``ready`` through the real probes; Ray's autoscaler scales the worker group up for an
  actor only a worker can hold and back down after its idle timeout.

Needs root (network, containerd, mounts) and this machine's packages (hack/node_deps.py).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import ipaddress
import os
import re
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.controllers.dashboard.endpoints import service_address
from kuberay.kube import Client, KubeError, NotFound
from tests.e2e.harness import (
    OperatorProcess,
    cluster_pods,
    node_type,
    pod_ready,
)
from tests.e2e.real_node_support import record, wait_until
from tests.e2e.realcluster import RealCluster, RealIdentity, real_namespace
from tests.kuberay_samples import KUBERAY_SAMPLES, requires_kuberay_samples
from tests.listening import listening_sockets

REAL_NODE_IP = "10.250.0.1"  # realnode.NODE_IP: the bridge, the node's and its pods' gateway

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = KUBERAY_SAMPLES  # KubeRay's, unchanged
RAY_IMAGE = "rayproject/ray:2.52.0"
KWOK_POD_IP = "10.244.3.7"  # inside controlplane.FAKE_POD_CIDR

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")


# --------------------------------------------------------------------------- fixtures
# real_cluster, real_admin, real_identity and rns: tests/e2e/conftest.py (one real-node
# cluster for every real-node module)


@pytest.fixture(scope="module")
async def real_operator(
    real_cluster: RealCluster, real_identity: RealIdentity
) -> AsyncIterator[OperatorProcess]:
    """kuberay-operator on the host, as its ServiceAccount with the shipped RBAC."""
    workdir = real_cluster.cp.dir.parent
    op = OperatorProcess(
        "real-node-operator",
        real_identity.kubeconfig,
        workdir / "operators",
        lease_namespace=real_identity.namespace,
        # the RayJob controller may dial dashboards on the real node's pod network
        env={"KUBERAY_DASHBOARD_ALLOWED_NETWORKS": "127.0.0.0/8,10.250.0.0/24"},
    ).start()
    try:
        await op.wait_ready(60)
        await op.wait_leading(60)
        yield op
    finally:
        op.terminate()


# --------------------------------------------------------------------------- plain pods


async def test_nothing_listens_on_a_wildcard_address(
    real_cluster: RealCluster, real_operator: OperatorProcess
) -> None:
    # kube-apiserver takes one --bind-address: 127.0.0.1 (the host's clients); pods come in
    # through hack/cluster/apiserver_forward.py on the bridge address. The kubelet is on the bridge
    # address too, everything else (and the operator's metrics and probes) on loopback.
    cp = real_cluster.cp
    pids = [*cp.pids().values(), *(p.popen.pid for p in cp.real_node.procs.values())]
    listeners = listening_sockets([*pids, real_operator.pid])
    assert {"kube-apiserver", "kubelet", "kube-proxy"} <= {x.process for x in listeners}
    assert real_operator.pid in {x.pid for x in listeners}
    exposed = [
        str(x)
        for x in listeners
        if not (ipaddress.ip_address(x.address).is_loopback or x.address == REAL_NODE_IP)
    ]
    assert exposed == []
    apiserver = {(x.process, x.address) for x in listeners if x.port == cp.apiserver_port}
    assert ("kube-apiserver", "127.0.0.1") in apiserver
    assert {a for _, a in apiserver} == {"127.0.0.1", REAL_NODE_IP}
    # ... and pods still reach the API through the kubernetes Service (CoreDNS watches it;
    # the Ray autoscaler and the in-cluster operator tests use it too).
    real_cluster.kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns")


# --------------------------------------------------------------------------- real Ray


def _autoscaler_sample(
    name: str, ns: str, *, idle_timeout: int, sample: str = "ray-cluster.autoscaler.yaml"
) -> list[dict[str, Any]]:
    """KubeRay's ray-cluster.autoscaler.yaml, resources shrunk to fit 2 CPUs."""
    path = SAMPLES / sample
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    cluster = next(d for d in docs if d["kind"] == "RayCluster")
    cluster["metadata"] = {"name": name, "namespace": ns}
    spec = cluster["spec"]
    spec["autoscalerOptions"]["idleTimeoutSeconds"] = idle_timeout
    spec["autoscalerOptions"]["resources"] = {
        "limits": {"cpu": "500m", "memory": "512Mi"},
        "requests": {"cpu": "50m", "memory": "256Mi"},
    }
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["resources"] = {
        "limits": {"cpu": "1", "memory": "2Gi"},
        "requests": {"cpu": "100m", "memory": "512Mi"},
    }
    for group in spec["workerGroupSpecs"]:
        for container in group["template"]["spec"]["containers"]:
            container["resources"] = {
                "limits": {"cpu": "1", "memory": "1Gi"},
                "requests": {"cpu": "100m", "memory": "256Mi"},
            }
    for d in docs:
        d.setdefault("metadata", {})["namespace"] = ns
    return docs


def _pod_memory_mib(uid: str) -> tuple[int, int] | None:
    """(usage incl. page cache, RSS) of a pod's cgroup in MiB (cgroup v1 memory controller)."""
    for qos in ("", "burstable/", "besteffort/"):
        base = Path(f"/sys/fs/cgroup/memory/kubepods/{qos}pod{uid}")
        with contextlib.suppress(OSError, ValueError):
            usage = int((base / "memory.usage_in_bytes").read_text())
            stat = dict(line.split() for line in (base / "memory.stat").read_text().splitlines())
            return usage >> 20, int(stat.get("total_rss", 0)) >> 20
    return None


@requires_kuberay_samples
async def test_autoscaler_sample_ready_scale_up_and_down(
    real_cluster: RealCluster, real_admin: Client, real_operator: OperatorProcess, rns: str
) -> None:
    name = "raycluster-autoscaler"
    began = time.monotonic()
    for doc in _autoscaler_sample(name, rns, idle_timeout=15):
        await real_admin.create(doc)

    async def state() -> str:
        rc = await real_admin.get("ray.io/v1", "RayCluster", name, rns)
        return "ready" if (rc.get("status") or {}).get("state") == "ready" else ""

    await wait_until("RayCluster ready", state, 180)
    record("real Ray: RayCluster created -> ready (head)", time.monotonic() - began)
    pods = await cluster_pods(real_admin, rns, name)
    heads = [p for p in pods if node_type(p) == "head"]
    assert len(heads) == 1 and pod_ready(heads[0])
    head = heads[0]["metadata"]["name"]
    containers = {c["name"] for c in heads[0]["spec"]["containers"]}
    assert containers == {"ray-head", "autoscaler"}

    def ray(*cmd: str) -> str:
        return real_cluster.kubectl(
            "-n", rns, "exec", head, "-c", "ray-head", "--", *cmd, timeout=120
        )

    # an actor needing 1 CPU: the head has num-cpus 0, so only a small-group worker fits
    up = time.monotonic()
    ray("python", "/home/ray/samples/detached_actor.py", "actor1")

    async def worker_joined() -> bool:
        ws = [p for p in await cluster_pods(real_admin, rns, name) if node_type(p) == "worker"]
        return len(ws) == 1 and pod_ready(ws[0])

    await wait_until("autoscaler adds a ready worker", worker_joined, 180, 1)
    record("real Ray: actor -> worker pod ready (scale-up)", time.monotonic() - up)
    # from the host, the head Service's dashboard port resolves through the API (its
    # EndpointSlice) to the head pod, which the host reaches on the bridge
    host, port = await service_address(real_admin, rns, f"{name}-head-svc", "dashboard")
    assert host == heads[0]["status"]["podIP"] and port == 8265
    with urllib.request.urlopen(f"http://{host}:{port}/api/version", timeout=10) as r:
        assert r.status == 200 and '"ray_version": "2.52.0"' in r.read().decode()
    assert _alive_ray_nodes(real_cluster, rns, head) == 2
    for p in await cluster_pods(real_admin, rns, name):
        mib = _pod_memory_mib(p["metadata"]["uid"])
        if mib is not None:
            record(f"real Ray: {node_type(p)} pod memory usage (MiB)", mib[0])
            record(f"real Ray: {node_type(p)} pod memory RSS (MiB)", mib[1])

    down = time.monotonic()
    ray("python", "/home/ray/samples/terminate_detached_actor.py", "actor1")

    async def no_workers() -> bool:
        return not [
            p for p in await cluster_pods(real_admin, rns, name) if node_type(p) == "worker"
        ]

    await wait_until("autoscaler removes the idle worker", no_workers, 240, 1)
    record("real Ray: actor gone -> worker removed (idle 15s)", time.monotonic() - down)
    rc = await real_admin.get("ray.io/v1", "RayCluster", name, rns)
    assert rc["spec"]["workerGroupSpecs"][0]["replicas"] == 0
    assert rc["status"]["state"] == "ready"


async def _ray_cluster_ready(admin: Client, ns: str, name: str) -> bool:
    rc = await admin.get("ray.io/v1", "RayCluster", name, ns)
    return (rc.get("status") or {}).get("state") == "ready"


async def _heads(admin: Client, ns: str, name: str) -> list[dict[str, Any]]:
    return [p for p in await cluster_pods(admin, ns, name) if node_type(p) == "head"]


def _alive_ray_nodes(real_cluster: RealCluster, ns: str, head: str) -> int:
    """Alive Ray nodes as the head's GCS sees them (-1 when it cannot be asked)."""
    out = real_cluster.kubectl(
        "-n",
        ns,
        "exec",
        head,
        "-c",
        "ray-head",
        "--",
        "python",
        "-c",
        "import ray; ray.init(log_to_driver=False); "
        "print('ALIVE_NODES=%d' % sum(n['Alive'] for n in ray.nodes()))",
        timeout=120,
        check=False,
    )
    found = re.findall(r"ALIVE_NODES=(\d+)", out)
    return int(found[-1]) if found else -1


@requires_kuberay_samples
async def test_autoscaler_v2_head_container_killed_head_recreated_worker_rejoins(
    real_cluster: RealCluster, real_admin: Client, real_operator: OperatorProcess, rns: str
) -> None:
    """v2 sample (restartPolicy Never): SIGKILL the head's Ray container in containerd; the
    operator deletes and recreates the head pod and a worker joins the new head."""
    name = "raycluster-autoscaler"
    docs = _autoscaler_sample(name, rns, idle_timeout=60, sample="ray-cluster.autoscaler-v2.yaml")
    for doc in docs:
        await real_admin.create(doc)
    began = time.monotonic()
    await wait_until("v2 RayCluster ready", lambda: _ray_cluster_ready(real_admin, rns, name), 180)
    record("real Ray v2: RayCluster created -> ready", time.monotonic() - began)
    (head_pod,) = await _heads(real_admin, rns, name)
    assert head_pod["spec"]["restartPolicy"] == "Never"
    head = head_pod["metadata"]["name"]
    real_cluster.kubectl(
        "-n",
        rns,
        "exec",
        head,
        "-c",
        "ray-head",
        "--",
        "python",
        "/home/ray/samples/detached_actor.py",
        "actor1",
        timeout=120,
    )

    async def one_ready_worker() -> bool:
        ws = [p for p in await cluster_pods(real_admin, rns, name) if node_type(p) == "worker"]
        return len(ws) == 1 and pod_ready(ws[0])

    up = await wait_until("v2 autoscaler adds a worker", one_ready_worker, 180, 1)
    record("real Ray v2: actor -> worker pod ready (scale-up)", up)

    head_pod = await real_admin.get("v1", "Pod", head, rns)
    status = next(s for s in head_pod["status"]["containerStatuses"] if s["name"] == "ray-head")
    container_id = status["containerID"].split("://", 1)[1]
    killed = time.monotonic()
    real_cluster.cp.real_node.ctr("tasks", "kill", "-s", "SIGKILL", container_id)

    async def new_head_ready() -> bool:
        heads = await _heads(real_admin, rns, name)
        return (
            len(heads) == 1
            and heads[0]["metadata"]["uid"] != head_pod["metadata"]["uid"]
            and pod_ready(heads[0])
        )

    await wait_until("operator recreates the head pod", new_head_ready, 240, 1)
    record("real Ray v2: head container killed -> new head pod ready", time.monotonic() - killed)
    (new_head,) = await _heads(real_admin, rns, name)

    async def worker_rejoined() -> bool:
        if not await one_ready_worker():
            return False
        return _alive_ray_nodes(real_cluster, rns, new_head["metadata"]["name"]) == 2

    await wait_until("a worker joins the new head", worker_rejoined, 240, 2)
    record(
        "real Ray v2: head container killed -> worker joined new head", time.monotonic() - killed
    )
    again = functools.partial(_ray_cluster_ready, real_admin, rns, name)
    await wait_until("RayCluster ready again", again, 60)


@requires_kuberay_samples
async def test_autoscaler_v2_scales_the_higher_priority_group(
    real_cluster: RealCluster, real_admin: Client, real_operator: OperatorProcess, rns: str
) -> None:
    """v2 sample on Ray 2.60.0 (2.52.0's autoscaler ignores `priority`) with a second worker
    group identical to small-group but for ``priority: 10``, listed after it: the actor's
    worker comes from the higher-priority group (on a tie Ray would take the first)."""
    if real_cluster.cp.real_node is None:
        pytest.fail("no real node")
    from hack.cluster import realnode

    version = realnode.images.RAY_NEW_VERSION
    name = "raycluster-priority"
    docs = _autoscaler_sample(name, rns, idle_timeout=60, sample="ray-cluster.autoscaler-v2.yaml")
    cluster = next(d for d in docs if d["kind"] == "RayCluster")
    spec = cluster["spec"]
    spec["rayVersion"] = version
    spec["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = (
        f"rayproject/ray:{version}"
    )
    low = spec["workerGroupSpecs"][0]
    low["template"]["spec"]["containers"][0]["image"] = f"rayproject/ray:{version}"
    low.update(maxReplicas=1, priority=0)
    high = copy.deepcopy(low)
    high.update(groupName="preferred-group", priority=10)
    spec["workerGroupSpecs"].append(high)
    for doc in docs:
        await real_admin.create(doc)
    await wait_until("RayCluster ready", lambda: _ray_cluster_ready(real_admin, rns, name), 180)
    (head_pod,) = await _heads(real_admin, rns, name)
    began = time.monotonic()
    real_cluster.kubectl(
        "-n",
        rns,
        "exec",
        head_pod["metadata"]["name"],
        "-c",
        "ray-head",
        "--",
        "python",
        "/home/ray/samples/detached_actor.py",
        "actor1",
        timeout=120,
    )

    async def ready_workers() -> list[str]:
        ws = [p for p in await cluster_pods(real_admin, rns, name) if node_type(p) == "worker"]
        return [p["metadata"]["labels"].get("ray.io/group", "") for p in ws if pod_ready(p)]

    await wait_until("a worker is added", ready_workers, 180, 1)
    record("real Ray 2.60 v2: actor -> worker ready (priority)", time.monotonic() - began)
    assert await ready_workers() == ["preferred-group"]
    rc = await real_admin.get("ray.io/v1", "RayCluster", name, rns)
    replicas = {g["groupName"]: g.get("replicas") for g in rc["spec"]["workerGroupSpecs"]}
    assert replicas == {"small-group": 0, "preferred-group": 1}


# last: it stops the host operator (one operator at a time)
@requires_kuberay_samples
async def test_helm_chart_operator_in_cluster_brings_a_raycluster_to_ready(
    real_cluster: RealCluster, real_admin: Client, real_operator: OperatorProcess, rns: str
) -> None:
    """The chart as shipped (the slim image kuberay-python/operator:<version> built by
    hack/release/images.py, its ServiceAccount and RBAC, a read-only root filesystem) runs the
    operator as a pod on the real node."""
    real_operator.terminate()  # one operator at a time: the chart's watches every namespace
    from hack.build import build_helm
    from hack.cluster import realnode

    helm = build_helm.binary_path()
    assert helm.exists(), f"no helm at {helm}: run `make helm`"
    began = time.monotonic()
    archive = realnode.images.ensure(["operator"])["operator"]
    real_cluster.cp.real_node.import_images({"operator": archive})
    record("operator image build (cached) + import", time.monotonic() - began)
    release_ns = await real_namespace(real_admin, "kuberay-helm")
    env = {
        **os.environ,
        "KUBECONFIG": str(real_cluster.kubeconfig),
        "HOME": str(real_cluster.cp.dir),
    }
    began = time.monotonic()
    done = subprocess.run(
        [
            str(helm),
            "install",
            "kuberay-operator",
            str(ROOT / "manifests/helm/kuberay-operator"),
            "-n",
            release_ns,
            "--wait",
            "--timeout",
            "3m",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    record("helm install --wait (operator pod ready)", time.monotonic() - began)
    try:
        pods, _ = await real_admin.list_all("v1", "Pod", release_ns)
        (op_pod,) = pods
        assert pod_ready(op_pod) and op_pod["spec"]["nodeName"] == "kuberay-real-0"
        assert op_pod["spec"]["serviceAccountName"] == "kuberay-operator"
        name = "raycluster-helm"
        began = time.monotonic()
        for doc in _autoscaler_sample(name, rns, idle_timeout=60):
            await real_admin.create(doc)
        await wait_until(
            "RayCluster ready (in-cluster operator)",
            lambda: _ray_cluster_ready(real_admin, rns, name),
            180,
        )
        record("in-cluster operator: RayCluster created -> ready", time.monotonic() - began)
    finally:
        subprocess.run(
            [str(helm), "uninstall", "kuberay-operator", "-n", release_ns, "--wait"],
            capture_output=True,
            env=env,
            timeout=120,
        )
        with contextlib.suppress(NotFound, KubeError):
            await real_admin.delete("v1", "Namespace", release_ns)
