"""Async, dict-based Kubernetes client: typed errors, throttling, counted requests."""

from kuberay.kube.client import Client, PatchType, RequestStats, WatchEvent
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
from kuberay.kube.resources import ResourceInfo, split_api_version

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
    "PatchType",
    "RequestStats",
    "ResourceInfo",
    "ServerError",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "WatchEvent",
    "WriteRefused",
    "split_api_version",
]
