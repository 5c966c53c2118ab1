"""Every RayCluster in the KubeRay sample manifests builds without error."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders_testlib import SAMPLES

from kuberay.api.v1.rules import is_gcs_fault_tolerance_embedded, is_gcs_fault_tolerance_enabled
from kuberay.controllers.builders.gcs_ft import build_gcs_storage_pvc
from kuberay.controllers.builders.hashing import ray_cluster_recreate_hash
from kuberay.controllers.builders.ingress import build_head_ingress
from kuberay.controllers.builders.pod import build_head_pod, build_worker_pod
from kuberay.controllers.builders.rbac import (
    build_autoscaler_role,
    build_autoscaler_role_binding,
    build_autoscaler_service_account,
)
from kuberay.controllers.builders.resources import desired_resource_status
from kuberay.controllers.builders.service import (
    ServiceBuildError,
    build_head_service,
    build_headless_service,
    build_serve_service,
)
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.raycluster.redis_cleanup_job import build_redis_cleanup_job
from tests.kuberay_samples import requires_kuberay_samples

ALL_GATES_ON = {
    "GCSFaultToleranceEmbeddedStorage": True,
    "RayClusterHistoryServer": True,
    "RayClusterMTLS": True,
}


def _clusters() -> list[tuple[str, dict[str, Any]]]:
    if not SAMPLES.is_dir():
        return []
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(Path(SAMPLES).glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not isinstance(doc, dict):
                continue
            spec = doc.get("spec") or {}
            meta = doc.get("metadata") or {}
            if doc.get("kind") == "RayCluster":
                cluster_spec = spec
            elif doc.get("kind") == "RayService":
                cluster_spec = spec.get("rayClusterConfig")
            elif doc.get("kind") == "RayJob":
                cluster_spec = spec.get("rayClusterSpec")
            else:
                continue
            if not cluster_spec:
                continue
            cluster = {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {
                    "name": meta.get("name", "sample"),
                    "namespace": meta.get("namespace", "default"),
                    "uid": "0000-1111",
                    "annotations": meta.get("annotations") or {},
                },
                "spec": cluster_spec,
            }
            found.append((f"{path.name}#{index}", cluster))
    return found


CLUSTERS = _clusters()


@requires_kuberay_samples
@pytest.mark.parametrize(("name", "cluster"), CLUSTERS, ids=[n for n, _ in CLUSTERS])
def test_sample_builds(name: str, cluster: dict[str, Any]) -> None:
    options = BuildOptions()
    head = build_head_pod(cluster, options, ALL_GATES_ON)
    ray = head["spec"]["containers"][0]
    env = {e["name"] for e in ray["env"]}
    assert {"RAY_CLUSTER_NAME", "KUBERAY_GEN_RAY_START_CMD", "RAY_ADDRESS"} <= env
    assert head["metadata"]["annotations"]["ray.io/upgrade-strategy-recreate-hash"] == (
        ray_cluster_recreate_hash(cluster)
    )
    for group in cluster["spec"].get("workerGroupSpecs") or []:
        worker = build_worker_pod(cluster, group, options, ALL_GATES_ON, replica_group_name="r")
        assert worker["metadata"]["labels"]["ray.io/group"] == group["groupName"]
    service = build_head_service(cluster, options)
    assert service["spec"]["ports"]
    build_headless_service(cluster)
    build_head_ingress(cluster)
    build_autoscaler_service_account(cluster)
    build_autoscaler_role(cluster)
    build_autoscaler_role_binding(cluster)
    desired_resource_status(cluster)
    with contextlib.suppress(ServiceBuildError):
        build_serve_service(cluster)
    if is_gcs_fault_tolerance_enabled(cluster):
        if is_gcs_fault_tolerance_embedded(cluster):
            build_gcs_storage_pvc(cluster)
        else:
            build_redis_cleanup_job(cluster, options, ALL_GATES_ON)
