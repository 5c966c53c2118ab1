"""Read-your-writes for a reconciler's own status writes.

After a write the informer cache may still show the object that write replaced. A
reconciler that re-reads from the cache would then act on stale status (and write it again).
:class:`WrittenObjects` remembers, per object, what the last write returned and which
resourceVersions it (and the writes it chained on) replaced; :meth:`WrittenObjects.freshest`
returns the remembered object while the cache still shows one of those versions.
"""

from __future__ import annotations

import copy

from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

__all__ = ["WrittenObjects"]


class WrittenObjects:
    """Objects this process wrote that the cache may not show yet, keyed by
    (namespace, name). Not thread-safe; one per reconciler."""

    def __init__(self) -> None:
        self._written: dict[tuple[str, str], tuple[frozenset[str], Obj]] = {}

    @staticmethod
    def _key(obj: Obj) -> tuple[str, str]:
        meta = k8s.meta(obj)
        return (str(meta.get("namespace")), str(meta.get("name")))

    def remember(self, replaced_rv: str, updated: Obj) -> None:
        """Record ``updated`` (the write's answer) as replacing ``replaced_rv``; a write on
        top of the previously remembered one extends the chain of replaced versions."""
        key = self._key(updated)
        replaced = {replaced_rv}
        previous = self._written.get(key)
        if previous is not None and previous[1]["metadata"].get("resourceVersion") == replaced_rv:
            replaced |= previous[0]  # a chain of writes the cache has not caught up with
        obj = copy.deepcopy(updated)
        obj["metadata"].pop("managedFields", None)  # as the cache's transform does
        self._written[key] = (frozenset(replaced), obj)

    def freshest(self, cached: Obj) -> Obj:
        """The object the last write returned while the cache still shows one this process
        overwrote (same uid); else ``cached`` (and the memo is dropped)."""
        meta = k8s.meta(cached)
        key = self._key(cached)
        memo = self._written.get(key)
        if memo is None:
            return cached
        replaced, written = memo
        if meta.get("resourceVersion") in replaced and meta.get("uid") == written["metadata"].get(
            "uid"
        ):
            return written
        del self._written[key]
        return cached

    def forget(self, namespace: str, name: str) -> None:
        """Drop the memo of ``namespace/name`` (the object is gone)."""
        self._written.pop((namespace, name), None)
