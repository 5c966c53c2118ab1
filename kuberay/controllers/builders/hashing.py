"""KubeRay's spec hash (``GenerateHashWithoutReplicasAndWorkersToDelete``), byte-compatible.

The hash is stamped on every head pod as ``ray.io/upgrade-strategy-recreate-hash`` and on
RayService-created clusters as ``ray.io/hash-without-replicas-and-workers-to-delete``. A
different hash for an unchanged spec would make ``upgradeStrategy: Recreate`` delete all pods
of a cluster we adopt from KubeRay (or trigger a RayService upgrade), so the algorithm is
reproduced exactly:

1. deep-copy the ``RayClusterSpec``;
2. blank the head template's ``tolerations`` and ``schedulingGates``; for every worker group
   blank ``replicas``, ``minReplicas``, ``maxReplicas``, ``scaleStrategy.workersToDelete``,
   ``scaleStrategy.scaleGate`` (KubeRay v1.8: a gate Kueue adds or removes must never make a
   RayService build a new cluster nor a ``Recreate`` cluster replace its pods) and the
   template's ``tolerations``/``schedulingGates``; blank ``upgradeStrategy``;
3. serialise with Go ``encoding/json`` (see :mod:`.gojson`);
4. SHA-1, then RFC 4648 base32 with the *extended hex* alphabet (``0-9A-V``), padded (a 20-byte
   digest needs no padding, so always 32 characters).

The RayCluster controller hashes the spec *after* its ``setDefaults`` step (missing
``rayStartParams`` become ``{}``, which serialises differently from ``null``); use
:func:`ray_cluster_recreate_hash` for that. The RayService controller hashes its
``rayClusterConfig`` as written: use :func:`generate_hash_without_replicas_and_workers_to_delete`.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Mapping
from typing import Any

from kuberay.controllers.common.defaults import with_default_ray_start_params
from kuberay.gocompat.go_struct_schema import RAY_CLUSTER_SPEC
from kuberay.gocompat.gojson import marshal

__all__ = [
    "generate_hash_without_replicas_and_workers_to_delete",
    "generate_json_hash",
    "muted_spec_for_hash",
    "ray_cluster_recreate_hash",
]


def generate_json_hash(serialized: bytes) -> str:
    """SHA-1 of ``serialized`` in upper-case base32hex (KubeRay ``GenerateJsonHash``)."""
    digest = hashlib.sha1(serialized, usedforsecurity=False).digest()
    return base64.b32hexencode(digest).decode("ascii")


def _clear_template_scheduling(group: dict[str, Any]) -> None:
    template = group.get("template")
    if isinstance(template, dict):
        spec = template.get("spec")
        if isinstance(spec, dict):
            spec.pop("tolerations", None)
            spec.pop("schedulingGates", None)


def muted_spec_for_hash(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``spec`` with the fields KubeRay ignores for the hash removed."""
    muted: dict[str, Any] = copy.deepcopy(dict(spec))
    head = muted.get("headGroupSpec")
    if isinstance(head, dict):
        _clear_template_scheduling(head)
    groups = muted.get("workerGroupSpecs")
    if isinstance(groups, list):
        for group in groups:
            if not isinstance(group, dict):
                continue
            for key in ("replicas", "minReplicas", "maxReplicas"):
                group.pop(key, None)
            strategy = group.get("scaleStrategy")
            if isinstance(strategy, dict):
                strategy.pop("workersToDelete", None)
                strategy.pop("scaleGate", None)
            _clear_template_scheduling(group)
    muted.pop("upgradeStrategy", None)
    return muted


def generate_hash_without_replicas_and_workers_to_delete(spec: Mapping[str, Any]) -> str:
    """KubeRay ``GenerateHashWithoutReplicasAndWorkersToDelete`` of a RayClusterSpec dict."""
    return generate_json_hash(marshal(muted_spec_for_hash(spec), RAY_CLUSTER_SPEC))


def ray_cluster_recreate_hash(cluster: Mapping[str, Any]) -> str:
    """The head-pod ``ray.io/upgrade-strategy-recreate-hash`` the RayCluster controller stamps.

    ``cluster`` is the whole RayCluster object; KubeRay's ``setDefaults`` is applied first.
    """
    spec = cluster.get("spec") or {}
    return generate_hash_without_replicas_and_workers_to_delete(with_default_ray_start_params(spec))
