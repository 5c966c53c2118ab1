"""An in-memory world for ``reconcile_pods`` tests: one object that is the apiserver, an
always-fresh cache and the Event recorder, and a harness running passes over it."""

from __future__ import annotations

import contextlib
import copy
import itertools
from typing import Any

from kuberay.api.v1 import constants as C
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.raycluster.context import Ctx, RayClusterSettings
from kuberay.controllers.raycluster.pods import PodReconciler
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.kube import ApiError, Conflict, NotFound
from kuberay.reconcile import Expectations
from tests.integration.raycluster.helpers import raycluster

Obj = dict[str, Any]
NS = "ns"
TTL = 30.0


class World:
    """The apiserver and an always-fresh cache in one: pods by name."""

    def __init__(self) -> None:
        self.pods: dict[str, Obj] = {}
        self.clock = 0.0
        self.writes: list[tuple[str, str]] = []
        self.events: list[tuple[str, str, str]] = []
        self.fail_delete: set[str] = set()
        self.fail_patch = False
        self._ids = itertools.count()

    # --- cache ---
    def list(self, api_version: str, kind: str, *_: Any, **kw: Any) -> list[Obj]:
        index = kw.get("index")
        cluster = index[1].split("/", 1)[1] if index else None
        return [
            copy.deepcopy(p)
            for p in self.pods.values()
            if cluster is None or p["metadata"]["labels"].get(C.RAY_CLUSTER_LABEL_KEY) == cluster
        ]

    def get(self, *_: Any) -> Obj | None:
        return None

    # --- client ---
    async def create(self, obj: Obj, **_: Any) -> Obj:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        meta.setdefault("name", f"{meta.pop('generateName', 'pod-')}{next(self._ids)}")
        meta["uid"] = f"uid-{meta['name']}"
        self.pods[meta["name"]] = obj
        self.writes.append(("create", meta["name"]))
        return obj

    async def delete(self, api_version: str, kind: str, name: str, *_: Any, **__: Any) -> None:
        if name in self.fail_delete:
            raise ApiError(500, "InternalError", "etcd is sad")
        pod = self.pods.get(name)
        if pod is None:
            raise NotFound(404, "NotFound", name)
        self.writes.append(("delete", name))
        if pod["metadata"].get("finalizers"):
            pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        else:
            del self.pods[name]

    async def patch(self, api_version: str, kind: str, name: str, body: Obj, *_: Any) -> Obj:
        if self.fail_patch:
            raise Conflict(409, "Conflict", "the object has been modified")
        self.writes.append(("patch", name))
        pod = self.pods[name]
        pod["metadata"].setdefault("annotations", {}).update(body["metadata"]["annotations"])
        return pod

    # --- recorder ---
    def event(self, obj: Obj, etype: str, reason: str, message: str, action: str = "") -> None:
        self.events.append((etype, reason, message))

    # --- test helpers ---
    def workers(self, *, live: bool = True) -> list[Obj]:
        return [
            p
            for p in self.pods.values()
            if p["metadata"]["labels"].get(C.RAY_NODE_TYPE_LABEL_KEY) == C.WORKER_NODE
            and (not live or not p["metadata"].get("deletionTimestamp"))
        ]

    def run_all(self) -> None:
        for p in self.pods.values():
            p["status"] = {"phase": "Running"}

    def hold(self, name: str) -> None:
        self.pods[name]["metadata"]["finalizers"] = ["test/hold"]

    def release(self, name: str) -> None:
        del self.pods[name]

    def terminate(self, name: str) -> None:
        """Someone else deletes ``name``; a finalizer holds it."""
        self.hold(name)
        self.pods[name]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"


class Harness:
    def __init__(self, cluster: Obj, features: dict[str, bool] | None = None) -> None:
        self.world = World()
        self.cluster = cluster
        self.ctx = Ctx(
            client=self.world,  # type: ignore[arg-type]
            cache=self.world,  # type: ignore[arg-type]
            recorder=self.world,  # type: ignore[arg-type]
            settings=RayClusterSettings(options=BuildOptions(), features=features or {}),
            expectations=Expectations(ttl=TTL, now=lambda: self.world.clock),
        )

    async def reconcile(self, passes: int = 1, *, tick: float = 0.0) -> None:
        for _ in range(passes):
            self.world.clock += tick
            with contextlib.suppress(ReconcileError):
                await PodReconciler(self.ctx, copy.deepcopy(self.cluster)).run()

    def group(self) -> Obj:
        groups: list[Obj] = self.cluster["spec"]["workerGroupSpecs"]
        return groups[0]

    async def converge(self) -> None:
        await self.reconcile(3)
        self.world.run_all()
        await self.reconcile(1)


def new_cluster(**spec: Any) -> Obj:
    rc = raycluster("rc", NS, **spec)
    rc["metadata"]["uid"] = "rc-uid"
    return rc


async def three_workers() -> Harness:
    h = Harness(new_cluster(replicas=3))
    await h.converge()
    assert len(h.world.workers()) == 3
    return h


def deletes(h: Harness) -> list[str]:
    return [name for op, name in h.world.writes if op == "delete"]
