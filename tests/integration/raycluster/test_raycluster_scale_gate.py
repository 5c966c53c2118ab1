"""``workerGroupSpecs[].scaleStrategy.scaleGate`` (KubeRay v1.8, #5094) on the real apiserver.

Kueue marks a worker group that is over quota with a gate so the Ray autoscaler v2 falls back
to another group at once. Kueue v0.17.0 (the one built here) does not write the gate yet (its
writer is kubernetes-sigs/kueue#14656, unreleased; its go.mod still pins KubeRay v1.6), so the
gate is written the way Kueue's scheduler writes: server-side apply under its field manager
``kueue-admission`` (Kueue's ``constants.AdmissionName``). ``workerGroupSpecs`` is an atomic
list (as in KubeRay's CRD), so the apply carries the whole list, forced.
"""

from __future__ import annotations

from typing import Any

import pytest

from kuberay.kube import Client, Invalid
from kuberay.reconcile import Request
from tests.integration.operator_harness import wait_for
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import get_cluster, pods_of, raycluster

KUEUE_FIELD_MANAGER = "kueue-admission"
GATE = {"type": "kueue.k8s.io/quota-exceeded"}


def _gates(cluster: dict[str, Any]) -> Any:
    return cluster["spec"]["workerGroupSpecs"][0].get("scaleStrategy", {}).get("scaleGate")


async def _apply_gates(client: Client, namespace: str, name: str, gates: list[Any]) -> None:
    groups = (await get_cluster(client, namespace, name))["spec"]["workerGroupSpecs"]
    groups[0].setdefault("scaleStrategy", {})["scaleGate"] = gates
    body = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"workerGroupSpecs": groups},
    }
    await client.apply(body, field_manager=KUEUE_FIELD_MANAGER, force=True)


async def test_kueues_gate_is_kept_and_never_touched(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    await kclient.create(
        raycluster("gated", namespace, replicas=1, upgradeStrategy={"type": "Recreate"})
    )
    heads = await wait_for(
        lambda: pods_of(kclient, namespace, "gated", **{"ray.io/node-type": "head"}),
        timeout=30,
        message="head pod",
    )
    head_uid = heads[0]["metadata"]["uid"]

    await _apply_gates(kclient, namespace, "gated", [GATE, {"type": "example.com/cordon"}])
    stored = await get_cluster(kclient, namespace, "gated")
    assert _gates(stored) == [GATE, {"type": "example.com/cordon"}], "the CRD pruned scaleGate"
    managers = {m["manager"] for m in stored["metadata"]["managedFields"]}
    assert KUEUE_FIELD_MANAGER in managers

    # Reconciles after the gate appeared (and after Kueue removed one) leave it as Kueue
    # wrote it, and a gate is no spec change: the Recreate cluster keeps its head pod.
    for gates in ([GATE, {"type": "example.com/cordon"}], [GATE]):
        if gates == [GATE]:
            await _apply_gates(kclient, namespace, "gated", gates)
        for _ in range(2):
            await operator.reconciler.reconcile(Request(namespace, "gated"))
        after = await get_cluster(kclient, namespace, "gated")
        assert _gates(after) == gates
        heads = await pods_of(kclient, namespace, "gated", **{"ray.io/node-type": "head"})
        assert [p["metadata"]["uid"] for p in heads] == [head_uid]

    # A duplicate type is refused: the gates are a map keyed by type.
    groups = after["spec"]["workerGroupSpecs"]
    groups[0]["scaleStrategy"]["scaleGate"] = [GATE, GATE]
    with pytest.raises(Invalid, match="Duplicate value"):
        await kclient.patch(
            "ray.io/v1", "RayCluster", "gated", {"spec": {"workerGroupSpecs": groups}}, namespace
        )
