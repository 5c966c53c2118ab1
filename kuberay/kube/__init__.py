"""Async, dict-based Kubernetes client: typed errors, throttling, counted requests."""

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
