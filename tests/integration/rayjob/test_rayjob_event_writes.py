"""A repeated Event costs the apiserver what client-go's recorder would: a RayJob whose
``clusterSelector`` names no cluster warns ``RayClusterNotFound`` on every (backed-off)
pass, and that is one Event written twice -- created, then made a series -- until the
operator stops and writes the series' last count (or its 30-minute refresh does)."""

from __future__ import annotations

from prometheus_client import REGISTRY

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.event_writes import watch_event_writes
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import rayjob

PASSES = 8


def rayjob_errors() -> float:
    labels = {"controller": "rayjob"}
    return REGISTRY.get_sample_value("controller_runtime_reconcile_errors_total", labels) or 0.0


async def test_a_missing_selected_cluster_is_one_event_written_twice(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    selector = {"ray.io/cluster": "absent"}
    async with watch_event_writes(kclient, namespace) as writes:
        async with start_operator(kclient, namespace):
            before = rayjob_errors()
            await kclient.create(
                rayjob("sel", namespace, clusterSelector=selector, rayClusterSpec=None)
            )
            # Each failed pass (retried with backoff) records RayClusterNotFound.
            await eventually(
                lambda: rayjob_errors() - before >= PASSES, timeout=60, message="failed passes"
            )
        # Stopped: the recorder wrote the count it had kept.
        await eventually(
            lambda: writes.of("RayClusterNotFound")[-1].count >= PASSES,
            timeout=30,
            message="the last count",
        )
        seen = writes.of("RayClusterNotFound")
    assert [(w.type, w.count) for w in seen[:2]] == [("ADDED", 1), ("MODIFIED", 2)]
    assert len(seen) == 3, [w.count for w in seen]
    assert len({w.name for w in seen}) == 1
