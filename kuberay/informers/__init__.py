"""Shared informer cache: Reflector -> Indexer -> event handlers.

Read the cache through :class:`Indexer` (objects are shared and read-only);
get informers from :class:`SharedInformerFactory` so each resource is listed
and watched once per process.
"""

from kuberay.informers.backoff import Backoff
from kuberay.informers.factory import SharedInformerFactory
from kuberay.informers.handlers import ResourceEventHandler, ResourceEventHandlerFuncs
from kuberay.informers.listwatch import ClientListerWatcher, ListerWatcher
from kuberay.informers.reflector import Reflector, ReflectorSink
from kuberay.informers.shared_informer import (
    HandlerRegistration,
    SharedIndexInformer,
    strip_managed_fields,
)
from kuberay.informers.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    Store,
    meta_namespace_key,
    split_key,
)

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "ClientListerWatcher",
    "DeletedFinalStateUnknown",
    "HandlerRegistration",
    "IndexFunc",
    "Indexer",
    "ListerWatcher",
    "Reflector",
    "ReflectorSink",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "Store",
    "meta_namespace_key",
    "split_key",
    "strip_managed_fields",
]
