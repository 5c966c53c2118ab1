"""Gang scheduling by the real scheduler-plugins scheduler (Coscheduling) on the full
local cluster: the operator runs with ``--batch-scheduler=scheduler-plugins``, the
RayCluster is KubeRay's ``ray-cluster.scheduler-plugins.yaml`` sample (head + 2 workers,
1 CPU each, gang label on) pinned by a node selector to kwok nodes of 1 CPU each that the
test adds. With room for the whole gang every pod binds and the PodGroup runs.

One node short, the scheduler tries every pod (PodScheduled=False or a FailedScheduling
Event) and binds none, the PodGroup not running, until the missing node is added; then
all bind together.

Skipped, with the build's error, only when the scheduler cannot be built here.
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.kube import Client, KubeError, NotFound
from kuberay.testing.crds import install_crds
from tests.e2e import schedulerplugins
from tests.e2e.conftest import E2ECluster, OperatorIdentity, _operator_starter, _stop_all
from tests.e2e.harness import OperatorProcess, cluster_pods
from tests.helpers import eventually
from tests.kuberay_samples import requires_kuberay_samples, sample

SAMPLE = sample("ray-cluster.scheduler-plugins.yaml")  # KubeRay's, unchanged
GANG_NODE_LABEL = "kuberay-e2e/gang-pool"
POD_GROUP_API = "scheduling.x-k8s.io/v1alpha1"
#: the rule the Helm chart adds for ``batchScheduler.name: scheduler-plugins`` (KubeRay's)
SCHEDULER_PLUGINS_RULE = {
    "apiGroups": ["scheduling.x-k8s.io"],
    "resources": ["podgroups"],
    "verbs": ["create", "get", "list", "watch"],
}
_next_node = iter(range(200, 250))

pytestmark = [
    requires_kuberay_samples,
    pytest.mark.usefixtures("needs_local_cluster"),  # kwok nodes with set capacity
]


@pytest.fixture(scope="module")
def sp_binaries() -> dict[str, Path]:
    from hack.build import build_scheduler_plugins

    try:
        return schedulerplugins.build()
    except build_scheduler_plugins.BuildError as exc:
        pytest.skip(f"the scheduler-plugins scheduler cannot be built here: {exc}")


@pytest.fixture(scope="module")
async def gang_scheduler(
    e2e_cluster: E2ECluster, admin: Client, sp_binaries: dict[str, Path]
) -> AsyncIterator[schedulerplugins.SchedulerPlugins]:
    await install_crds(admin, directory=schedulerplugins.crd_dir())
    sp = schedulerplugins.SchedulerPlugins(
        sp_binaries, e2e_cluster.kubeconfig, e2e_cluster.workdir / "scheduler-plugins"
    )
    try:
        sp.start(timeout=e2e_cluster.timeout(120))
        yield sp
    finally:
        sp.stop()


@pytest.fixture(scope="module")
async def sp_operator(
    e2e_cluster: E2ECluster,
    operator_identity: OperatorIdentity,
    admin: Client,
    gang_scheduler: schedulerplugins.SchedulerPlugins,
) -> AsyncIterator[OperatorProcess]:
    """The operator with ``--batch-scheduler=scheduler-plugins`` and the chart's extra rule."""
    name = f"kuberay-e2e-scheduler-plugins-{uuid.uuid4().hex[:6]}"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [SCHEDULER_PLUGINS_RULE],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": "kuberay-operator",
                "namespace": operator_identity.namespace,
            }
        ],
    }
    await admin.create(role)
    await admin.create(binding)
    started: list[OperatorProcess] = []
    try:
        op = _operator_starter(e2e_cluster, operator_identity, started)(
            "scheduler-plugins",
            leader_election=False,
            extra_args=["--batch-scheduler=scheduler-plugins"],
        )
        await op.wait_ready(e2e_cluster.timeout(60))
        yield op
    finally:
        _stop_all(started)
        for kind in ("ClusterRoleBinding", "ClusterRole"):
            with contextlib.suppress(NotFound, KubeError):
                await admin.delete("rbac.authorization.k8s.io/v1", kind, name)


@pytest.fixture
async def gang_nodes(admin: Client) -> AsyncIterator[list[str]]:
    """Names of the kwok nodes a test adds (deleted afterwards)."""
    names: list[str] = []
    try:
        yield names
    finally:
        for name in names:
            with contextlib.suppress(NotFound):
                await admin.delete("v1", "Node", name)


async def add_node(admin: Client, pool: str, names: list[str]) -> str:
    """A kwok node of 1 CPU / 8Gi labelled ``GANG_NODE_LABEL=pool``."""
    from kuberay.testing import envtest as controlplane

    index = next(_next_node)
    name = f"kwok-gang-{index}"
    node = controlplane.fake_node(name, index)
    node["metadata"]["labels"][GANG_NODE_LABEL] = pool
    capacity = {"cpu": "1", "memory": "8Gi", "pods": "110"}
    node["status"]["capacity"] = dict(capacity)
    node["status"]["allocatable"] = dict(capacity)
    await admin.create(node)
    names.append(name)
    return name


def gang_cluster(namespace: str, pool: str) -> dict[str, Any]:
    """KubeRay's scheduler-plugins sample, pinned to the ``pool`` nodes."""
    body: dict[str, Any] = yaml.safe_load(SAMPLE.read_text())
    body["metadata"]["namespace"] = namespace
    templates = [body["spec"]["headGroupSpec"]["template"]] + [
        g["template"] for g in body["spec"]["workerGroupSpecs"]
    ]
    for template in templates:
        template["spec"]["nodeSelector"] = {GANG_NODE_LABEL: pool}
    return copy.deepcopy(body)


def gang_size(body: dict[str, Any]) -> int:
    return 1 + sum(int(g["replicas"]) for g in body["spec"]["workerGroupSpecs"])


def bound(pod: dict[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def unschedulable(pod: dict[str, Any]) -> bool:
    """The scheduler tried the pod and gave up (for now): PodScheduled=False."""
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


async def pod_group_status(admin: Client, namespace: str, name: str) -> dict[str, Any]:
    pg = await admin.get(POD_GROUP_API, "PodGroup", name, namespace)
    status: dict[str, Any] = pg.get("status") or {}
    return status


async def wait_all_bound(
    e2e_cluster: E2ECluster, admin: Client, ns: str, body: dict[str, Any], pool: list[str]
) -> list[dict[str, Any]]:
    name, size = body["metadata"]["name"], gang_size(body)

    async def all_running() -> list[dict[str, Any]] | None:
        pods = await cluster_pods(admin, ns, name)
        if len(pods) != size or not all(bound(p) for p in pods):
            return None
        status = await pod_group_status(admin, ns, name)
        if status.get("phase") != "Running" or status.get("running") != size:
            return None
        return pods

    pods: list[dict[str, Any]] = await eventually(
        all_running,
        timeout=e2e_cluster.timeout(120),
        interval=0.5,
        message=f"all {size} pods of {name} bound and its PodGroup Running",
    )
    assert {p["spec"]["nodeName"] for p in pods} <= set(pool)
    return pods


async def test_whole_gang_fits_every_pod_binds(
    e2e_cluster: E2ECluster,
    admin: Client,
    ns: str,
    sp_operator: OperatorProcess,
    gang_nodes: list[str],
) -> None:
    body = gang_cluster(ns, pool=ns)
    for _ in range(gang_size(body)):
        await add_node(admin, ns, gang_nodes)
    await admin.create(body)
    pods = await wait_all_bound(e2e_cluster, admin, ns, body, gang_nodes)
    name = body["metadata"]["name"]
    for pod in pods:
        assert pod["spec"]["schedulerName"] == schedulerplugins.SCHEDULER_NAME
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == name
    # one CPU per node: the gang is spread over every node of the pool
    assert len({p["spec"]["nodeName"] for p in pods}) == gang_size(body)


async def test_gang_short_by_one_pod_binds_none_until_a_node_is_added(
    e2e_cluster: E2ECluster,
    admin: Client,
    ns: str,
    sp_operator: OperatorProcess,
    gang_scheduler: schedulerplugins.SchedulerPlugins,
    gang_nodes: list[str],
) -> None:
    body = gang_cluster(ns, pool=ns)
    body["metadata"]["name"] = "gang-short"  # not the other test's PodGroup name
    name, size = body["metadata"]["name"], gang_size(body)
    for _ in range(size - 1):
        await add_node(admin, ns, gang_nodes)
    await admin.create(body)

    async def tried(pod: dict[str, Any]) -> bool:
        """The scheduler got to this pod and did not bind it: PodScheduled=False, or a
        FailedScheduling Event for it."""
        if unschedulable(pod):
            return True
        events, _ = await admin.list_all(
            "v1", "Event", ns, field_selector=f"involvedObject.name={pod['metadata']['name']}"
        )
        return any(e.get("reason") == "FailedScheduling" for e in events)

    async def every_pod_tried() -> list[dict[str, Any]] | None:
        pods = await cluster_pods(admin, ns, name)
        if len(pods) != size:
            return None
        for pod in pods:
            if not await tried(pod):
                return None
        return pods

    await eventually(
        every_pod_tried,
        timeout=e2e_cluster.timeout(180),
        interval=1.0,
        message=f"every pod of {name} tried by the gang scheduler and left unbound",
    )
    # room for size - 1 pods, yet not one of them was bound: all or nothing
    pods = await cluster_pods(admin, ns, name)
    assert [p["metadata"]["name"] for p in pods if bound(p)] == [], gang_scheduler.log_tails()
    status = await pod_group_status(admin, ns, name)
    assert status.get("phase") not in ("Scheduled", "Running") and not status.get("running")

    await add_node(admin, ns, gang_nodes)
    await wait_all_bound(e2e_cluster, admin, ns, body, gang_nodes)
