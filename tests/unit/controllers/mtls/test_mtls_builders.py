"""The mTLS builders against the facts KubeRay's Go unit tests
(``raycluster_mtls_controller_test.go``, ``feeaf72``) and its controller code fix: names,
labels, owner, the CA's key/usages/durations, leaf DNS names, IP SANs from live pods only,
the set-based update check and readiness at the current generation."""

from __future__ import annotations

import datetime as dt
from typing import Any

from kuberay.controllers.mtls.builders import (
    build_ca_certificate,
    build_ca_issuer,
    build_leaf_certificate,
    build_selfsigned_issuer,
    certificate_needs_update,
    certificate_not_after,
    is_certificate_ready,
    pod_ips,
)

CLUSTER: dict[str, Any] = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "rc", "namespace": "ns", "uid": "0123456789abcdef"},
    "spec": {"tlsOptions": {"enabled": True}, "headGroupSpec": {}},
}


def _pod(node_type: str, ip: str, *, cluster: str = "rc", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": f"p-{ip}",
        "labels": {"ray.io/cluster": cluster, "ray.io/node-type": node_type},
    }
    if extra.get("deleting"):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"podIP": ip, "phase": extra.get("phase", "Running")}}


def test_names_labels_and_owner() -> None:
    objs = [
        build_selfsigned_issuer(CLUSTER),
        build_ca_certificate(CLUSTER),
        build_ca_issuer(CLUSTER),
        build_leaf_certificate(CLUSTER, "head", ["127.0.0.1"], "cluster.local"),
        build_leaf_certificate(CLUSTER, "worker", ["127.0.0.1"], "cluster.local"),
    ]
    assert [o["metadata"]["name"] for o in objs] == [
        "ray-selfsigned-issuer-rc",
        "ray-ca-certificate-rc",
        "ray-ca-issuer-rc",
        "ray-head-cert-rc",
        "ray-worker-cert-rc",
    ]
    assert [o["metadata"]["labels"]["app.kubernetes.io/component"] for o in objs] == [
        "selfsigned-issuer",
        "ca-certificate",
        "ca-issuer",
        "head-certificate",
        "worker-certificate",
    ]
    for obj in objs:
        assert obj["apiVersion"] == "cert-manager.io/v1"
        labels = obj["metadata"]["labels"]
        assert labels["ray.io/cluster"] == "rc"
        assert labels["app.kubernetes.io/created-by"] == "kuberay-operator"
        assert labels["app.kubernetes.io/name"] == "kuberay"
        (ref,) = obj["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            "RayCluster",
            "rc",
            "0123456789abcdef",
            True,
        )


def test_ca_chain() -> None:
    ca = build_ca_certificate(CLUSTER)["spec"]
    assert ca["secretName"] == "rc-ca-secret-01234567"
    assert ca["isCA"] is True and ca["commonName"] == "ray-ca-rc"
    assert ca["privateKey"] == {"algorithm": "RSA", "size": 4096}
    assert ca["usages"] == ["cert sign", "crl sign"]
    assert ca["issuerRef"] == {
        "name": "ray-selfsigned-issuer-rc",
        "kind": "Issuer",
        "group": "cert-manager.io",
    }
    assert build_ca_issuer(CLUSTER)["spec"] == {"ca": {"secretName": "rc-ca-secret-01234567"}}


def test_leaf_dns_names_use_the_cluster_domain() -> None:
    head = build_leaf_certificate(CLUSTER, "head", ["127.0.0.1"], "example.org")["spec"]
    assert head["dnsNames"] == ["localhost", "rc-head-svc.ns.svc.example.org"]
    assert head["secretName"] == "ray-head-secret-rc"
    worker = build_leaf_certificate(CLUSTER, "worker", ["127.0.0.1"], "example.org")["spec"]
    assert worker["dnsNames"] == ["localhost"]
    assert worker["secretName"] == "ray-worker-secret-rc"


def test_pod_ips_of_live_pods_of_one_node_type() -> None:
    pods = [
        _pod("head", "10.0.0.9"),
        _pod("worker", "10.0.0.10"),
        _pod("worker", "10.0.0.2"),
        _pod("worker", "10.0.0.2"),
        _pod("worker", "10.0.0.3", deleting=True),
        _pod("worker", "10.0.0.4", phase="Failed"),
        _pod("worker", "10.0.0.5", phase="Succeeded"),
        _pod("worker", "10.0.0.6", cluster="other"),
        _pod("worker", ""),
    ]
    assert pod_ips(pods, "worker", "rc") == ["10.0.0.10", "10.0.0.2", "127.0.0.1"]
    assert pod_ips(pods, "head", "rc") == ["10.0.0.9", "127.0.0.1"]
    assert pod_ips([], "head", "rc") == ["127.0.0.1"]


def test_update_only_when_sans_or_labels_differ() -> None:
    desired = build_leaf_certificate(CLUSTER, "worker", ["10.0.0.1", "127.0.0.1"], "c.l")
    live = build_leaf_certificate(CLUSTER, "worker", ["127.0.0.1", "10.0.0.1"], "c.l")
    live["spec"]["duration"] = "2160h"  # cert-manager-side normalisation is not a change
    assert not certificate_needs_update(live, desired)
    fewer = build_leaf_certificate(CLUSTER, "worker", ["127.0.0.1"], "c.l")
    assert certificate_needs_update(fewer, desired)
    relabelled = build_leaf_certificate(CLUSTER, "worker", ["10.0.0.1", "127.0.0.1"], "c.l")
    relabelled["metadata"]["labels"]["extra"] = "x"
    assert certificate_needs_update(relabelled, desired)


def test_ready_only_at_the_current_generation() -> None:
    def cert(status: str, observed: int, generation: int = 2) -> dict[str, Any]:
        cond = {"type": "Ready", "status": status, "observedGeneration": observed}
        return {"metadata": {"generation": generation}, "status": {"conditions": [cond]}}

    assert is_certificate_ready(cert("True", 2))
    assert not is_certificate_ready(cert("True", 1))  # SANs changed, not reissued yet
    assert not is_certificate_ready(cert("False", 2))
    assert not is_certificate_ready({"metadata": {"generation": 1}})


def test_not_after() -> None:
    parsed = certificate_not_after({"status": {"notAfter": "2026-12-03T10:00:00Z"}})
    assert parsed == dt.datetime(2026, 12, 3, 10, tzinfo=dt.UTC)
    assert certificate_not_after({"status": {}}) is None
