"""Every builder against the objects KubeRay's own Go code produced for the same input.

The cases cover all sample RayClusters (and the clusters RayJob/RayService samples produce)
plus crafted variants for each feature and operator switch, as recorded in
``data/kuberay_go_golden.json.gz`` (see ``data/README.md``).
Comparison is on Go's JSON view (empty values dropped, quantities canonical). KubeRay emits
a custom head Service's computed ports and the serve ports in random (Go map) order, so those
port lists are compared sorted by name.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders_testlib import load_gz, normalize

from kuberay.api.v1.rules import is_gcs_fault_tolerance_embedded, is_gcs_fault_tolerance_enabled
from kuberay.controllers.builders.gcs_ft import build_gcs_storage_pvc
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.controllers.builders.ingress import build_head_ingress, build_head_route
from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
from kuberay.controllers.builders.rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
)
from kuberay.controllers.builders.service import (
    ServiceBuildError,
    build_head_service,
    build_headless_service,
    build_serve_service,
)
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.raycluster.redis_cleanup_job import build_redis_cleanup_job

GOLDEN: list[dict[str, Any]] = load_gz("kuberay_go_golden.json.gz")


def _options(case: dict[str, Any]) -> BuildOptions:
    return BuildOptions.from_env(
        case.get("env") or {},
        kuberay_version="nightly",
        default_container_envs=case.get("defaultContainerEnvs") or (),
        head_sidecar_containers=case.get("headSidecars") or (),
        worker_sidecar_containers=case.get("workerSidecars") or (),
        default_pod_annotations=case.get("defaultPodAnnotations") or {},
        default_pod_labels=case.get("defaultPodLabels") or {},
    )


def _build_all(case: dict[str, Any]) -> dict[str, Any]:
    cluster = case["cluster"]
    features = case.get("features") or {}
    options = _options(case)
    groups = cluster["spec"].get("workerGroupSpecs") or []
    objects: dict[str, Any] = {
        "hash": ray_cluster_recreate_hash(cluster),
        "headPod": build_head_pod(cluster, options, features),
        "workerPods": [
            build_worker_pod(
                cluster,
                groups[w["group"]],
                options,
                features,
                replica_group_name=w["replicaName"],
                replica_index=w["replicaIndex"],
                host_index=w["hostIndex"],
            )
            for w in case["workers"]
        ],
        "headService": build_head_service(cluster, options),
        "headlessService": build_headless_service(cluster),
        "ingress": build_head_ingress(cluster),
        "route": build_head_route(cluster),
        "serviceAccount": build_autoscaler_service_account(cluster),
        "role": build_autoscaler_role(cluster),
        "roleBinding": build_autoscaler_role_binding(cluster),
    }
    try:
        objects["serveService"] = build_serve_service(cluster)
    except ServiceBuildError as err:
        objects["serveServiceErr"] = str(err)
    if is_gcs_fault_tolerance_enabled(cluster):
        if is_gcs_fault_tolerance_embedded(cluster):
            objects["gcsPVC"] = build_gcs_storage_pvc(cluster)
        else:
            objects["redisCleanupJob"] = build_redis_cleanup_job(cluster, options, features)
    return objects


def _comparable(objects: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    result = normalize(objects)
    for key, obj in result.items():
        # Go's typed objects carry no TypeMeta (except the pods KubeRay builds).
        if isinstance(obj, dict) and key != "headPod":
            obj.pop("apiVersion", None)
            obj.pop("kind", None)
    if case["cluster"]["spec"].get("headGroupSpec", {}).get("headService") is not None:
        result["headService"]["spec"]["ports"].sort(key=lambda p: p["name"])
    if "serveService" in result:
        result["serveService"]["spec"]["ports"].sort(key=lambda p: p["name"])
    return result


def _with_known_divergences(expected: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    """KubeRay's output where this implementation deliberately differs from it.

    A user-written head ``serviceAccountName`` longer than 50 characters: KubeRay clips
    it with ``CheckName`` in the autoscaling head pod and the RoleBinding subject, so both
    name an account that does not exist; here the user's name is used verbatim.
    """
    result = copy.deepcopy(expected)
    head = case["cluster"]["spec"].get("headGroupSpec") or {}
    account = ((head.get("template") or {}).get("spec") or {}).get("serviceAccountName")
    if account and len(account) > 50:
        pod_spec = result["headPod"]["spec"]
        if pod_spec.get("serviceAccountName"):
            pod_spec["serviceAccountName"] = account
        for subject in result["roleBinding"].get("subjects") or []:
            subject["name"] = account
    return result


@pytest.mark.parametrize("entry", GOLDEN, ids=[e["case"]["name"] for e in GOLDEN])
def test_matches_kuberay_go_output(entry: dict[str, Any]) -> None:
    case = entry["case"]
    before = copy.deepcopy(case)
    expected = _with_known_divergences(entry["expected"], case)
    assert _comparable(_build_all(case), case) == _comparable(expected, case)
    assert case == before  # builders never mutate their input


def test_golden_set_covers_every_feature() -> None:
    names = {e["case"]["name"] for e in GOLDEN}
    for expected in (
        "fixture-p",
        "accelerators",
        "group-resources-labels",
        "overwrite-cmd",
        "user-command",
        "autoscaler-v1",
        "autoscaler-v2",
        "autoscaler-v2-overrides",
        'auth:{"mode": "token"}',
        "history-server-auth",
        "gcs-ft-redis-options",
        "gcs-ft-legacy-annotation",
        "ingress-serve-svc",
        "custom-head-service",
        "multi-host-gate-on",
        "mtls",
    ):
        assert expected in names
    assert sum(1 for n in names if n.startswith("sample:")) >= 40
