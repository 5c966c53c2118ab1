"""A reconciler built when its controller first has work.

An idle operator's memory is mostly the code it loaded; a controller's reconcile logic
(its builders, status rules, state machines) is needed only once an object of its kind
exists. :class:`DeferredReconciler` lets a controller register its watches at start-up
and import that code on the first request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kuberay.reconcile.types import Reconciler, Request, Result

__all__ = ["DeferredReconciler"]


class DeferredReconciler:
    """A :class:`~kuberay.reconcile.types.Reconciler` that calls ``build()`` (which may
    import the real reconciler's modules) on its first :meth:`reconcile`, then passes
    every request to what it built.

    ``build`` runs once, on the event loop (an import there blocks the loop once, for
    the time the import takes); if it raises, the request fails (and is retried with
    backoff) and the next request calls it again. :attr:`built` is the reconciler once
    built, else None. Other attributes are the real reconciler's (reading one builds it).
    """

    def __init__(self, build: Callable[[], Reconciler]) -> None:
        self._build = build
        self.built: Reconciler | None = None

    def get(self) -> Reconciler:
        """The real reconciler, built now if it was not yet."""
        if self.built is None:
            self.built = self._build()
        return self.built

    async def reconcile(self, request: Request) -> Result:
        """``reconcile`` of the real reconciler."""
        return await self.get().reconcile(request)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_build", "built"):
            raise AttributeError(name)
        return getattr(self.get(), name)
