"""KubeRay v1.8's node label delivery and node event forwarder on the real node, real Ray.

One operator on the host (as its ServiceAccount, with the shipped RBAC plus the forwarder's
``manifests/rbac/node_event_forwarder``) with ``--feature-gates=NodeLabelDelivery=true``,
``--allowed-node-labels`` and ``--enable-node-event-forwarder``, serving its webhooks over
HTTPS on loopback (``ENABLE_WEBHOOKS=true``, a throwaway CA); the apiserver calls them through
a Validating and a MutatingWebhookConfiguration scoped to this module's namespace. The real
node gets a zone label for the module. ONE RayCluster serves every test:

* group ``zoned`` refers to the node's zone (as Ray label ``zone``) and its hostname (under
  the node label's own key): its worker's Ray node labels, read through Ray's state API on
  the head's dashboard, carry both values;
* group ``racked`` refers to an allowlisted label the node lacks: the binding goes through
  without labels, a ``RequiredNodeLabelMissing`` Warning names the missing label on the pod,
  and the worker exits before ``ray start`` saying its labels were not delivered;
* a node-problem-detector style Event (``KernelDeadlock`` from ``kernel-monitor``) about the
  real node is re-emitted onto the RayCluster; a Normal one the filters exclude is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime as dt
import json
import os
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuberay.controllers.dashboard.endpoints import service_address
from kuberay.kube import Client, Invalid, KubeError, NotFound
from kuberay.testing.pki import TinyCA
from kuberay.webhooks import validating_webhook_configuration
from kuberay.webhooks.config import mutating_webhook_configuration
from kuberay.webhooks.switch import ENABLE_WEBHOOKS_ENV, WEBHOOK_CERT_DIR_ENV, WEBHOOK_PORT_ENV
from tests.e2e.harness import (
    OperatorProcess,
    cluster_pods,
    free_port,
    node_type,
    pod_ready,
    record_timing,
)
from tests.e2e.realcluster import (
    ALLOWED_ENV,
    DASHBOARD_NETWORKS,
    RealCluster,
    RealIdentity,
    diagnose_namespace,
    real_namespace,
    wait_for,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a real node needs root")

ROOT = Path(__file__).resolve().parents[2]
FORWARDER_RBAC = ROOT / "manifests" / "rbac" / "node_event_forwarder"
RAY_IMAGE = "rayproject/ray:2.52.0"
NAME = "labelled"
ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"
RACK_KEY = "e2e.kuberay.io/rack"  # allowlisted, never on the node
ALLOWED = (ZONE_KEY, HOSTNAME_KEY, RACK_KEY)
#: The wrapped ``ray start``'s words when the Pod annotation never came.
NOT_DELIVERED = "RAY_NODE_LABELS_JSON is empty: node labels were not delivered to this pod"
KERNEL_MESSAGE = "kernel: INFO: task docker:20744 blocked for more than 120 seconds."


@dataclass
class Scenario:
    """What the module set up: the namespace, the node and its zone, the operator."""

    ns: str
    node: dict[str, Any]
    zone: str
    operator: OperatorProcess

    @property
    def node_name(self) -> str:
        return str(self.node["metadata"]["name"])


def _ref(node_label: str, name: str = "") -> dict[str, Any]:
    ref: dict[str, Any] = {
        "valueFrom": {"nodeRef": {"fieldPath": f"metadata.labels['{node_label}']"}}
    }
    return {"name": name, **ref} if name else ref


def _container(name: str, memory: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": RAY_IMAGE,
        "resources": {
            "limits": {"cpu": "1", "memory": "2Gi"},
            "requests": {"cpu": "100m", "memory": memory},
        },
    }


def _group(name: str, refs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "groupName": name,
        "replicas": 1,
        "minReplicas": 1,
        "maxReplicas": 1,
        "rayStartParams": {},
        "labelRefs": refs,
        "template": {"spec": {"containers": [_container("ray-worker", "256Mi")]}},
    }


def raycluster(ns: str) -> dict[str, Any]:
    """Head + group ``zoned`` (labels the node has) + group ``racked`` (one it lacks)."""
    head = _container("ray-head", "512Mi")
    head["ports"] = [
        {"containerPort": 6379, "name": "gcs-server"},
        {"containerPort": 8265, "name": "dashboard"},
    ]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": NAME, "namespace": ns},
        "spec": {
            "rayVersion": "2.52.0",
            "headGroupSpec": {
                "rayStartParams": {"num-cpus": "0"},
                "template": {"spec": {"containers": [head]}},
            },
            "workerGroupSpecs": [
                _group("zoned", [_ref(ZONE_KEY, "zone"), _ref(HOSTNAME_KEY)]),
                _group("racked", [_ref(RACK_KEY)]),
            ],
        },
    }


def _forwarder_rbac(identity: RealIdentity) -> list[dict[str, Any]]:
    """manifests/rbac/node_event_forwarder for this identity: bound to its ServiceAccount,
    names suffixed so no installed operator's Roles are touched."""
    docs: list[dict[str, Any]] = []
    for path in sorted(FORWARDER_RBAC.glob("role*.yaml")):
        for original in yaml.safe_load_all(path.read_text()):
            if not original:
                continue
            doc = copy.deepcopy(original)
            doc["metadata"]["name"] += f"-{identity.namespace}"
            if doc["kind"] == "RoleBinding":
                doc["roleRef"]["name"] += f"-{identity.namespace}"
                for subject in doc["subjects"]:
                    subject["namespace"] = identity.namespace
            docs.append(doc)
    return docs


async def _labels_on_node(admin: Client, node: str, labels: dict[str, str | None]) -> None:
    await admin.patch("v1", "Node", node, {"metadata": {"labels": labels}})


async def _delete_quietly(admin: Client, api_version: str, kind: str, name: str, ns: str) -> None:
    with contextlib.suppress(NotFound, KubeError):
        await admin.delete(api_version, kind, name, ns or None)


async def _webhooks_active(admin: Client, ns: str) -> bool:
    """The apiserver calls the operator's validating webhook (it picks configurations up
    asynchronously): a group naming a label outside the allowlist is refused."""
    probe = raycluster(ns)
    probe["metadata"]["name"] = f"probe-{uuid.uuid4().hex[:4]}"
    probe["spec"]["workerGroupSpecs"] = [_group("probe", [_ref("e2e.kuberay.io/not-allowed")])]
    try:
        await admin.create(probe, field_manager=None)
    except Invalid as exc:
        return "allowedNodeLabels" in str(exc)
    await admin.delete("ray.io/v1", "RayCluster", probe["metadata"]["name"], ns)
    return False


@pytest.fixture(scope="module")
async def scenario(
    real_cluster: RealCluster,
    real_admin: Client,
    real_identity: RealIdentity,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Scenario]:
    admin = real_admin
    ns = await real_namespace(admin, "node-labels")
    (node,) = (await admin.list_all("v1", "Node"))[0]
    node_name = node["metadata"]["name"]
    zone = f"e2e-zone-{uuid.uuid4().hex[:6]}"
    cert_dir = tmp_path_factory.mktemp("node-labels-webhook")
    ca = TinyCA("kuberay-node-labels-e2e-ca")
    pair = ca.issue("127.0.0.1", ips=["127.0.0.1"], server=True)
    (cert_dir / "tls.crt").write_bytes(pair.cert_pem)
    (cert_dir / "tls.key").write_bytes(pair.key_pem)
    port = free_port()
    rbac = _forwarder_rbac(real_identity)
    config_name = f"kuberay-e2e-node-labels-{ns}"
    selector = {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    common: dict[str, Any] = {
        "name": config_name,
        "url": f"https://127.0.0.1:{port}",
        "namespace_selector": selector,
    }
    configurations = [
        validating_webhook_configuration(None, None, ca.pair.cert_pem, **common),
        mutating_webhook_configuration(None, None, ca.pair.cert_pem, **common),
    ]
    op = OperatorProcess(
        "node-labels-real-operator",
        real_identity.kubeconfig,
        real_cluster.cp.dir.parent / "operators",
        lease_namespace=real_identity.namespace,
        env={
            ALLOWED_ENV: DASHBOARD_NETWORKS,
            ENABLE_WEBHOOKS_ENV: "true",
            WEBHOOK_CERT_DIR_ENV: str(cert_dir),
            WEBHOOK_PORT_ENV: str(port),
        },
        extra_args=[
            "--feature-gates=NodeLabelDelivery=true",
            f"--allowed-node-labels={','.join(ALLOWED)}",
            "--enable-node-event-forwarder",
            "--node-event-forwarder-types=Warning",
            "--node-event-forwarder-reasons=KernelDeadlock",
        ],
    )
    try:
        for doc in rbac:
            await admin.apply(doc, field_manager="kuberay-e2e", force=True)
        await _labels_on_node(admin, node_name, {ZONE_KEY: zone})
        op.start()
        await op.wait_ready(60)
        await op.wait_leading(60)
        for configuration in configurations:
            await admin.create(configuration)

        async def operator_log() -> str:
            return op.log_tail()

        await wait_for(
            "the apiserver calls the operator's webhooks",
            lambda: _webhooks_active(admin, ns),
            60,
            operator_log,
        )
        await admin.create(raycluster(ns))
        yield Scenario(ns=ns, node=node, zone=zone, operator=op)
    finally:
        with contextlib.suppress(NotFound, KubeError):
            await admin.delete("ray.io/v1", "RayCluster", NAME, ns)
        for configuration in configurations:
            kind, api = configuration["kind"], configuration["apiVersion"]
            await _delete_quietly(admin, api, kind, config_name, "")
        op.terminate()
        await _labels_on_node(admin, node_name, {ZONE_KEY: None})
        for doc in rbac:
            meta = doc["metadata"]
            await _delete_quietly(
                admin, doc["apiVersion"], doc["kind"], meta["name"], meta["namespace"]
            )
        await _delete_quietly(admin, "v1", "Namespace", ns, "")


# --------------------------------------------------------------------------- helpers


async def _explain(admin: Client, cluster: RealCluster, scenario: Scenario) -> str:
    text = await diagnose_namespace(admin, cluster, scenario.ns, "RayCluster", NAME)
    return f"{text}\n--- operator log tail:\n{scenario.operator.log_tail()}"


async def _workers(admin: Client, ns: str, group: str) -> list[dict[str, Any]]:
    return [
        p
        for p in await cluster_pods(admin, ns, NAME)
        if node_type(p) == "worker" and p["metadata"]["labels"].get("ray.io/group") == group
    ]


def _ray_nodes(host: str, port: int) -> list[dict[str, Any]]:
    """Ray's state API (``GET /api/v0/nodes?detail=1`` on the head's dashboard)."""
    url = f"http://{host}:{port}/api/v0/nodes?detail=1"
    with urllib.request.urlopen(url, timeout=30) as resp:
        body = json.loads(resp.read())
    rows: list[dict[str, Any]] = body["data"]["result"]["result"]
    return rows


async def _events(admin: Client, ns: str, kind: str, name: str, reason: str) -> list[str]:
    items, _ = await admin.list_all("events.k8s.io/v1", "Event", ns)
    return [
        str(e.get("note") or "")
        for e in items
        if (e.get("regarding") or {}).get("kind") == kind
        and (e.get("regarding") or {}).get("name") == name
        and e.get("reason") == reason
    ]


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_event(node: dict[str, Any], reason: str, etype: str, message: str) -> dict[str, Any]:
    """A core/v1 Event about ``node`` as node-problem-detector's kernel monitor writes one."""
    meta = node["metadata"]
    now = _now()
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{uuid.uuid4().hex[:10]}", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": meta["name"], "uid": meta["uid"]},
        "reason": reason,
        "message": message,
        "type": etype,
        "source": {"component": "kernel-monitor", "host": meta["name"]},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


# --------------------------------------------------------------------------- the tests


async def test_worker_reports_the_node_labels_among_its_ray_labels(
    real_cluster: RealCluster, real_admin: Client, scenario: Scenario
) -> None:
    admin, ns = real_admin, scenario.ns
    began = asyncio.get_running_loop().time()

    async def zoned_ready() -> list[dict[str, Any]]:
        return [p for p in await _workers(admin, ns, "zoned") if pod_ready(p)]

    (worker,) = await wait_for(
        "the zoned worker Ready",
        zoned_ready,
        240,
        lambda: _explain(admin, real_cluster, scenario),
    )
    record_timing(
        "node labels: RayCluster created -> labelled worker Ready",
        asyncio.get_running_loop().time() - began,
    )
    expected = {"zone": scenario.zone, HOSTNAME_KEY: scenario.node_name}
    # what the bind put on the pod, and what the pods webhook prepared
    delivered = json.loads(worker["metadata"]["annotations"]["ray.io/node-labels"])
    assert delivered == expected
    (ray_container,) = worker["spec"]["containers"]
    assert "--labels-file=" in ray_container["args"][0]

    host, port = await service_address(admin, ns, f"{NAME}-head-svc", "dashboard")
    worker_ip = worker["status"]["podIP"]

    async def worker_node() -> dict[str, Any] | None:
        try:
            nodes = await asyncio.to_thread(_ray_nodes, host, port)
        except OSError:
            return None
        alive = [n for n in nodes if n.get("node_ip") == worker_ip and n.get("state") == "ALIVE"]
        return alive[0] if alive else None

    node = await wait_for(
        "the worker's Ray node in Ray's state API",
        worker_node,
        120,
        lambda: _explain(admin, real_cluster, scenario),
    )
    assert node["is_head_node"] is False
    assert expected.items() <= node["labels"].items(), node["labels"]


async def test_worker_whose_label_the_node_lacks_exits_with_the_reason(
    real_cluster: RealCluster, real_admin: Client, scenario: Scenario
) -> None:
    admin, ns = real_admin, scenario.ns

    async def exited() -> dict[str, Any] | None:
        for pod in await _workers(admin, ns, "racked"):
            for status in (pod.get("status") or {}).get("containerStatuses") or ():
                for state in (status.get("state"), status.get("lastState")):
                    if ((state or {}).get("terminated") or {}).get("exitCode") == 1:
                        return pod
        return None

    pod = await wait_for(
        "the racked worker's Ray container exits",
        exited,
        240,
        lambda: _explain(admin, real_cluster, scenario),
    )
    pod_name = pod["metadata"]["name"]
    assert "ray.io/node-labels" not in (pod["metadata"].get("annotations") or {})
    assert pod["spec"]["nodeName"] == scenario.node_name  # bound all the same (Ignore)
    logs = real_cluster.kubectl("-n", ns, "logs", pod_name, "-c", "ray-worker", check=False)
    logs += real_cluster.kubectl(
        "-n", ns, "logs", pod_name, "-c", "ray-worker", "--previous", check=False
    )
    assert NOT_DELIVERED in logs
    notes = await _events(admin, ns, "Pod", pod_name, "RequiredNodeLabelMissing")
    assert notes == [
        f"node labels not delivered for the binding to node {scenario.node_name}: "
        f'node lacks label "{RACK_KEY}"'
    ]


async def test_node_problem_event_is_forwarded_onto_the_raycluster(
    real_cluster: RealCluster, real_admin: Client, scenario: Scenario
) -> None:
    admin, ns = real_admin, scenario.ns

    async def on_node() -> bool:  # the forwarder finds RayClusters by their pods' node
        return bool([p for p in await cluster_pods(admin, ns, NAME) if p["spec"].get("nodeName")])

    await wait_for(
        "a pod bound to the node", on_node, 120, lambda: _explain(admin, real_cluster, scenario)
    )
    filtered = _node_event(scenario.node, "NodeNotSchedulable", "Normal", "cordoned")
    forwarded = _node_event(scenario.node, "KernelDeadlock", "Warning", KERNEL_MESSAGE)
    created = []
    try:
        for event in (filtered, forwarded):
            created.append(await admin.create(event))
        reason = "KernelDeadlock/kernel-monitor"

        async def arrived() -> list[str]:
            return await _events(admin, ns, "RayCluster", NAME, reason)

        notes = await wait_for(
            "the node event on the RayCluster",
            arrived,
            60,
            lambda: _explain(admin, real_cluster, scenario),
        )
        assert notes == [
            f'Node event observed on Node "{scenario.node_name}" (reason: KernelDeadlock, '
            f"source: kernel-monitor): {KERNEL_MESSAGE}"
        ]
        items, _ = await admin.list_all("events.k8s.io/v1", "Event", ns)
        mine = [e for e in items if (e.get("regarding") or {}).get("name") == NAME]
        (event,) = [e for e in mine if e.get("reason") == reason]
        assert event["type"] == "Warning"
        assert event["reportingController"] == "kuberay-node-event-forwarder"
        assert event["related"]["kind"] == "Node"
        assert event["related"]["name"] == scenario.node_name
        assert not [e for e in mine if str(e.get("reason")).startswith("NodeNotSchedulable")]
    finally:
        for event in created:
            await _delete_quietly(admin, "v1", "Event", event["metadata"]["name"], "default")
