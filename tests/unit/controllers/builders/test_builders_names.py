"""KubeRay naming and truncation rules."""

from __future__ import annotations

import random

from builders_testlib import fixture_p

from kuberay.api.v1.rules import gcs_storage_pvc_name
from kuberay.controllers.builders.names import (
    RANDOM_SUFFIX_ALPHABET,
    auth_secret_name,
    autoscaler_service_account_name,
    fqdn_head_service_name,
    generate_ray_worker_replica_group_name,
    head_pod_name,
    head_service_name,
    ingress_name,
    pod_name,
    redis_cleanup_job_name,
    route_name,
    worker_pod_generate_name,
)


def test_pod_names_keep_the_prefix() -> None:
    long_name = "Cluster" + "x" * 60
    assert pod_name(long_name, "head", True) == ("cluster" + "x" * 43 + "-head-")
    assert head_pod_name("my-cluster", deterministic=True) == "my-cluster-head"
    assert head_pod_name("my-cluster", deterministic=False) == "my-cluster-head-"
    assert worker_pod_generate_name("c", "g") == "c-g-worker-"


def test_cluster_object_names() -> None:
    cluster = fixture_p()
    assert head_service_name(cluster) == "raycluster-sample-head-svc"
    assert fqdn_head_service_name(cluster, "cluster.local") == (
        "raycluster-sample-head-svc.default.svc.cluster.local"
    )
    cluster["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": "custom"}}
    assert head_service_name(cluster) == "custom"
    assert gcs_storage_pvc_name(cluster) == "raycluster-sample-gcs-pvc"
    cluster["spec"]["gcsFaultToleranceOptions"] = {"storage": {"claimName": "mine"}}
    assert gcs_storage_pvc_name(cluster) == "mine"
    assert autoscaler_service_account_name(cluster) == "raycluster-sample"
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "sa-" + "y" * 60
    # A user-written name is kept verbatim (KubeRay clips it to a nonexistent account).
    assert autoscaler_service_account_name(cluster) == "sa-" + "y" * 60


def test_truncated_names() -> None:
    name = "r" * 53
    assert ingress_name(name) == ("r" * 53 + "-head-ingress")[-50:]
    assert auth_secret_name(name) == "r" * 50
    assert redis_cleanup_job_name(name) == ("r" * 53 + "-redis-cleanup")[-63:]
    assert route_name("abc", "default") == "abc-head-route"
    assert route_name("a" * 60, "ns") == "a" * 49


def test_replica_group_name() -> None:
    name = generate_ray_worker_replica_group_name("group", random.Random(1))
    prefix, suffix = name.rsplit("-", 1)
    assert prefix == "group"
    assert len(suffix) == 5 and set(suffix) <= set(RANDOM_SUFFIX_ALPHABET)
