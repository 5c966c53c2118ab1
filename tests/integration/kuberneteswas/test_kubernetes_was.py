"""The KubernetesWAS gate on a real kube-apiserver v1.36 serving scheduling.k8s.io/v1alpha2:
the RayCluster controller (in-process, WAS plugin selected as the gate does) creates
KubeRay's Workload and PodGroup, which the apiserver validates and stores; pods carry
``spec.schedulingGroup`` (the real pod field, kept by the apiserver) and the
``default-scheduler``; a new gang size replaces both immutable objects; dropping the gang
label removes them (past the apiserver's PodGroup protection finalizer); a same-named
object the cluster does not control is left alone; an unchanged world writes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml

from kuberay.controllers.batchscheduler.kubernetes_was import (
    API_VERSION,
    PLUGIN_NAME,
    POD_GROUP_PROTECTION_FINALIZER,
    build_pod_group,
    build_workload,
)
from kuberay.kube import Client, NotFound
from kuberay.reconcile import Controller, Request
from tests.helpers import eventually, wait_quiet
from tests.integration.operator_harness import wait_for
from tests.integration.raycluster.conftest import start_operator
from tests.kuberay_samples import requires_kuberay_samples, sample

SAMPLE = sample("ray-cluster.scheduler-plugins.yaml")  # KubeRay's, unchanged
RAY = "ray.io/v1"

pytestmark = [requires_kuberay_samples, pytest.mark.usefixtures("was_crds")]


@pytest.fixture
async def was_operator(kclient: Client, namespace: str) -> AsyncIterator[Controller]:
    """The RayCluster controller with the plugin the KubernetesWAS gate selects."""
    async with start_operator(
        kclient,
        namespace,
        gates="KubernetesWAS=true",
        requeue_seconds=10,
        batch_scheduler=PLUGIN_NAME,
    ) as op:
        yield op.controller


def gang_cluster(namespace: str, name: str = "gang", label: str = "true") -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load(SAMPLE.read_text())
    body["metadata"] = {
        "name": name,
        "namespace": namespace,
        "labels": {"ray.io/gang-scheduling-enabled": label},
    }
    return body


async def get_or_none(client: Client, kind: str, name: str, ns: str) -> dict[str, Any] | None:
    try:
        return await client.get(API_VERSION, kind, name, ns)
    except NotFound:
        return None


def min_count(obj: dict[str, Any]) -> int:
    spec = obj["spec"]
    holder = spec["podGroupTemplates"][0] if "podGroupTemplates" in spec else spec
    return int(holder["schedulingPolicy"]["gang"]["minCount"])


async def wait_gang(
    client: Client, ns: str, name: str, count: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Wait until ``name``'s Workload and PodGroup both exist with gang minCount ``count``;
    returns (Workload, PodGroup)."""

    async def both() -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        workload = await get_or_none(client, "Workload", name, ns)
        group = await get_or_none(client, "PodGroup", f"{name}-cluster", ns)
        return workload, group

    found: tuple[dict[str, Any], dict[str, Any]] = await wait_for(
        both,
        lambda pair: all(obj is not None and min_count(obj) == count for obj in pair),
        timeout=60,
        interval=0.2,
        message=f"Workload + PodGroup of {name}, minCount {count}",
    )
    return found


async def cluster_pods(client: Client, ns: str, name: str, n: int) -> list[dict[str, Any]]:
    async def listed() -> list[dict[str, Any]] | None:
        items, _ = await client.list_all("v1", "Pod", ns, label_selector=f"ray.io/cluster={name}")
        live = [p for p in items if not p["metadata"].get("deletionTimestamp")]
        return live if len(live) == n else None

    pods: list[dict[str, Any]] = await eventually(
        listed, timeout=60, interval=0.2, message=f"{n} pods of {name}"
    )
    return pods


def _no_nulls(value: Any) -> Any:
    """Drop JSON nulls (v1.36 serialises an unset ``schedulingConstraints`` as null)."""
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


def _within(want: Any, have: Any) -> bool:
    """``want`` is ``have`` with some map keys left out (defaults the apiserver added)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(
            k in have and _within(v, have[k]) for k, v in want.items()
        )
    if isinstance(want, list):
        return (
            isinstance(have, list)
            and len(want) == len(have)
            and all(_within(w, h) for w, h in zip(want, have, strict=True))
        )
    return bool(want == have)


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    """What the operator wrote: its metadata fields and the spec."""
    meta = obj["metadata"]
    keep = ("name", "namespace", "labels", "ownerReferences")
    return _no_nulls({"metadata": {k: meta.get(k) for k in keep}, "spec": obj["spec"]})


async def test_gang_cluster_gets_kuberays_workload_pod_group_and_pod_fields(
    was_operator: Controller, kclient: Client, namespace: str
) -> None:
    # KubeRay compares the label value case-insensitively
    cluster = await kclient.create(gang_cluster(namespace, label="True"))
    workload, group = await wait_gang(kclient, namespace, "gang", 3)
    # everything the operator wrote is stored as written (the apiserver adds defaults)
    assert _within(_strip(build_workload(cluster)), _strip(workload))
    assert _within(_strip(build_pod_group(cluster)), _strip(group))
    for pod in await cluster_pods(kclient, namespace, "gang", 3):
        assert pod["spec"]["schedulerName"] == "default-scheduler"
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": "gang-cluster"}


async def test_unlabelled_cluster_gets_nothing_and_keeps_plain_pods(
    was_operator: Controller, kclient: Client, namespace: str
) -> None:
    body = gang_cluster(namespace, name="plain")
    body["metadata"]["labels"] = {}
    await kclient.create(body)
    for pod in await cluster_pods(kclient, namespace, "plain", 3):
        assert "schedulingGroup" not in pod["spec"]
    assert await get_or_none(kclient, "Workload", "plain", namespace) is None
    assert await get_or_none(kclient, "PodGroup", "plain-cluster", namespace) is None


async def test_new_gang_size_replaces_both_and_unlabelling_removes_them(
    was_operator: Controller, kclient: Client, namespace: str
) -> None:
    await kclient.create(gang_cluster(namespace))
    workload, group = await wait_gang(kclient, namespace, "gang", 3)
    await kclient.patch(
        RAY,
        "RayCluster",
        "gang",
        [
            {"op": "replace", "path": "/spec/workerGroupSpecs/0/maxReplicas", "value": 3},
            {"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 3},
        ],
        namespace,
        patch_type="json",
    )
    # both immutable: replaced (new objects), not edited in place
    new_workload, new_group = await wait_gang(kclient, namespace, "gang", 4)
    assert new_workload["metadata"]["uid"] != workload["metadata"]["uid"]
    assert new_group["metadata"]["uid"] != group["metadata"]["uid"]

    await kclient.patch(
        RAY,
        "RayCluster",
        "gang",
        {"metadata": {"labels": {"ray.io/gang-scheduling-enabled": None}}},
        namespace,
    )

    async def gone() -> bool:
        return (
            await get_or_none(kclient, "Workload", "gang", namespace) is None
            and await get_or_none(kclient, "PodGroup", "gang-cluster", namespace) is None
        )

    await eventually(gone, timeout=60, interval=0.2, message="Workload and PodGroup deleted")


async def test_foreign_workload_of_the_same_name_is_left_alone(
    was_operator: Controller, kclient: Client, namespace: str
) -> None:
    foreign = {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {"name": "taken", "namespace": namespace},
        "spec": {"podGroupTemplates": [{"name": "x", "schedulingPolicy": {"basic": {}}}]},
    }
    before = await kclient.create(foreign)
    await kclient.create(gang_cluster(namespace, name="taken"))

    async def refused() -> bool:
        """A reconcile pass (once the cache holds the cluster) fails on the collision."""
        try:
            await was_operator.reconciler.reconcile(Request(namespace, "taken"))
        except Exception as exc:
            return "already exists and is not owned by this RayCluster" in str(exc)
        return False

    await eventually(refused, timeout=60, interval=0.2, message="reconcile refused")
    after = await kclient.get(API_VERSION, "Workload", "taken", namespace)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert await get_or_none(kclient, "PodGroup", "taken-cluster", namespace) is None


async def test_unchanged_world_makes_zero_writes(
    was_operator: Controller, kclient: Client, namespace: str
) -> None:
    await kclient.create(gang_cluster(namespace))
    _, group = await wait_gang(kclient, namespace, "gang", 3)
    await cluster_pods(kclient, namespace, "gang", 3)
    await wait_quiet(lambda: kclient.stats.writes, quiet=3.0, timeout=60, message="writes")
    before = kclient.stats.writes
    for _ in range(3):
        await was_operator.reconciler.reconcile(Request(namespace, "gang"))
    assert kclient.stats.writes == before
    # the apiserver's PodGroupProtection admission guards the group while pods use it
    assert POD_GROUP_PROTECTION_FINALIZER in (group["metadata"].get("finalizers") or [])
