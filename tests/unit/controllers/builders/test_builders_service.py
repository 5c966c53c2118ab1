"""Head/headless/serve Services, dashboard Ingress and Route."""

from __future__ import annotations

from typing import Any

import pytest
from builders_testlib import fixture_p

from kuberay.controllers.builders.ingress import (
    build_head_ingress,
    build_head_route,
    ingress_needs_update,
)
from kuberay.controllers.builders.service import (
    ServiceBuildError,
    build_head_service,
    build_head_service_for_ray_service,
    build_headless_service,
    build_serve_service,
    build_serve_service_for_ray_service,
    needs_headless_service,
)
from kuberay.controllers.common.options import BuildOptions

OWNER = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "name": "raycluster-sample",
    "uid": "uid-p",
    "controller": True,
    "blockOwnerDeletion": True,
}
SELECTOR = {
    "ray.io/cluster": "raycluster-sample",
    "ray.io/node-type": "head",
    "ray.io/identifier": "raycluster-sample-head",
    "app.kubernetes.io/name": "kuberay",
    "app.kubernetes.io/created-by": "kuberay-operator",
}


def _ports(service: dict[str, Any]) -> list[tuple[str, int]]:
    return [(p["name"], p["port"]) for p in service["spec"]["ports"]]


def test_default_head_service_is_headless_with_sorted_ports() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0].pop("ports")
    service = build_head_service(cluster)
    assert service["metadata"] == {
        "name": "raycluster-sample-head-svc",
        "namespace": "default",
        "labels": SELECTOR,
        "ownerReferences": [OWNER],
    }
    assert service["spec"]["selector"] == SELECTOR
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert "type" not in service["spec"]
    assert _ports(service) == [
        ("client", 10001),
        ("dashboard", 8265),
        ("gcs-server", 6379),
        ("metrics", 8080),
        ("serve", 8000),
    ]
    assert all(p["appProtocol"] == "tcp" for p in service["spec"]["ports"])


def test_head_service_ports_from_container() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "gcs", "containerPort": 6379},
        {"containerPort": 1234},
    ]
    assert _ports(build_head_service(cluster)) == [
        ("1234-port", 1234),
        ("gcs", 6379),
        ("metrics", 8080),
    ]


def test_head_service_type_annotations_and_cluster_ip_switch() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["serviceType"] = "LoadBalancer"
    cluster["spec"]["headServiceAnnotations"] = {"a": "b"}
    service = build_head_service(cluster)
    assert service["spec"]["type"] == "LoadBalancer"
    assert "clusterIP" not in service["spec"]
    assert service["metadata"]["annotations"] == {"a": "b"}
    normal = build_head_service(fixture_p(), BuildOptions(enable_ray_head_cluster_ip_service=True))
    assert "clusterIP" not in normal["spec"]


def test_app_name_label_from_head_template() -> None:
    cluster = fixture_p()
    cluster["spec"]["headGroupSpec"]["template"]["metadata"] = {
        "labels": {"app.kubernetes.io/name": "myapp"}
    }
    service = build_head_service(cluster)
    assert service["spec"]["selector"]["app.kubernetes.io/name"] == "myapp"


def test_custom_head_service_merge() -> None:
    cluster = fixture_p()
    cluster["spec"]["headServiceAnnotations"] = {"a": "b"}
    cluster["spec"]["headGroupSpec"]["headService"] = {
        "metadata": {
            "name": "my-head",
            "namespace": "elsewhere",
            "labels": {"ray.io/cluster": "x", "custom": "y"},
            "annotations": {"a": "user", "c": "d"},
        },
        "spec": {
            "type": "NodePort",
            "selector": {"x": "y"},
            "clusterIP": "10.0.0.5",
            "ports": [{"name": "extra", "port": 9999}],
        },
    }
    service = build_head_service(cluster)
    meta = service["metadata"]
    assert meta["name"] == "my-head"
    assert meta["namespace"] == "default"
    assert meta["labels"] == {**SELECTOR, "custom": "y"}
    assert meta["annotations"] == {"a": "b", "c": "d"}
    assert meta["ownerReferences"] == [OWNER]
    assert service["spec"]["selector"] == SELECTOR
    assert service["spec"]["type"] == "NodePort"
    assert service["spec"]["clusterIP"] == "10.0.0.5"
    assert _ports(service)[0] == ("extra", 9999)
    assert sorted(_ports(service)[1:]) == [
        ("client", 10001),
        ("dashboard", 8265),
        ("gcs-server", 6379),
        ("metrics", 8080),
        ("serve", 8000),
    ]


def test_headless_service() -> None:
    cluster = fixture_p()
    assert not needs_headless_service(cluster)
    cluster["spec"]["workerGroupSpecs"][0]["numOfHosts"] = 2
    assert needs_headless_service(cluster)
    service = build_headless_service(cluster)
    assert service["metadata"]["name"] == "raycluster-sample-headless"
    assert service["metadata"]["labels"] == {"ray.io/headless-worker-svc": "raycluster-sample"}
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": {"ray.io/cluster": "raycluster-sample", "ray.io/node-type": "worker"},
        "type": "ClusterIP",
        "publishNotReadyAddresses": True,
    }


def test_serve_service() -> None:
    cluster = fixture_p()
    service = build_serve_service(cluster)
    assert service["metadata"]["name"] == "raycluster-sample-serve-svc"
    assert service["metadata"]["labels"] == {
        "ray.io/originated-from-cr-name": "raycluster-sample",
        "ray.io/originated-from-crd": "RayCluster",
        "ray.io/serve": "raycluster-sample-serve",
    }
    assert service["spec"] == {
        "selector": {"ray.io/cluster": "raycluster-sample"},
        "ports": [{"name": "serve", "port": 8000}],
    }
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "dashboard", "containerPort": 8265}
    ]
    with pytest.raises(ServiceBuildError):
        build_serve_service(cluster)


def test_ray_service_variants() -> None:
    cluster = fixture_p("rs-abcde")
    ray_service = {"metadata": {"name": "rs", "namespace": "default"}, "spec": {}}
    head = build_head_service_for_ray_service(ray_service, cluster)
    assert head["metadata"]["name"] == "rs-head-svc"
    assert head["metadata"]["labels"] == {
        "ray.io/originated-from-cr-name": "rs",
        "ray.io/originated-from-crd": "RayService",
        "ray.io/node-type": "head",
        "ray.io/identifier": "rs-head",
    }
    assert head["spec"]["selector"]["ray.io/cluster"] == "rs-abcde"
    serve = build_serve_service_for_ray_service(ray_service, cluster)
    assert serve["metadata"]["name"] == "rs-serve-svc"
    assert serve["spec"]["selector"] == {"ray.io/cluster": "rs-abcde", "ray.io/serve": "true"}
    ray_service["spec"]["upgradeStrategy"] = {"type": "NewClusterWithIncrementalUpgrade"}
    assert build_serve_service_for_ray_service(ray_service, cluster)["metadata"]["name"] == (
        "rs-abcde-serve-svc"
    )


def test_ingress() -> None:
    cluster = fixture_p()
    cluster["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx", "foo": "bar"}
    cluster["spec"]["headGroupSpec"]["enableIngress"] = True
    ingress = build_head_ingress(cluster)
    assert ingress["apiVersion"] == "networking.k8s.io/v1"
    assert ingress["metadata"]["name"] == "raycluster-sample-head-ingress"
    assert ingress["metadata"]["labels"] == {
        "ray.io/cluster": "raycluster-sample",
        "ray.io/identifier": "raycluster-sample-head",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    assert ingress["metadata"]["annotations"] == {"foo": "bar"}
    assert ingress["spec"] == {
        "ingressClassName": "nginx",
        "rules": [
            {
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {
                                "service": {
                                    "name": "raycluster-sample-head-svc",
                                    "port": {"number": 8265},
                                }
                            },
                        }
                    ]
                }
            }
        ],
    }
    cluster["spec"]["headGroupSpec"]["ingressOptions"] = {
        "host": "ray.example.com",
        "path": "/ray",
        "pathType": "Exact",
        "tls": [{"hosts": ["ray.example.com"], "secretName": "tls"}],
    }
    spec = build_head_ingress(cluster)["spec"]
    assert spec["rules"][0]["host"] == "ray.example.com"
    assert spec["rules"][0]["http"]["paths"][0]["path"] == "/ray"
    assert spec["rules"][0]["http"]["paths"][0]["pathType"] == "Exact"
    assert spec["tls"] == [{"hosts": ["ray.example.com"], "secretName": "tls"}]


def test_ingress_needs_update_adopts_live_class() -> None:
    cluster = fixture_p()
    desired = build_head_ingress(cluster)
    live = {
        "metadata": {**desired["metadata"], "resourceVersion": "7"},
        "spec": {**desired["spec"], "ingressClassName": "default-class"},
    }
    assert ingress_needs_update(live, desired) is None
    live["spec"]["rules"] = []
    updated = ingress_needs_update(live, desired)
    assert updated is not None
    assert updated["spec"]["ingressClassName"] == "default-class"
    assert updated["spec"]["rules"] == desired["spec"]["rules"]
    assert updated["metadata"]["resourceVersion"] == "7"


def test_route() -> None:
    cluster = fixture_p()
    cluster["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    route = build_head_route(cluster)
    assert route["metadata"]["name"] == "raycluster-sample-head-route"
    assert route["metadata"]["annotations"] == {"kubernetes.io/ingress.class": "nginx"}
    assert route["spec"] == {
        "to": {"kind": "Service", "name": "raycluster-sample-head-svc", "weight": 100},
        "port": {"targetPort": 8265},
        "wildcardPolicy": "None",
    }
