"""The Events the operator writes to the apiserver for KubeRay's samples read as
KubeRay's: for every Event about the cluster, its type and message fill one of the
formats KubeRay's Go source uses for that reason (tests/kuberay_events.py)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kuberay.kube import Client
from tests.helpers import eventually
from tests.integration.raycluster.conftest import Operator, start_operator
from tests.integration.raycluster.helpers import pods_of, raycluster, wait_event_reasons
from tests.kuberay_events import fills, kuberay_formats
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples

CREATED = {"CreatedService", "CreatedHeadPod", "CreatedWorkerPod"}


def _docs(sample: str) -> list[dict[str, Any]]:
    text = (SAMPLES / sample).read_text()
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


@requires_kuberay_samples
@pytest.mark.parametrize(
    ("sample", "reasons"),
    [
        ("ray-cluster.sample.yaml", CREATED),
        (
            "ray-cluster.autoscaler.yaml",
            # Its workers wait for the head; the autoscaler's RBAC comes first.
            {"CreatedService", "CreatedHeadPod"}
            | {"CreatedServiceAccount", "CreatedRole", "CreatedRoleBinding"},
        ),
    ],
)
async def test_sample_events_have_kuberays_text(
    crds_installed: None, kclient: Client, namespace: str, sample: str, reasons: set[str]
) -> None:
    docs = _docs(sample)
    (cluster,) = [d for d in docs if d.get("kind") == "RayCluster"]
    name = cluster["metadata"]["name"]
    async with start_operator(kclient, namespace):
        for doc in docs:
            if doc.get("kind") in ("RayCluster", "ConfigMap"):
                doc["metadata"]["namespace"] = namespace
                await kclient.create(doc)
        events = await wait_event_reasons(kclient, namespace, name, reasons)
    assert events
    for event in events:
        reason, etype, message = event["reason"], event["type"], event["message"]
        theirs = kuberay_formats(reason)
        assert theirs, f"KubeRay emits no {reason!r} Event"
        assert any(t == etype and fills(tmpl, message) for t, tmpl in theirs), (
            f"{etype} {reason}: {message!r} fits none of KubeRay's formats {sorted(theirs)}"
        )
        assert namespace in message  # KubeRay names the object as namespace/name


async def test_pod_deletion_events_read_exactly_like_kuberays(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    """A failed head pod is deleted with KubeRay's details (phase, restart policy, Go's
    %v of the Ray container's terminated state: nil here); suspending deletes the pods
    with KubeRay's sentence."""
    await kclient.create(raycluster("texts", namespace, replicas=1))

    async def head() -> dict[str, Any]:
        heads = await pods_of(kclient, namespace, "texts", **{"ray.io/node-type": "head"})
        assert heads
        return heads[0]

    pod = await eventually(head, timeout=60, message="a head pod")
    name = pod["metadata"]["name"]
    await kclient.patch_status("v1", "Pod", name, {"status": {"phase": "Failed"}}, namespace)
    events = await wait_event_reasons(kclient, namespace, "texts", {"DeletedHeadPod"})
    policy = pod["spec"].get("restartPolicy", "")
    assert [e["message"] for e in events if e["reason"] == "DeletedHeadPod"] == [
        f"Deleted head Pod {namespace}/{name}; Pod status: Failed; Pod restart policy: "
        f"{policy}; Ray container terminated status: nil"
    ]
    await kclient.patch("ray.io/v1", "RayCluster", "texts", {"spec": {"suspend": True}}, namespace)
    events = await wait_event_reasons(kclient, namespace, "texts", {"DeletedPod"})
    assert [e["message"] for e in events if e["reason"] == "DeletedPod"] == [
        f"Deleted Pods for RayCluster {namespace}/texts due to suspension"
    ]
