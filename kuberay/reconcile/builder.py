"""Builder: the fluent way to declare what a controller watches.

    mgr.controller("mirror") \\
       .for_("v1", "ConfigMap", predicates=[GenerationChangedPredicate]) \\
       .owns("v1", "Secret") \\
       .watches("v1", "Namespace", map_namespace) \\
       .with_options(max_concurrent_reconciles=4) \\
       .complete(MyReconciler(mgr))

``for_`` is required and names the kind being reconciled; ``owns`` kinds map to
their controller owner of the ``for_`` kind; ``watches`` kinds map through a
function. ``with_event_filter`` predicates apply to every source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import attrs

from kuberay.reconcile.controller import Controller, WatchSource
from kuberay.reconcile.handlers import (
    MapFunc,
    enqueue_for_object,
    enqueue_for_owner,
    enqueue_from_map,
)
from kuberay.reconcile.options import ControllerOptions
from kuberay.reconcile.predicates import Predicate
from kuberay.reconcile.types import Reconciler


class ControllerHost(Protocol):
    """What a :class:`Builder` needs of its manager (``Manager`` is one): the defaults of a
    controller's options and the place to register it."""

    @property
    def controller_options(self) -> ControllerOptions:
        """The options of a controller unless ``with_options`` says otherwise."""
        ...

    def add_controller(self, controller: Controller) -> None:
        """Register a built controller (started with the manager)."""
        ...


class BuilderError(ValueError):
    """The builder chain is incomplete or contradictory."""


class Builder:
    """Collects watch declarations; :meth:`complete` creates and registers the controller."""

    def __init__(self, manager: ControllerHost, name: str) -> None:
        self._manager = manager
        self._name = name
        self._for: tuple[str, str, list[Predicate]] | None = None
        self._owns: list[tuple[str, str, list[Predicate], bool]] = []
        self._watches: list[tuple[str, str, MapFunc, list[Predicate]]] = []
        self._global: list[Predicate] = []
        self._options: dict[str, Any] = {}

    def for_(self, api_version: str, kind: str, *, predicates: Iterable[Predicate] = ()) -> Builder:
        """Reconcile objects of this kind (exactly once per builder)."""
        if self._for is not None:
            raise BuilderError("for_() may only be called once")
        self._for = (api_version, kind, list(predicates))
        return self

    def owns(
        self,
        api_version: str,
        kind: str,
        *,
        predicates: Iterable[Predicate] = (),
        only_controller: bool = True,
    ) -> Builder:
        """Reconcile the ``for_`` owner when a child of this kind changes."""
        self._owns.append((api_version, kind, list(predicates), only_controller))
        return self

    def watches(
        self,
        api_version: str,
        kind: str,
        map_func: Callable[[dict[str, Any]], Iterable[Any]],
        *,
        predicates: Iterable[Predicate] = (),
    ) -> Builder:
        """Reconcile the requests ``map_func`` returns when an object of this kind changes."""
        self._watches.append((api_version, kind, map_func, list(predicates)))
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        """Predicates applied to every source."""
        self._global.extend(predicates)
        return self

    def with_options(
        self,
        options: ControllerOptions | None = None,
        *,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: Any = None,
        cache_sync_timeout: float | None = None,
    ) -> Builder:
        """This controller's options instead of the manager's ``options.controller``: all of
        ``options`` (:class:`~kuberay.reconcile.options.ControllerOptions`), then each keyword
        given (defaults documented on :class:`ControllerOptions`)."""
        if options is not None:
            self._options.update(attrs.asdict(options, recurse=False))
        if max_concurrent_reconciles is not None:
            self._options["max_concurrent_reconciles"] = max_concurrent_reconciles
        if rate_limiter is not None:
            self._options["rate_limiter"] = rate_limiter
        if cache_sync_timeout is not None:
            self._options["cache_sync_timeout"] = cache_sync_timeout
        return self

    def complete(self, reconciler: Reconciler) -> Controller:
        """Build the controller and hand it to the manager."""
        if self._for is None:
            raise BuilderError(
                f"controller {self._name}: for_() is required (owns/watches need an owner kind)"
            )
        options = dict(self._options)
        defaults = self._manager.controller_options
        options.setdefault("max_concurrent_reconciles", defaults.max_concurrent_reconciles)
        options.setdefault("cache_sync_timeout", defaults.cache_sync_timeout)
        if defaults.rate_limiter is not None:
            options.setdefault("rate_limiter", defaults.rate_limiter)
        ctrl = Controller(self._name, reconciler, **options)
        api_version, kind, preds = self._for
        glob = list(self._global)

        def for_handler(queue: Any, preds: list[Predicate] = preds) -> Any:
            return enqueue_for_object(queue, glob + preds)

        ctrl.watch(WatchSource(api_version, kind, for_handler))
        for o_av, o_kind, o_preds, only_ctrl in self._owns:

            def owns_handler(
                queue: Any, preds: list[Predicate] = o_preds, only: bool = only_ctrl
            ) -> Any:
                return enqueue_for_owner(
                    queue, api_version, kind, only_controller=only, predicates=glob + preds
                )

            ctrl.watch(WatchSource(o_av, o_kind, owns_handler))
        for w_av, w_kind, fn, w_preds in self._watches:

            def watch_handler(
                queue: Any, fn: MapFunc = fn, preds: list[Predicate] = w_preds
            ) -> Any:
                return enqueue_from_map(queue, fn, glob + preds)

            ctrl.watch(WatchSource(w_av, w_kind, watch_handler))
        self._manager.add_controller(ctrl)
        return ctrl
