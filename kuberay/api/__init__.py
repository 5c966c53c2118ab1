"""Typed API of the ray.io custom resources (see :mod:`kuberay.api.v1`)."""
