"""The node event forwarder (``--enable-node-event-forwarder``) on the real apiserver: a
node-problem-detector-style Event about a Node (in ``default``) is re-emitted onto the
RayCluster with a Ray pod on that Node, in KubeRay's reason and note formats, with the Node
as related object; filtered, old and repeated-but-not-recurring Events are not."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from kuberay.kube import Client
from kuberay.reconcile.clock import format_time
from tests.integration import operator_harness as harness

FLAGS = (
    "--enable-node-event-forwarder",
    "--node-event-forwarder-reasons=XIDError,KernelDeadlock",
    "--node-event-forwarder-types=Warning",
)


def _cluster(name: str, ns: str) -> dict[str, Any]:
    container = {"name": "ray", "image": "rayproject/ray:2.52.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "suspend": True,  # the RayCluster controller creates no pods
            "headGroupSpec": {"template": {"spec": {"containers": [dict(container)]}}},
        },
    }


def _pod_on(node: str, cluster: str, ns: str) -> dict[str, Any]:
    labels = {"ray.io/cluster": cluster, "ray.io/node-type": "worker", "ray.io/group": "g"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{cluster}-g-worker-x", "namespace": ns, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "ray", "image": "busybox"}]},
    }


def _node_event(node: str, reason: str, when: dt.datetime, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{node}.{uuid.uuid4().hex[:8]}", "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node},
        "reason": reason,
        "message": "Caught XID error, XID=79",
        "type": "Warning",
        "source": {"component": "node-problem-detector", "host": node},
        "firstTimestamp": format_time(when),
        "lastTimestamp": format_time(when),
        "count": 1,
        **extra,
    }


async def _forwarded(client: Client, ns: str, cluster: str) -> list[dict[str, Any]]:
    events, _ = await client.list_all("events.k8s.io/v1", "Event", ns)
    return [
        e
        for e in events
        if e.get("reportingController") == "kuberay-node-event-forwarder"
        and e["regarding"]["name"] == cluster
    ]


async def test_node_event_is_forwarded_onto_the_raycluster_on_that_node(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    node, cluster = f"npd-node-{uuid.uuid4().hex[:6]}", f"rc-{uuid.uuid4().hex[:6]}"
    await kclient.create(_cluster(cluster, namespace))
    await kclient.create(_pod_on(node, cluster, namespace))
    created: list[str] = []
    async with harness.start_operator(kclient, namespace, flags=FLAGS) as op:
        forwarder = op.controllers["node-event-forwarder"].reconciler
        await harness.wait_for(lambda: forwarder.started_at, message="leadership recorded")
        now = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
        old = now - dt.timedelta(hours=1)
        for event in (
            _node_event(node, "NodeReady", now),  # reason filtered out
            _node_event(node, "KernelDeadlock", old),  # before the forwarder led
            _node_event(node, "XIDError", now),
        ):
            created.append((await kclient.create(event))["metadata"]["name"])
        forwarded = await harness.wait_for(
            lambda: _forwarded(kclient, namespace, cluster), message="a forwarded Event"
        )
        (event,) = forwarded
        assert (event["type"], event["reason"], event["action"]) == (
            "Warning",
            "XIDError/node-problem-detector",
            "Forward",
        )
        assert event["note"] == (
            f'Node event observed on Node "{node}" (reason: XIDError, source: '
            "node-problem-detector): Caught XID error, XID=79"
        )
        assert event["related"]["kind"] == "Node" and event["related"]["name"] == node
        assert event["regarding"]["kind"] == "RayCluster"

        # the fault recurs: its count rises, and it is forwarded again
        later = format_time(now + dt.timedelta(seconds=2))
        await kclient.patch(
            "v1", "Event", created[-1], {"count": 2, "lastTimestamp": later}, "default"
        )
        await harness.wait_for(
            lambda: _forwarded(kclient, namespace, cluster),
            lambda found: len(found) == 1 and (found[0].get("series") or {}).get("count") == 2,
            message="the recurrence forwarded (series count 2)",
        )
    for name in created:
        await kclient.delete("v1", "Event", name, "default")
