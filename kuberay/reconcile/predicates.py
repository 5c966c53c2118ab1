"""Event filters applied before a change is turned into a request.

A predicate never changes what the cache holds; it only decides whether an
event enqueues work. ``update`` receives (old, new); the others one object.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj


@attrs.frozen
class Predicate:
    """Per-event-type filter; each function returns True to let the event through."""

    create: Callable[[Obj], bool] = lambda obj: True
    update: Callable[[Obj, Obj], bool] = lambda old, new: True
    delete: Callable[[Obj], bool] = lambda obj: True
    generic: Callable[[Obj], bool] = lambda obj: True


def predicate_funcs(filter_fn: Callable[[Obj], bool]) -> Predicate:
    """One function for every event type (updates test the new object)."""
    return Predicate(
        create=filter_fn,
        update=lambda old, new: filter_fn(new),
        delete=filter_fn,
        generic=filter_fn,
    )


def _meta(obj: Obj) -> Obj:
    meta: Obj = k8s.meta(obj)
    return meta


def _generation_changed(old: Obj, new: Obj) -> bool:
    return _meta(old).get("generation") != _meta(new).get("generation")


def _rv_changed(old: Obj, new: Obj) -> bool:
    return _meta(old).get("resourceVersion") != _meta(new).get("resourceVersion")


def _labels_changed(old: Obj, new: Obj) -> bool:
    return (_meta(old).get("labels") or {}) != (_meta(new).get("labels") or {})


def _annotations_changed(old: Obj, new: Obj) -> bool:
    return (_meta(old).get("annotations") or {}) != (_meta(new).get("annotations") or {})


GenerationChangedPredicate = Predicate(update=_generation_changed)
"""Drops updates that did not change ``metadata.generation`` (status-only writes, resyncs)."""

ResourceVersionChangedPredicate = Predicate(update=_rv_changed)
"""Drops updates whose resourceVersion did not change (periodic resyncs)."""

LabelChangedPredicate = Predicate(update=_labels_changed)
"""Lets updates through only when labels changed."""

AnnotationChangedPredicate = Predicate(update=_annotations_changed)
"""Lets updates through only when annotations changed."""


def and_(*preds: Predicate) -> Predicate:
    """All predicates must pass."""
    return Predicate(
        create=lambda o: all(p.create(o) for p in preds),
        update=lambda a, b: all(p.update(a, b) for p in preds),
        delete=lambda o: all(p.delete(o) for p in preds),
        generic=lambda o: all(p.generic(o) for p in preds),
    )


def or_(*preds: Predicate) -> Predicate:
    """Any predicate may pass."""
    return Predicate(
        create=lambda o: any(p.create(o) for p in preds),
        update=lambda a, b: any(p.update(a, b) for p in preds),
        delete=lambda o: any(p.delete(o) for p in preds),
        generic=lambda o: any(p.generic(o) for p in preds),
    )


def not_(pred: Predicate) -> Predicate:
    """Inverts ``pred``."""
    return Predicate(
        create=lambda o: not pred.create(o),
        update=lambda a, b: not pred.update(a, b),
        delete=lambda o: not pred.delete(o),
        generic=lambda o: not pred.generic(o),
    )
