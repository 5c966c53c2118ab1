"""Names KubeRay derives for the objects it creates."""

from __future__ import annotations

import datetime as dt

import pytest
from kuberay_api_testutil import raycluster

from kuberay.api.v1 import RayCluster, structure
from kuberay.api.v1 import naming as n


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("raycluster-sample", "raycluster-sample"),
        ("1cluster", "rcluster"),
        ("-cluster", "rcluster"),
        ("$cluster", "$cluster"),  # a symbol, not punctuation
        ("a" * 10 + "b" * 50, "b" * 50),  # keeps the suffix
        ("x" * 10 + "9" + "c" * 49, "r" + "c" * 49),
        ("", ""),
    ],
)
def test_check_name(name: str, expected: str) -> None:
    assert n.check_name(name) == expected


def test_check_label_and_job_names() -> None:
    assert n.check_label("_abc") == "rabc"
    assert n.check_label("1abc") == "1abc"  # digits are fine in labels
    assert n.check_label("a" * 5 + "-" + "b" * 62) == "r" + "b" * 62
    assert n.redis_cleanup_job_name("c") == "c-redis-cleanup"
    assert n.identifier("c", "head") == "c-head"


def test_pod_name_keeps_the_prefix() -> None:
    assert n.pod_name("MyCluster", "head", True) == "mycluster-head-"
    assert n.pod_name("a" * 60, "worker", False) == "a" * 50 + "-worker"


def test_route_name() -> None:
    assert n.route_name("c", "ns") == "c-head-route"
    assert n.route_name("x" * 60, "namespace") == "x" * 42


def test_service_names() -> None:
    cluster = structure(RayCluster, raycluster())
    assert n.head_service_name("RayCluster", cluster.spec, "c") == "c-head-svc"
    custom = raycluster()
    custom["spec"]["headGroupSpec"]["headService"] = {"metadata": {"name": "my-head"}}
    spec = structure(RayCluster, custom).spec
    assert n.head_service_name("RayCluster", spec, "c") == "my-head"
    assert n.head_service_name("RayService", spec, "svc") == "svc-head-svc"
    assert n.fqdn_service_name("c", spec, "ns", {}) == "my-head.ns.svc.cluster.local"
    assert n.fqdn_service_name("c", None, "ns", {"CLUSTER_DOMAIN": "corp"}) == (
        "c-head-svc.ns.svc.corp"
    )
    assert n.serve_service_name("c") == "c-serve-svc"
    assert n.serve_service_label("c") == "c-serve"
    assert n.headless_service_name("c") == "c-headless"
    assert n.ingress_name("c") == "c-head-ingress"
    with pytest.raises(ValueError, match="unknown CRD type"):
        n.head_service_name("Pod", spec, "c")


def test_other_names() -> None:
    assert n.autoscaler_service_account_name("c", "") == "c"
    assert n.autoscaler_service_account_name("c", "1sa") == "rsa"
    assert n.autoscaler_role_name("c") == n.auth_secret_name("c") == "c"
    assert n.gateway_name("s") == "s-gateway"
    assert n.httproute_name("s") == "s-httproute"
    assert n.network_policy_head_name("c") == "c-head"
    assert n.network_policy_worker_name("c", "g") == "c-workers-g"
    assert n.ca_secret_name("c", "0123456789ab") == "c-ca-secret-01234567"
    assert n.tls_secret_name("c", "worker") == "ray-worker-secret-c"


def test_random_names() -> None:
    suffix = n.random_suffix()
    assert len(suffix) == 5 and set(suffix) <= set(n.RANDOM_ALPHABET)
    assert n.generate_ray_cluster_name("job").startswith("job-")
    assert len(n.generate_ray_job_id("job")) == len("job-") + 5
    assert n.generate_worker_replica_group_name("tpu").startswith("tpu-")


def test_raycronjob_child_name() -> None:
    tick = dt.datetime(2026, 1, 2, 3, 4, 59, tzinfo=dt.UTC)
    assert n.raycronjob_child_name("cron", tick) == f"cron-{int(tick.timestamp()) // 60}"
