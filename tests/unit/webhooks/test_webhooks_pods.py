"""The pods and pods/binding mutating webhooks answering AdmissionReviews, over fake reads."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import pytest

from kuberay.kube import NotFound
from kuberay.webhooks.pods import PodWebhooks, mutate_binding, mutate_pod
from tests.unit.webhooks.test_webhooks_node_labels import RAY_START, ULIMIT, worker_pod

ZONE = "topology.kubernetes.io/zone"
ON = {"NodeLabelDelivery": True}


def _ref(key: str) -> dict[str, Any]:
    return {"valueFrom": {"nodeRef": {"fieldPath": f"metadata.labels['{key}']"}}}


def _cluster(name: str, groups: dict[str, bool]) -> dict[str, Any]:
    specs = [
        {"groupName": g, **({"labelRefs": [_ref(ZONE)]} if on else {})} for g, on in groups.items()
    ]
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"workerGroupSpecs": specs}}


def _pod(cluster: str, group: str, node_type: str = "worker") -> dict[str, Any]:
    pod = worker_pod()
    pod["metadata"]["name"] = f"{cluster}-{group}-worker-abcde"
    pod["metadata"]["uid"] = "u-1"
    pod["metadata"]["labels"] = {
        "ray.io/cluster": cluster,
        "ray.io/group": group,
        "ray.io/node-type": node_type,
    }
    return pod


class FakeReads:
    def __init__(self) -> None:
        self.clusters = [_cluster("topo", {"test": True, "plain": False})]
        self.pods = {
            p["metadata"]["name"]: p for p in (_pod("topo", "test"), _pod("topo", "plain"))
        }
        self.nodes = {"node-a": {ZONE: "us-central1-a"}, "node-b": {}}
        self.pod_reads = 0

    async def raycluster(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return next((c for c in self.clusters if c["metadata"]["name"] == name), None)

    async def rayclusters(self, namespace: str) -> list[Mapping[str, Any]]:
        return list(self.clusters)

    async def pod(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        self.pod_reads += 1
        return self.pods.get(name)

    async def node_labels(self, name: str) -> Mapping[str, str]:
        if name not in self.nodes:
            raise NotFound(404, f'nodes "{name}" not found')
        return self.nodes[name]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def event(self, obj: Any, etype: str, reason: str, message: str, action: str = "") -> None:
        self.events.append((obj["metadata"]["name"], etype, reason, message, action))


def hooks(gates: Any = ON, allowed: Any = (ZONE,)) -> tuple[PodWebhooks, FakeReads, Recorder]:
    reads, recorder = FakeReads(), Recorder()
    return PodWebhooks(reads, recorder, gates, frozenset(allowed)), reads, recorder  # type: ignore[arg-type]


def _review(obj: Any, resource: str = "pods", sub: str = "", **request: Any) -> dict[str, Any]:
    body = {"uid": "u", "operation": "CREATE", "namespace": "default", "object": obj}
    body.update(resource={"group": "", "version": "v1", "resource": resource}, subResource=sub)
    body.update(request)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": body}


def _patch(answer: dict[str, Any]) -> list[dict[str, Any]] | None:
    response = answer["response"]
    assert response["allowed"] is True, response
    raw = response.get("patch")
    return json.loads(base64.b64decode(raw)) if raw else None


async def test_pods_webhook_prepares_only_labelrefs_workers() -> None:
    h, _, _ = hooks()
    patch = _patch(await mutate_pod(h, _review(_pod("topo", "test"))))
    assert patch is not None and patch[0]["path"] == "/spec/containers/0/args/0"
    assert patch[0]["value"].startswith(ULIMIT + 'if [ -z "$RAY_NODE_LABELS_JSON" ]')
    assert patch[0]["value"].endswith(f"{RAY_START} --labels-file=/tmp/ray-labels.yaml")
    assert _patch(await mutate_pod(h, _review(_pod("topo", "plain")))) is None
    assert _patch(await mutate_pod(h, _review(_pod("topo", "test", "head")))) is None
    off, _, _ = hooks(gates=None)
    assert _patch(await mutate_pod(off, _review(_pod("topo", "test")))) is None


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        (
            _pod("ghost", "test"),
            "cannot read RayCluster default/ghost for a worker pod of group test",
        ),
        (_pod("topo", "gone"), "worker group gone not found in RayCluster default/topo"),
    ],
)
async def test_pods_webhook_denies_what_it_cannot_place(pod: Any, message: str) -> None:
    h, _, _ = hooks()
    response = (await mutate_pod(h, _review(pod)))["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403 and response["status"]["message"].startswith(message)


def _binding(pod: str, node: str, annotations: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": pod, "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta,
        "target": {"kind": "Node", "name": node},
    }


async def _bind(h: PodWebhooks, pod: str, node: str, **kw: Any) -> Any:
    review = _review(
        _binding(pod, node, kw.pop("annotations", None)), "pods", "binding", name=pod, **kw
    )
    return _patch(await mutate_binding(h, review))


async def test_binding_webhook_delivers_and_withholds_with_an_event() -> None:
    h, _, recorder = hooks()
    patch = await _bind(h, "topo-test-worker-abcde", "node-a")
    assert patch == [
        {
            "op": "add",
            "path": "/metadata/annotations",
            "value": {"ray.io/node-labels": '{"topology.kubernetes.io/zone":"us-central1-a"}'},
        }
    ]
    assert recorder.events == []
    assert await _bind(h, "topo-test-worker-abcde", "node-b") is None
    assert recorder.events == [
        (
            "topo-test-worker-abcde",
            "Warning",
            "RequiredNodeLabelMissing",
            'node labels not delivered for the binding to node node-b: node lacks label "'
            + ZONE
            + '"',
            "DeliverNodeLabels",
        )
    ]
    assert await _bind(h, "topo-test-worker-abcde", "node-z") is None  # unreadable node
    assert "cannot read node" in recorder.events[-1][3]


async def test_binding_webhook_passes_through_quietly() -> None:
    h, reads, recorder = hooks()
    assert await _bind(h, "topo-test-worker-abcde", "node-b", dryRun=True) is None
    assert await _bind(h, "topo-plain-worker-abcde", "node-a") is None
    assert (
        await _bind(h, "topo-test-worker-abcde", "node-a", annotations={"ray.io/node-labels": "{}"})
        is None
    )
    assert recorder.events == []
    reads.clusters = [_cluster("topo", {"plain": False})]
    before = reads.pod_reads
    assert await _bind(h, "nginx", "node-a") is None
    assert reads.pod_reads == before, "no labelRefs group in the namespace: decided without reads"
    off, _, _ = hooks(gates=None)
    assert await _bind(off, "topo-test-worker-abcde", "node-a") is None
