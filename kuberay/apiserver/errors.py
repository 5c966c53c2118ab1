"""Errors the API server turns into answers."""

from __future__ import annotations


class UpstreamUnavailable(Exception):
    """The kube-apiserver could not be reached or broke off its answer (answered 502/503)."""
