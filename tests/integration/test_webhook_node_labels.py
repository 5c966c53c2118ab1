"""Node label delivery's webhooks called by a real kube-apiserver (KubeRay v1.8, gate
NodeLabelDelivery): the CRD keeps ``labelRefs``, the validating webhooks apply the operator's
allowlist in KubeRay's words, the pods webhook prepares a worker at CREATE and the
pods/binding webhook writes the Node's labels onto the Pod at bind time (or withholds them
with a ``RequiredNodeLabelMissing`` Event).

The webhook server runs in-process on 127.0.0.1 (throwaway CA); both configurations are
scoped by namespaceSelector to this module's namespace and deleted at teardown.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import ApiError, Client, Invalid, KubeError
from kuberay.reconcile import EventRecorder
from kuberay.testing.crds import install_crds
from kuberay.testing.pki import TinyCA
from kuberay.webhooks import start_webhook_server, validating_webhook_configuration
from kuberay.webhooks.config import mutating_webhook_configuration
from kuberay.webhooks.pods import BINDING_WEBHOOK_COMPONENT, CachedReads, PodWebhooks
from tests.helpers import eventually

ZONE = "topology.kubernetes.io/zone"
GATES = {"NodeLabelDelivery": True}
RAY_START = "ray start --address=topo-head-svc:6379 --block"


@dataclass
class Env:
    client: Client
    namespace: str
    recorder: EventRecorder


def _ref(key: str, name: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"valueFrom": {"nodeRef": {"fieldPath": f"metadata.labels['{key}']"}}}
    return {**out, "name": name} if name else out


def _cluster(name: str, ns: str, refs: list[dict[str, Any]]) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.52.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "rayVersion": "2.52.0",
            "headGroupSpec": {"template": {"spec": {"containers": [dict(container)]}}},
            "workerGroupSpecs": [
                {
                    "groupName": "test",
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "labelRefs": refs,
                    "template": {"spec": {"containers": [dict(container)]}},
                }
            ],
        },
    }


def _worker_pod(cluster: str, ns: str) -> dict[str, Any]:
    """A pod shaped like the operator's worker pods (what KubeRay's envtest creates)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{cluster}-test-worker-{uuid.uuid4().hex[:5]}",
            "namespace": ns,
            "labels": {
                "ray.io/cluster": cluster,
                "ray.io/group": "test",
                "ray.io/node-type": "worker",
                "ray.io/is-ray-node": "yes",
            },
        },
        "spec": {
            "containers": [
                {
                    "name": "ray-worker",
                    "image": "rayproject/ray:2.52.0",
                    "command": ["/bin/bash", "-c", "--"],
                    "args": [f"ulimit -n 65536; {RAY_START}"],
                    "env": [{"name": "KUBERAY_GEN_RAY_START_CMD", "value": RAY_START}],
                }
            ]
        },
    }


async def _configurations(client: Client, url: str, ca: bytes, ns: str, name: str) -> None:
    selector = {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    common: dict[str, Any] = {"name": name, "url": url, "namespace_selector": selector}
    await client.create(validating_webhook_configuration(None, None, ca, **common))
    await client.create(mutating_webhook_configuration(None, None, ca, **common))


@pytest.fixture(scope="module")
async def env(
    kubeconfig_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Env]:
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    cert_dir = tmp_path_factory.mktemp("node-label-webhook-certs")
    ca = TinyCA("kuberay-node-labels-test-ca")
    pair = ca.issue("127.0.0.1", ips=["127.0.0.1"], server=True)
    (cert_dir / "tls.crt").write_bytes(pair.cert_pem)
    (cert_dir / "tls.key").write_bytes(pair.key_pem)
    recorder = EventRecorder(client, BINDING_WEBHOOK_COMPONENT)
    hooks = PodWebhooks(CachedReads(client), recorder, GATES, frozenset({ZONE}))
    server = await start_webhook_server(
        "127.0.0.1",
        0,
        cert_dir / "tls.crt",
        cert_dir / "tls.key",
        GATES,
        allowed_node_labels={ZONE},
        pods=hooks,
    )
    ns = f"t-nlw-{uuid.uuid4().hex[:8]}"
    name = f"kuberay-test-node-labels-{uuid.uuid4().hex[:8]}"
    try:
        await install_crds(client)
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        await _configurations(client, server.url, ca.pair.cert_pem, ns, name)
        env = Env(client, ns, recorder)

        async def active() -> bool:  # the apiserver picks configurations up asynchronously
            bad = _cluster(f"probe-{uuid.uuid4().hex[:4]}", ns, [_ref("not/allowed")])
            try:
                await client.create(bad, field_manager=None)
            except Invalid as exc:
                return "allowedNodeLabels" in exc.message
            await client.delete("ray.io/v1", "RayCluster", bad["metadata"]["name"], ns)
            return False

        await eventually(active, timeout=60, message="webhook configurations not active")
        yield env
    finally:
        for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            with contextlib.suppress(ApiError):
                await client.delete("admissionregistration.k8s.io/v1", kind, name)
        await recorder.close()
        await server.stop()
        with contextlib.suppress(KubeError):
            await client.delete("v1", "Namespace", ns)
        await client.close()


async def test_labelrefs_are_kept_and_checked_against_the_allowlist(env: Env) -> None:
    name = f"topo-{uuid.uuid4().hex[:4]}"
    created = await env.client.create(_cluster(name, env.namespace, [_ref(ZONE, "ray.io/zone")]))
    # the CRD keeps the field (it used to be pruned on write)
    assert created["spec"]["workerGroupSpecs"][0]["labelRefs"] == [_ref(ZONE, "ray.io/zone")]
    nodepool = "cloud.google.com/gke-nodepool"
    with pytest.raises(Invalid) as info:
        await env.client.create(_cluster(f"{name}-x", env.namespace, [_ref(nodepool)]))
    path = "spec.workerGroupSpecs[0].labelRefs[0].valueFrom.nodeRef.fieldPath"
    assert info.value.causes == [
        {
            "reason": "FieldValueForbidden",
            "message": f'Forbidden: node label "{nodepool}" is not in the operator\'s '
            "allowedNodeLabels",
            "field": path,
        }
    ]
    assert info.value.message.startswith(
        'admission webhook "vraycluster.kb.io" denied the request: RayCluster.ray.io '
        f'"{name}-x" is invalid: {path}: Forbidden: node label'
    )
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": f"{name}-job", "namespace": env.namespace},
        "spec": {
            "entrypoint": "python -c 'print(1)'",
            "rayClusterSpec": _cluster(name, env.namespace, [_ref(ZONE), _ref(ZONE)])["spec"],
        },
    }
    with pytest.raises(Invalid) as info:
        await env.client.create(job)
    assert info.value.causes[-1]["field"] == "spec.rayClusterSpec.workerGroupSpecs[0].labelRefs[1]"
    assert info.value.causes[-1]["message"] == f'Duplicate value: "{ZONE}"'


async def _bind(env: Env, pod: str, node: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod, "namespace": env.namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    path = f"/api/v1/namespaces/{env.namespace}/pods/{pod}/binding"
    await env.client.request("POST", path, verb="create", body=body)


async def _node(env: Env, labels: dict[str, str]) -> str:
    name = f"nl-node-{uuid.uuid4().hex[:6]}"
    await env.client.create(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    )
    return name


async def test_worker_is_prepared_at_create_and_labelled_at_bind(env: Env) -> None:
    cluster = f"topo-{uuid.uuid4().hex[:4]}"
    await env.client.create(_cluster(cluster, env.namespace, [_ref(ZONE, "ray.io/zone")]))
    zoned, bare = await _node(env, {ZONE: "us-central1-a"}), await _node(env, {})
    try:
        pod = await env.client.create(_worker_pod(cluster, env.namespace))
        container = pod["spec"]["containers"][0]
        assert container["env"][-1]["name"] == "RAY_NODE_LABELS_JSON"
        assert container["args"][0].endswith(f"{RAY_START} --labels-file=/tmp/ray-labels.yaml")
        await _bind(env, pod["metadata"]["name"], zoned)
        bound = await env.client.get("v1", "Pod", pod["metadata"]["name"], env.namespace)
        assert bound["spec"]["nodeName"] == zoned
        labels = json.loads(bound["metadata"]["annotations"]["ray.io/node-labels"])
        assert labels == {"ray.io/zone": "us-central1-a"}

        lacking = await env.client.create(_worker_pod(cluster, env.namespace))
        await _bind(env, lacking["metadata"]["name"], bare)
        bound = await env.client.get("v1", "Pod", lacking["metadata"]["name"], env.namespace)
        assert bound["spec"]["nodeName"] == bare
        assert "ray.io/node-labels" not in (bound["metadata"].get("annotations") or {})
        await env.recorder.flush()
        events, _ = await env.client.list_all("events.k8s.io/v1", "Event", env.namespace)
        withheld = [
            e
            for e in events
            if e["reason"] == "RequiredNodeLabelMissing"
            and e["regarding"]["name"] == lacking["metadata"]["name"]
        ]
        assert [
            (e["type"], e["action"], e["reportingController"], e["note"]) for e in withheld
        ] == [
            (
                "Warning",
                "DeliverNodeLabels",
                "kuberay-pod-binding-webhook",
                f"node labels not delivered for the binding to node {bare}: node lacks label "
                f'"{ZONE}"',
            )
        ]
    finally:
        for node in (zoned, bare):
            with contextlib.suppress(KubeError):
                await env.client.delete("v1", "Node", node)
