"""Turn informer events into reconcile requests.

* :func:`enqueue_for_object` - the object's own namespace/name (``for_``).
* :func:`enqueue_for_owner` - the owner named by a matching ownerReference
  (``owns``); by default only the reference with ``controller: true`` counts.
  Group and Kind are compared; the version is ignored.
* :func:`enqueue_from_map` - whatever a map function returns (``watches``).

On updates both the old and the new object are mapped and the union enqueued.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from kuberay.informers import DeletedFinalStateUnknown
from kuberay.kube import objects as k8s
from kuberay.kube import split_api_version
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile.predicates import Predicate
from kuberay.reconcile.types import Request

MapFunc = Callable[[Obj], Iterable[Request]]


class _Adder(Protocol):
    def add(self, item: Request) -> None: ...


def object_request(obj: Obj) -> list[Request]:
    """The request for ``obj`` itself."""
    meta = k8s.meta(obj)
    return [Request(meta.get("namespace") or "", meta["name"])]


def owner_requests(
    owner_api_version: str,
    owner_kind: str,
    *,
    only_controller: bool = True,
    cluster_scoped_owner: bool = False,
) -> MapFunc:
    """A map function yielding the owner(s) of a child object."""
    group, _ = split_api_version(owner_api_version)

    def mapper(obj: Obj) -> list[Request]:
        meta = k8s.meta(obj)
        out: list[Request] = []
        for ref in meta.get("ownerReferences") or []:
            if only_controller and not ref.get("controller"):
                continue
            ref_group, _ = split_api_version(ref.get("apiVersion", ""))
            if ref.get("kind") != owner_kind or ref_group != group:
                continue
            ns = "" if cluster_scoped_owner else (meta.get("namespace") or "")
            out.append(Request(ns, ref["name"]))
        return out

    return mapper


class EnqueueHandler:
    """An informer event handler that filters with ``predicates`` and enqueues
    the requests ``map_func`` returns."""

    def __init__(
        self, queue: _Adder, map_func: MapFunc, predicates: Iterable[Predicate] = ()
    ) -> None:
        self.queue = queue
        self.map_func = map_func
        self.predicates = list(predicates)

    def _enqueue(self, *objs: Obj) -> None:
        seen: set[Request] = set()
        for obj in objs:
            for req in self.map_func(obj):
                if req not in seen:
                    seen.add(req)
                    self.queue.add(req)

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if all(p.create(obj) for p in self.predicates):
            self._enqueue(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        if all(p.update(old, new) for p in self.predicates):
            self._enqueue(old, new)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        real = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if all(p.delete(real) for p in self.predicates):
            self._enqueue(real)


def enqueue_for_object(queue: _Adder, predicates: Iterable[Predicate] = ()) -> EnqueueHandler:
    """Handler enqueuing the changed object itself."""
    return EnqueueHandler(queue, object_request, predicates)


def enqueue_for_owner(
    queue: _Adder,
    owner_api_version: str,
    owner_kind: str,
    *,
    only_controller: bool = True,
    predicates: Iterable[Predicate] = (),
) -> EnqueueHandler:
    """Handler enqueuing the owner of the changed object."""
    return EnqueueHandler(
        queue,
        owner_requests(owner_api_version, owner_kind, only_controller=only_controller),
        predicates,
    )


def enqueue_from_map(
    queue: _Adder, map_func: MapFunc, predicates: Iterable[Predicate] = ()
) -> EnqueueHandler:
    """Handler enqueuing whatever ``map_func`` returns for the changed object."""
    return EnqueueHandler(queue, map_func, predicates)
