"""The API server's chart and kustomize tree on a real kube-apiserver. The chart's objects are
applied for real into fresh namespaces and the apiserver's own authorizer (SubjectAccessReview)
says what the server's ServiceAccount may do: nothing in caller mode, KubeRay's rules in
service-account mode (cluster-wide, or in the release namespace only with
singleNamespaceInstall). Other renderings and both kustomize trees are applied with a
server-side dry run (nothing stored). Cluster-scoped objects carry names unique to the test
and are deleted afterwards."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kuberay.apiserver.options import CALLER, SERVICE_ACCOUNT, parse_options
from kuberay.kube import Client
from tests.integration.test_kustomize_install import kustomize, needs_kubectl
from tests.integration.test_manifests import (  # noqa: F401  (namespaces: a fixture)
    _move,
    dry_run_all,
    namespaces,
)
from tests.unit.manifests.manifests_expected import (
    APISERVER_DIR,
    APISERVER_RULES,
    APISERVER_SERVICE_ACCESS_RULES,
    find,
    rules_of,
)
from tests.unit.manifests.ray_cluster_chart_cases import needs_helm
from tests.unit.manifests.test_apiserver_manifests import render

FIELD_MANAGER = "kuberay-tests"
SA = "kuberay-apiserver"
#: (verb, group, resource, subresource) of each rule KubeRay's chart grants its server
KUBERAY_GRANTS = [
    ("list", "", "namespaces", ""),
    ("get", "events.k8s.io", "events", ""),
    ("delete", "", "configmaps", ""),
    ("create", "ray.io", "rayjobs", ""),
    ("patch", "ray.io", "rayservices", ""),
    ("watch", "", "services", ""),
    ("get", "", "services", "proxy"),
]
#: never granted, in either mode
NEVER = [
    ("list", "", "pods", ""),
    ("get", "", "secrets", ""),
    ("create", "events.k8s.io", "events", ""),
    ("impersonate", "", "users", ""),
]


async def _may(
    client: Client, namespace: str, check: tuple[str, str, str, str], where: str | None
) -> bool:
    """Whether the server's ServiceAccount in ``namespace`` may do ``check`` in ``where``
    (None: cluster-wide), as the apiserver's authorizer answers."""
    verb, group, resource, subresource = check
    attributes = {"verb": verb, "group": group, "resource": resource}
    if subresource:
        attributes["subresource"] = subresource
    if where and resource != "namespaces":
        attributes["namespace"] = where
    review = await client.create(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": f"system:serviceaccount:{namespace}:{SA}",
                "groups": [
                    "system:serviceaccounts",
                    f"system:serviceaccounts:{namespace}",
                    "system:authenticated",
                ],
                "resourceAttributes": attributes,
            },
        }
    )
    return bool(review["status"].get("allowed"))


async def _apply_all(client: Client, objs: list[dict[str, Any]]) -> None:
    for obj in objs:
        await client.apply(obj, field_manager=FIELD_MANAGER)


async def _delete_cluster_scoped(client: Client, objs: list[dict[str, Any]]) -> None:
    for obj in objs:
        if obj["kind"] in ("ClusterRole", "ClusterRoleBinding"):
            with contextlib.suppress(Exception):
                await client.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])


@needs_helm
async def test_chart_caller_mode_grants_the_server_nothing(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    ns, other = await namespaces(), await namespaces()
    objs = render({}, tmp_path, ns)
    await _apply_all(kclient, objs)
    assert await kclient.get("v1", "ServiceAccount", SA, ns)
    for check in KUBERAY_GRANTS + NEVER:
        for where in (ns, other):
            assert not await _may(kclient, ns, check, where), (check, where)


@needs_helm
async def test_chart_service_account_mode_grants_kuberay_s_rules(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    ns, other = await namespaces(), await namespaces()
    name = f"t-api-{uuid.uuid4().hex[:8]}"  # the ClusterRoles' names: unique to this test
    objs = render({"authMode": SERVICE_ACCOUNT, "name": name}, tmp_path, ns)
    try:
        await _apply_all(kclient, objs)
        stored = await kclient.get("rbac.authorization.k8s.io/v1", "ClusterRole", name)
        assert rules_of(stored) == APISERVER_RULES
        access = await kclient.get(
            "rbac.authorization.k8s.io/v1", "ClusterRole", f"{name}-service-access"
        )
        assert rules_of(access) == APISERVER_SERVICE_ACCESS_RULES
        for check in KUBERAY_GRANTS:
            for where in (ns, other):
                assert await _may(kclient, ns, check, where), (check, where)
        for check in NEVER:
            assert not await _may(kclient, ns, check, other), check
        # the Service proxy is granted for reading only, as in KubeRay's chart
        assert not await _may(kclient, ns, ("create", "", "services", "proxy"), other)
    finally:
        await _delete_cluster_scoped(kclient, objs)


@needs_helm
async def test_chart_single_namespace_install_grants_the_release_namespace_only(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    ns, other = await namespaces(), await namespaces()
    values = {"authMode": SERVICE_ACCOUNT, "singleNamespaceInstall": True}
    objs = render(values, tmp_path, ns)
    assert not [o for o in objs if o["kind"].startswith("Cluster")]
    await _apply_all(kclient, objs)
    namespaced = [c for c in KUBERAY_GRANTS if c[2] != "namespaces"]
    for check in namespaced:
        assert await _may(kclient, ns, check, ns), check
        assert not await _may(kclient, ns, check, other), check


@needs_helm
async def test_chart_with_tls_ingress_and_kuberay_ports_dry_run(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    ns = await namespaces()
    values = {
        "tls": {"enabled": True, "secretName": "api-cert"},
        "containerPort": [
            {"name": "http", "containerPort": 8888, "protocol": "TCP"},
            {"name": "grpc", "containerPort": 8887, "protocol": "TCP"},
        ],
        "service": {
            "type": "NodePort",
            "ports": [{"name": "http", "port": 8888, "targetPort": 8888}],
        },
        "ingress": {
            "enabled": True,
            "annotations": {"nginx.ingress.kubernetes.io/backend-protocol": "HTTPS"},
            "hosts": [{"host": "api.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
            "tls": [{"hosts": ["api.example.com"], "secretName": "api-ingress-cert"}],
        },
        "route": {"enabled": True},
    }
    objs = render(values, tmp_path, ns)
    applied = await dry_run_all(kclient, objs)  # a Route is not served here: only rendered
    assert applied == {"ServiceAccount", "Service", "Deployment", "Ingress"}


@needs_kubectl
async def test_kustomize_trees_build_and_dry_run_apply(
    kclient: Client,
    namespaces: Callable[[], Any],  # noqa: F811
) -> None:
    ns = await namespaces()
    caller = kustomize(APISERVER_DIR)
    assert sorted(o["kind"] for o in caller) == ["Deployment", "Service", "ServiceAccount"]
    deployment = find(caller, "Deployment", "kuberay-apiserver")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert parse_options(container["args"]).auth_mode == CALLER
    assert await dry_run_all(kclient, _move(caller, ns)) == {
        "ServiceAccount",
        "Service",
        "Deployment",
    }

    sa_mode = kustomize(APISERVER_DIR / "service_account_mode")
    deployment = find(sa_mode, "Deployment", "kuberay-apiserver")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert parse_options(container["args"]).auth_mode == SERVICE_ACCOUNT
    assert rules_of(find(sa_mode, "ClusterRole", "kuberay-apiserver")) == APISERVER_RULES
    access = find(sa_mode, "ClusterRole", "kuberay-apiserver-service-access")
    assert rules_of(access) == APISERVER_SERVICE_ACCESS_RULES
    moved = _move(sa_mode, ns)
    for binding in (o for o in moved if o["kind"] == "ClusterRoleBinding"):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": SA, "namespace": ns}]
    assert await dry_run_all(kclient, moved) == {
        "ServiceAccount",
        "Service",
        "Deployment",
        "ClusterRole",
        "ClusterRoleBinding",
    }
