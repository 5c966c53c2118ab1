"""A pass that starts before the cache has seen this process's own status write starts
from the object that write returned, so its status write is not bound to a stale
resourceVersion (a certain 409)."""

from __future__ import annotations

import copy
from typing import Any, cast

from kuberay.controllers.raycluster.context import Ctx
from kuberay.controllers.raycluster.reconciler import RayClusterReconciler


class _Client:
    """update_status as the apiserver does it: bumps the resourceVersion, or 409."""

    def __init__(self, rv: int) -> None:
        self.rv = rv
        self.sent: list[str] = []

    async def update_status(self, body: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(body["metadata"]["resourceVersion"])
        assert body["metadata"]["resourceVersion"] == str(self.rv), "409 Conflict"
        self.rv += 1
        out = copy.deepcopy(body)
        out["metadata"].update(uid="u1", resourceVersion=str(self.rv), managedFields=[{}])
        out["spec"] = {"fresh": True}
        return out


def _cluster(rv: str, uid: str = "u1") -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "ns", "uid": uid, "resourceVersion": rv},
        "spec": {},
        "status": {},
    }


def _reconciler(client: _Client) -> RayClusterReconciler:
    ctx = cast(Any, Ctx)(client, None, None, None, None)
    return RayClusterReconciler(ctx)


async def test_a_stale_cache_is_overridden_by_our_own_writes_until_it_catches_up() -> None:
    client = _Client(rv=1)
    rec = _reconciler(client)
    stale = _cluster("1")
    cluster = copy.deepcopy(rec._written.freshest(stale))
    await rec._write_status_fields(cluster, {"state": "a"})  # 1 -> 2
    # The cache still shows 1: the next pass works on 2 and writes 2 -> 3.
    cluster = copy.deepcopy(rec._written.freshest(stale))
    assert cluster["metadata"]["resourceVersion"] == "2"
    assert "managedFields" not in cluster["metadata"]
    await rec._write_status_fields(cluster, {"state": "b"})
    # The cache caught up with the first write only: 3 is still newer.
    assert rec._written.freshest(_cluster("2"))["metadata"]["resourceVersion"] == "3"
    assert rec._written.freshest(stale)["metadata"]["resourceVersion"] == "3"
    assert client.sent == ["1", "2"]  # no write on a stale version
    # Once the cache shows our last write (or anything else), the cache wins.
    caught_up = _cluster("3")
    assert rec._written.freshest(caught_up) is caught_up
    assert rec._written.freshest(stale) is stale
    # A cluster deleted and re-created under the same name is never confused.
    await rec._write_status_fields(_cluster("3"), {"state": "c"})
    recreated = _cluster("3", uid="u2")
    assert rec._written.freshest(recreated) is recreated
