"""Thread-unsafe (single event loop) object stores: ``Store`` and ``Indexer``.

Objects are keyed ``namespace/name`` (``name`` for cluster-scoped objects). The
objects a store hands out are the cached ones, shared with every reader:
**treat them as read-only**. Mutating one corrupts the cache and its indices;
copy before changing (``copy.deepcopy`` or build a patch instead).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping

import attrs

from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

IndexFunc = Callable[[Obj], list[str]]

NAMESPACE_INDEX = "namespace"


@attrs.frozen
class DeletedFinalStateUnknown:
    """A deletion the watch missed: ``obj`` is the last state the cache knew (may be stale)."""

    key: str
    obj: Obj


def meta_namespace_key(obj: Obj | DeletedFinalStateUnknown) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects; tombstones give their key."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    meta = k8s.meta(obj)
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


def split_key(key: str) -> tuple[str | None, str]:
    """Inverse of :func:`meta_namespace_key`: ``(namespace or None, name)``."""
    if "/" in key:
        ns, name = key.split("/", 1)
        return ns, name
    return None, key


def namespace_index(obj: Obj) -> list[str]:
    """Index function for the built-in ``namespace`` index."""
    ns = k8s.meta(obj).get("namespace")
    return [ns] if ns else []


class Store:
    """Key -> object map. Reads return shared objects (read-only by contract)."""

    def __init__(self) -> None:
        # items: the cached objects, by meta_namespace_key. Invariant: every key
        # present in an index points to a key present here.
        self._items: dict[str, Obj] = {}

    def add(self, obj: Obj) -> None:
        """Insert or replace ``obj`` under its key."""
        self._put(meta_namespace_key(obj), obj)

    update = add

    def delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        """Remove the object with ``obj``'s key (absent keys are ignored)."""
        self._remove(meta_namespace_key(obj))

    def get_by_key(self, key: str) -> Obj | None:
        """The cached object for ``key``, or None."""
        return self._items.get(key)

    def get(self, namespace: str | None, name: str) -> Obj | None:
        """The cached object ``namespace/name`` (``name`` alone for cluster scope), or None."""
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> builtins.list[Obj]:
        """Every cached object (a new list of shared objects)."""
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        """Every key."""
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def replace(self, objs: Iterable[Obj]) -> None:
        """Make the store hold exactly ``objs``."""
        for key in list(self._items):
            self._remove(key)
        for obj in objs:
            self.add(obj)

    def _put(self, key: str, obj: Obj) -> None:
        self._items[key] = obj

    def _remove(self, key: str) -> None:
        self._items.pop(key, None)


class Indexer(Store):
    """A Store with named secondary indexes (``by_index(name, value)``).

    The ``namespace`` index is always present. An index function returns the list
    of values an object is filed under; it must not raise.
    """

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        super().__init__()
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: namespace_index}
        # indices[index name][value] = keys whose object has that value. Emptied
        # value sets are removed so the map does not grow without bound.
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: {}}
        # keyvalues[index name][key] = the values the stored object was filed under.
        self._keyvalues: dict[str, dict[str, list[str]]] = {NAMESPACE_INDEX: {}}
        if indexers:
            self.add_indexers(indexers)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes (also after objects were stored); a duplicate name is an error."""
        for name in indexers:
            if name in self._indexers:
                raise ValueError(f"indexer {name!r} already exists")
        for name, fn in indexers.items():
            self._indexers[name] = fn
            self._indices[name] = {}
            self._keyvalues[name] = {}
            for key, obj in self._items.items():
                self._file(name, key, fn(obj))

    def by_index(self, index_name: str, value: str) -> builtins.list[Obj]:
        """Objects filed under ``value`` in index ``index_name`` (unknown index: KeyError)."""
        keys = self._indices[index_name].get(value, ())
        return [self._items[k] for k in keys]

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Keys filed under ``value`` in ``index_name``."""
        return list(self._indices[index_name].get(value, ()))

    def list_index_values(self, index_name: str) -> builtins.list[str]:
        """Every value present in ``index_name``."""
        return list(self._indices[index_name])

    def _put(self, key: str, obj: Obj) -> None:
        if key in self._items:
            self._unfile_all(key)
        self._items[key] = obj
        for name, fn in self._indexers.items():
            self._file(name, key, fn(obj))

    def _remove(self, key: str) -> None:
        if key in self._items:
            self._unfile_all(key)
            del self._items[key]

    def _file(self, name: str, key: str, values: builtins.list[str]) -> None:
        index = self._indices[name]
        for value in values:
            index.setdefault(value, set()).add(key)
        self._keyvalues[name][key] = values

    def _unfile_all(self, key: str) -> None:
        for name, index in self._indices.items():
            for value in self._keyvalues[name].pop(key, ()):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
