"""Controller runtime: Manager, Builder, Controller, Reconciler, and friends.

A platform team writes a :class:`Reconciler` (``async reconcile(Request) ->
Result``), declares what it watches with ``manager.controller(name).for_(...)
.owns(...).complete(reconciler)``, and awaits ``manager.run()``.
"""

from kuberay.reconcile.builder import Builder, BuilderError
from kuberay.reconcile.cache import ByObject, Cache, NotRegistered, label_selector_from
from kuberay.reconcile.children import Ensured, create_or_update, ensure
from kuberay.reconcile.controller import CacheSyncTimeout, Controller, WatchSource
from kuberay.reconcile.events import CORE_V1, EVENTS_V1, NORMAL, WARNING, EventRecorder
from kuberay.reconcile.expectations import Expectations
from kuberay.reconcile.handlers import (
    EnqueueHandler,
    enqueue_for_object,
    enqueue_for_owner,
    enqueue_from_map,
    object_request,
    owner_requests,
)
from kuberay.reconcile.leaderelection import LeaderElector
from kuberay.reconcile.manager import LeaderElectionLost, Manager
from kuberay.reconcile.options import ControllerOptions, ManagerOptions
from kuberay.reconcile.predicates import (
    AnnotationChangedPredicate,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    Predicate,
    ResourceVersionChangedPredicate,
    and_,
    not_,
    or_,
    predicate_funcs,
)
from kuberay.reconcile.supervisor import TaskFailure, TaskHook, TaskSupervisor
from kuberay.reconcile.types import Reconciler, Request, RequeueError, Result, TerminalError

__all__ = [
    "CORE_V1",
    "EVENTS_V1",
    "NORMAL",
    "WARNING",
    "AnnotationChangedPredicate",
    "Builder",
    "BuilderError",
    "ByObject",
    "Cache",
    "CacheSyncTimeout",
    "Controller",
    "ControllerOptions",
    "EnqueueHandler",
    "Ensured",
    "EventRecorder",
    "Expectations",
    "GenerationChangedPredicate",
    "LabelChangedPredicate",
    "LeaderElectionLost",
    "LeaderElector",
    "Manager",
    "ManagerOptions",
    "NotRegistered",
    "Predicate",
    "Reconciler",
    "Request",
    "RequeueError",
    "ResourceVersionChangedPredicate",
    "Result",
    "TaskFailure",
    "TaskHook",
    "TaskSupervisor",
    "TerminalError",
    "WatchSource",
    "and_",
    "create_or_update",
    "enqueue_for_object",
    "enqueue_for_owner",
    "enqueue_from_map",
    "ensure",
    "label_selector_from",
    "not_",
    "object_request",
    "or_",
    "owner_requests",
    "predicate_funcs",
]
