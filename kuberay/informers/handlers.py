"""Event handler interface of a shared informer.

Handlers run inline on the informer's task, after the cache was updated, in the
order events arrived. They must be quick and must not block: the usual handler
maps the object to a key and adds it to a work queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import attrs

from kuberay.informers.store import DeletedFinalStateUnknown
from kuberay.kube.objects import Object as Obj


class ResourceEventHandler(Protocol):
    """Receives cache changes: ``on_add`` / ``on_update`` / ``on_delete``.

    ``on_add``'s ``is_in_initial_list`` is True for objects delivered by the
    first list (or replayed to a handler registered late). ``on_update`` with
    ``old is new`` is a periodic resync. ``on_delete`` may receive a
    :class:`DeletedFinalStateUnknown` tombstone for a deletion missed while the
    watch was down.
    """

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Obj, new: Obj) -> None: ...

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None: ...


@attrs.define
class ResourceEventHandlerFuncs:
    """Adapter: a handler from up to three optional functions."""

    add: Callable[[Obj, bool], None] | None = None
    update: Callable[[Obj, Obj], None] | None = None
    delete: Callable[[Obj | DeletedFinalStateUnknown], None] | None = None

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if self.add is not None:
            self.add(obj, is_in_initial_list)

    def on_update(self, old: Obj, new: Obj) -> None:
        if self.update is not None:
            self.update(old, new)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if self.delete is not None:
            self.delete(obj)
