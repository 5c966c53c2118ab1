"""Async, dict-based Kubernetes client: typed errors, throttling, counted requests.

Names are imported from their submodule on first use (:mod:`kuberay.lazy`), so a program
that needs only :mod:`kuberay.kube.objects` (the kubectl plugin's help, say) does not load
the HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.kube.client import Client, WatchEvent
    from kuberay.kube.errors import (
        AlreadyExists,
        ApiError,
        BadRequest,
        Conflict,
        Forbidden,
        Gone,
        Invalid,
        KubeError,
        NotFound,
        RequestRefused,
        ServerError,
        TooManyRequests,
        TransportError,
        Unauthorized,
        WriteRefused,
    )
    from kuberay.kube.interfaces import PatchType, Reader, ReadWriter, Writer
    from kuberay.kube.objects import Object, ObjectKey
    from kuberay.kube.resources import ResourceInfo, split_api_version
    from kuberay.kube.transport import RequestStats

_EXPORTS = {
    "kuberay.kube.client": ("Client", "WatchEvent"),
    "kuberay.kube.errors": (
        "AlreadyExists",
        "ApiError",
        "BadRequest",
        "Conflict",
        "Forbidden",
        "Gone",
        "Invalid",
        "KubeError",
        "NotFound",
        "RequestRefused",
        "ServerError",
        "TooManyRequests",
        "TransportError",
        "Unauthorized",
        "WriteRefused",
    ),
    "kuberay.kube.interfaces": ("PatchType", "ReadWriter", "Reader", "Writer"),
    "kuberay.kube.objects": ("Object", "ObjectKey"),
    "kuberay.kube.resources": ("ResourceInfo", "split_api_version"),
    "kuberay.kube.transport": ("RequestStats",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "KubeError",
    "NotFound",
    "Object",
    "ObjectKey",
    "PatchType",
    "ReadWriter",
    "Reader",
    "RequestRefused",
    "RequestStats",
    "ResourceInfo",
    "ServerError",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "WatchEvent",
    "WriteRefused",
    "Writer",
    "split_api_version",
]
