"""Pure RayService rules: the RayCluster a RayService runs, and when a spec change is applied
in place, starts a new cluster, or is ignored (KubeRay ``rayservice_controller.go``).

* :func:`build_ray_cluster_for_ray_service`: ``<rs>-<rand5>`` (name given by the caller),
  labels = RayService labels + ``ray.io/originated-from-cr-name``/``-crd=RayService``,
  annotations = RayService annotations + the hash of ``rayClusterConfig`` (``suspend``
  ignored), ``ray.io/num-worker-groups`` and ``ray.io/kuberay-version``; controller owner
  reference to the RayService; worker ``replicas`` cleared for an incremental-upgrade
  pending cluster.
* :func:`is_cluster_spec_hash_equal`: full hash, or (``partial``) the hash of the first
  ``ray.io/num-worker-groups`` groups, i.e. "identical except worker groups appended at the end".
* :func:`should_update_cluster` / :func:`should_prepare_new_cluster` (with
  :func:`kuberay.api.v1.rules.is_zero_downtime_upgrade_enabled`): KubeRay's three decisions.
* :func:`need_serve_submit`: when the Serve config is (re)sent to a cluster.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.api.v1.rules import is_incremental_upgrade_enabled, is_zero_downtime_upgrade_enabled
from kuberay.controllers.builders.hashing import (
    generate_hash_without_replicas_and_workers_to_delete,
)
from kuberay.controllers.builders.owner import set_controller_reference
from kuberay.controllers.common.objects import as_list, as_map, as_str, metadata, spec, str_map

__all__ = [
    "NEW_CLUSTER",
    "NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE",
    "UPGRADE_NONE",
    "build_ray_cluster_for_ray_service",
    "cluster_spec_for_hashing",
    "goal_cluster_hash",
    "is_cluster_spec_hash_equal",
    "keep_scale_gates",
    "modify_ray_cluster",
    "need_serve_submit",
    "serve_config_payload",
    "should_prepare_new_cluster",
    "should_update_cluster",
]

NEW_CLUSTER: Final = "NewCluster"
NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE: Final = "NewClusterWithIncrementalUpgrade"
UPGRADE_NONE: Final = "None"
#: ``workerGroupSpecs[].scaleStrategy.scaleGate`` (KubeRay v1.8): other controllers' field
_SCALE_GATE: Final = "scaleGate"


def cluster_spec_for_hashing(ray_service: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``spec.rayClusterConfig`` without ``suspend`` (it never triggers an update:
    suspend is propagated only at creation, then belongs to Kueue)."""
    cluster_spec = copy.deepcopy(dict(as_map(spec(ray_service).get("rayClusterConfig"))))
    cluster_spec.pop("suspend", None)
    return cluster_spec


def goal_cluster_hash(ray_service: Mapping[str, Any], num_worker_groups: int | None = None) -> str:
    """The hash KubeRay stamps for ``rayClusterConfig``; with ``num_worker_groups``, of only
    its first that many worker groups (the partial hash)."""
    cluster_spec = cluster_spec_for_hashing(ray_service)
    if num_worker_groups is not None:
        groups = as_list(cluster_spec.get("workerGroupSpecs"))
        cluster_spec["workerGroupSpecs"] = groups[:num_worker_groups]
    return generate_hash_without_replicas_and_workers_to_delete(cluster_spec)


def build_ray_cluster_for_ray_service(
    ray_service: Mapping[str, Any],
    cluster_name: str,
    *,
    features: Mapping[str, bool] | None = None,
    kuberay_version: str = c.KUBERAY_VERSION,
) -> dict[str, Any]:
    """KubeRay ``constructRayClusterForRayService``: the RayCluster object to create."""
    meta = metadata(ray_service)
    rs_name = as_str(meta.get("name"))
    labels = dict(str_map(meta.get("labels")))
    labels[c.RAY_ORIGINATED_FROM_CR_NAME_LABEL_KEY] = rs_name
    labels[c.RAY_ORIGINATED_FROM_CRD_LABEL_KEY] = c.KIND_RAYSERVICE
    cluster_spec = copy.deepcopy(dict(as_map(spec(ray_service).get("rayClusterConfig"))))
    annotations = dict(str_map(meta.get("annotations")))
    annotations[c.HASH_WITHOUT_REPLICAS_AND_WORKERS_TO_DELETE_KEY] = goal_cluster_hash(ray_service)
    annotations[c.NUM_WORKER_GROUPS_KEY] = str(len(as_list(cluster_spec.get("workerGroupSpecs"))))
    annotations[c.KUBERAY_VERSION_ANNOTATION_KEY] = kuberay_version
    status = as_map(ray_service.get("status"))
    active_name = as_str(as_map(status.get("activeServiceStatus")).get("rayClusterName"))
    if is_incremental_upgrade_enabled(ray_service, features) and active_name:
        for group in as_list(cluster_spec.get("workerGroupSpecs")):
            if isinstance(group, dict):
                group.pop("replicas", None)
    cluster: dict[str, Any] = {
        "apiVersion": c.API_VERSION,
        "kind": "RayCluster",
        "metadata": {
            "name": cluster_name,
            "namespace": as_str(meta.get("namespace")),
            "labels": labels,
            "annotations": annotations,
        },
        "spec": cluster_spec,
    }
    set_controller_reference(cluster, ray_service, c.KIND_RAYSERVICE)
    return cluster


def _cluster_annotations(cluster: Mapping[str, Any]) -> dict[str, str]:
    return str_map(metadata(cluster).get("annotations"))


def is_cluster_spec_hash_equal(
    ray_service: Mapping[str, Any], cluster: Mapping[str, Any], *, partial: bool
) -> bool:
    """Does ``cluster`` run ``rayClusterConfig``? ``partial``: compare only the cluster's
    first ``ray.io/num-worker-groups`` groups (an unparsable count compares as equal, as
    KubeRay's ``strconv.Atoi`` error path does; fewer goal groups never match)."""
    annotations = _cluster_annotations(cluster)
    cluster_hash = annotations.get(c.HASH_WITHOUT_REPLICAS_AND_WORKERS_TO_DELETE_KEY, "")
    if not partial:
        return cluster_hash == goal_cluster_hash(ray_service)
    raw = annotations.get(c.NUM_WORKER_GROUPS_KEY, "")
    try:
        count = int(raw, 10)
    except ValueError:
        return True
    goal_groups = len(as_list(cluster_spec_for_hashing(ray_service).get("workerGroupSpecs")))
    if goal_groups < count or count < 0:
        return cluster_hash == ""
    return cluster_hash == goal_cluster_hash(ray_service, count)


def _condition_true(ray_service: Mapping[str, Any], ctype: str) -> bool:
    for cond in as_list(as_map(ray_service.get("status")).get("conditions")):
        if as_map(cond).get("type") == ctype:
            return as_map(cond).get("status") == "True"
    return False


def should_update_cluster(
    ray_service: Mapping[str, Any],
    cluster: Mapping[str, Any] | None,
    *,
    is_active: bool,
    kuberay_version: str = c.KUBERAY_VERSION,
) -> bool:
    """KubeRay ``shouldUpdateCluster``: rewrite ``cluster`` in place? Never the active one
    during an upgrade; the active one when its ``ray.io/kuberay-version`` differs; otherwise
    only when the change is worker groups appended at the end."""
    if cluster is None:
        return False
    if is_active:
        if _condition_true(ray_service, "UpgradeInProgress"):
            return False
        if _cluster_annotations(cluster).get(c.KUBERAY_VERSION_ANNOTATION_KEY) != kuberay_version:
            return True
    if is_cluster_spec_hash_equal(ray_service, cluster, partial=False):
        return False
    return is_cluster_spec_hash_equal(ray_service, cluster, partial=True)


def should_prepare_new_cluster(
    ray_service: Mapping[str, Any],
    active: Mapping[str, Any] | None,
    pending: Mapping[str, Any] | None,
    *,
    pending_serving: bool,
    features: Mapping[str, bool] | None,
    env: Mapping[str, str],
) -> bool:
    """KubeRay ``shouldPrepareNewCluster``: name a new pending cluster? Not while services
    already point at the pending one or a rollback runs; yes when there is no cluster; else
    only when the (pending, else active) cluster's full and partial hashes both differ and
    zero-downtime upgrades are enabled."""
    if pending_serving or _condition_true(ray_service, "RollbackInProgress"):
        return False
    if active is None and pending is None:
        return True
    cluster = pending if pending is not None else active
    assert cluster is not None
    if is_cluster_spec_hash_equal(ray_service, cluster, partial=False):
        return False
    if is_cluster_spec_hash_equal(ray_service, cluster, partial=True):
        return False
    return is_zero_downtime_upgrade_enabled(ray_service, features, env)


def keep_scale_gates(old_spec: Mapping[str, Any], new_spec: dict[str, Any]) -> None:
    """Give every worker group of ``new_spec`` the ``scaleStrategy.scaleGate`` its namesake in
    ``old_spec`` has (none if it has none): the gates belong to the controllers that wrote them
    on the cluster (Kueue), so an in-place update neither drops nor adds one."""
    old_gates = {
        as_str(as_map(g).get("groupName")): as_map(as_map(g).get("scaleStrategy")).get(_SCALE_GATE)
        for g in as_list(old_spec.get("workerGroupSpecs"))
    }
    for group in as_list(new_spec.get("workerGroupSpecs")):
        if not isinstance(group, dict):
            continue
        gates = old_gates.get(as_str(group.get("groupName")))
        strategy = group.get("scaleStrategy")
        if isinstance(strategy, dict):
            strategy.pop(_SCALE_GATE, None)
        if gates is None:
            continue
        if not isinstance(strategy, dict):
            strategy = group["scaleStrategy"] = {}
        strategy[_SCALE_GATE] = copy.deepcopy(gates)


def modify_ray_cluster(current: Mapping[str, Any], goal: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay ``modifyRayCluster``: ``current`` with the goal's spec (keeping the current
    ``spec.suspend`` and each group's scale gates, see :func:`keep_scale_gates`), labels and
    annotations; everything else (resourceVersion, status, owner references) kept."""
    updated = copy.deepcopy(dict(current))
    new_spec = copy.deepcopy(dict(as_map(goal.get("spec"))))
    old_spec = as_map(current.get("spec"))
    new_spec.pop("suspend", None)
    if "suspend" in old_spec:
        new_spec["suspend"] = old_spec["suspend"]
    keep_scale_gates(old_spec, new_spec)
    updated["spec"] = new_spec
    meta = dict(as_map(updated.get("metadata")))
    meta["labels"] = dict(str_map(metadata(goal).get("labels")))
    meta["annotations"] = dict(str_map(metadata(goal).get("annotations")))
    updated["metadata"] = meta
    return updated


def serve_config_payload(serve_config_v2: str, target_capacity: int | None = None) -> bytes:
    """The ``PUT /api/serve/applications/`` body: ``serveConfigV2`` YAML as a JSON object
    with sorted keys (Go's ``json.Marshal`` of a map), plus ``target_capacity`` when given.
    Raises ValueError when the YAML is not a mapping."""
    import yaml  # first RayService only: an operator without one never loads PyYAML

    loaded = yaml.safe_load(serve_config_v2) if serve_config_v2.strip() else {}
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise ValueError("serveConfigV2 is not a YAML mapping")
    if target_capacity is not None:
        loaded["target_capacity"] = target_capacity
    return json.dumps(loaded, sort_keys=True, separators=(",", ":"), default=str).encode()


def need_serve_submit(
    cached: str | None, serve_config_v2: str, num_applications: int
) -> tuple[bool, str]:
    """KubeRay ``checkIfNeedSubmitServeApplications``: (submit?, why)."""
    if not cached:
        return True, "Nothing has been cached for the cluster."
    if num_applications == 0:
        return True, (
            "No Serve application found in the RayCluster. A possible reason is that the head "
            "Pod crashed and GCS FT was not enabled."
        )
    if cached != serve_config_v2:
        return True, "Current V2 Serve config doesn't match cached Serve config."
    return False, "Current V2 Serve config matches cached Serve config."
