"""Kueue objects for the tests (``kueue.x-k8s.io/v1beta2``) and reads of what Kueue writes.

One test gets its own ResourceFlavor and ClusterQueue (cluster-scoped, named after the test
namespace) and a LocalQueue in its namespace. The flavor carries a node label, so Kueue
injects a ``nodeSelector`` into every pod template of the jobs it admits: the tests see that
label on the objects our operator creates.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs

from kuberay.kube import Client, NotFound

KUEUE_API = "kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
FLAVOR_NODE_LABEL = "kuberay.test/kueue-flavor"

Obj = dict[str, Any]


@attrs.frozen
class Queues:
    """The names of one test's flavor, ClusterQueue and LocalQueue."""

    flavor: str
    cluster_queue: str
    local_queue: str


def _resource_flavor(name: str) -> Obj:
    return {
        "apiVersion": KUEUE_API,
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": {"nodeLabels": {FLAVOR_NODE_LABEL: name}},
    }


def _cluster_queue(name: str, flavor: str, cpu: str, memory: str) -> Obj:
    return {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": flavor,
                            "resources": [
                                {"name": "cpu", "nominalQuota": cpu},
                                {"name": "memory", "nominalQuota": memory},
                            ],
                        }
                    ],
                }
            ],
        },
    }


def _local_queue(name: str, namespace: str, cluster_queue: str) -> Obj:
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }


@contextlib.asynccontextmanager
async def queues(client: Client, namespace: str, *, cpu: str, memory: str) -> AsyncIterator[Queues]:
    """A flavor, a ClusterQueue with that quota, and LocalQueue ``user-queue`` in
    ``namespace``; the cluster-scoped ones are deleted afterwards (best effort: Kueue keeps a
    ClusterQueue while workloads use it)."""
    names = Queues(f"flavor-{namespace}", f"cq-{namespace}", "user-queue")
    await client.create(_resource_flavor(names.flavor))
    await client.create(_cluster_queue(names.cluster_queue, names.flavor, cpu, memory))
    await client.create(_local_queue(names.local_queue, namespace, names.cluster_queue))
    try:
        yield names
    finally:
        for kind, name in (("ClusterQueue", names.cluster_queue), ("ResourceFlavor", names.flavor)):
            with contextlib.suppress(Exception):
                await client.delete(KUEUE_API, kind, name)


def condition(obj: Obj, ctype: str) -> Obj | None:
    """The condition ``ctype`` of ``obj``'s status, if any."""
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def is_true(obj: Obj, ctype: str) -> bool:
    """``obj`` has condition ``ctype`` with status True."""
    cond = condition(obj, ctype)
    return cond is not None and cond.get("status") == "True"


async def workload_of(client: Client, namespace: str, owner_uid: str) -> Obj | None:
    """The Workload Kueue created for the object with ``owner_uid`` (None while absent)."""
    items, _ = await client.list_all(KUEUE_API, "Workload", namespace)
    for item in items:
        owners = (item.get("metadata") or {}).get("ownerReferences") or []
        if any(o.get("uid") == owner_uid for o in owners):
            return dict(item)
    return None


async def get_or_none(client: Client, api: str, kind: str, name: str, namespace: str) -> Obj | None:
    """The object, or None when it does not exist."""
    try:
        return await client.get(api, kind, name, namespace)
    except NotFound:
        return None
