"""OpenShift: with ``route.openshift.io`` served, ``enableIngress`` makes a Route for the
head (KubeRay ``BuildRouteForHeadService``); ``USE_INGRESS_ON_OPENSHIFT=true`` keeps the
Ingress. A minimal Route CRD stands in for OpenShift's API; it is cluster-wide, so it
lives only for this module and detection is per operator (``openshift_api_groups``),
leaving the other modules' operators on plain Kubernetes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kuberay.controllers.raycluster import detect_openshift_api_groups
from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.raycluster.conftest import start_operator
from tests.integration.raycluster.helpers import raycluster, wait_event_reasons

CRD_NAME = "routes.route.openshift.io"
ROUTE_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": "route.openshift.io",
        "scope": "Namespaced",
        "names": {
            "plural": "routes",
            "singular": "route",
            "kind": "Route",
            "listKind": "RouteList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
async def route_api(kubeconfig_path: Path) -> AsyncIterator[frozenset[str]]:
    """The Route CRD installed and served; the OpenShift groups detected from it."""
    client = await Client.from_kubeconfig(kubeconfig_path, qps=0)
    try:
        with contextlib.suppress(Exception):
            await client.create(ROUTE_CRD)

        async def detected() -> frozenset[str] | None:
            groups = await detect_openshift_api_groups(client)
            if "route.openshift.io" not in groups:
                return None
            await client.list("route.openshift.io/v1", "Route", "default")
            return groups

        yield await eventually(detected, timeout=60, message="Route API served")
    finally:
        with contextlib.suppress(NotFound):
            await client.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD_NAME)

        async def gone() -> bool:
            return "route.openshift.io" not in await detect_openshift_api_groups(client)

        with contextlib.suppress(AssertionError):
            await eventually(gone, timeout=60)
        await client.close()


def _dashboard_cluster(name: str, namespace: str) -> dict[str, Any]:
    body = raycluster(name, namespace, replicas=0)
    body["metadata"]["annotations"] = {"team": "ml"}
    body["spec"]["headGroupSpec"]["enableIngress"] = True
    return body


async def test_route_created_on_openshift(
    route_api: frozenset[str], crds_installed: None, kclient: Client, namespace: str
) -> None:
    assert route_api == frozenset({"route.openshift.io"})
    async with start_operator(kclient, namespace, openshift_api_groups=route_api) as op:
        await kclient.create(_dashboard_cluster("osr", namespace))

        async def route() -> dict[str, Any] | None:
            try:
                return await kclient.get(
                    "route.openshift.io/v1", "Route", "osr-head-route", namespace
                )
            except NotFound:
                return None

        made = await eventually(route, timeout=60, message="head Route")
        rc = await kclient.get("ray.io/v1", "RayCluster", "osr", namespace)
        assert made["metadata"]["labels"] == {
            "ray.io/cluster": "osr",
            "ray.io/identifier": "osr-head",
            "app.kubernetes.io/name": "kuberay",
            "app.kubernetes.io/created-by": "kuberay-operator",
        }
        assert made["metadata"]["annotations"] == {"team": "ml"}
        refs = made["metadata"]["ownerReferences"]
        assert [(r["kind"], r["uid"], r["controller"]) for r in refs] == [
            ("RayCluster", rc["metadata"]["uid"], True)
        ]
        assert made["spec"] == {
            "to": {"kind": "Service", "name": "osr-head-svc", "weight": 100},
            "port": {"targetPort": 8265},
            "wildcardPolicy": "None",
        }
        ingresses, _ = await kclient.list_all("networking.k8s.io/v1", "Ingress", namespace)
        assert ingresses == []
        await wait_event_reasons(kclient, namespace, "osr", {"CreatedRoute"})
        # Routes are watched: a deleted Route comes back without any change to the cluster.
        await eventually(
            lambda: op.manager.cache.get(
                "route.openshift.io/v1", "Route", namespace, "osr-head-route"
            ),
            timeout=60,
            message="Route in the operator's cache",
        )
        await kclient.delete("route.openshift.io/v1", "Route", "osr-head-route", namespace)
        await asyncio.sleep(0.5)
        await eventually(route, timeout=60, message="Route recreated")


async def test_use_ingress_on_openshift(
    route_api: frozenset[str], crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(
        kclient,
        namespace,
        env={"USE_INGRESS_ON_OPENSHIFT": "true"},
        openshift_api_groups=route_api,
    ):
        await kclient.create(_dashboard_cluster("osi", namespace))

        async def ingress() -> dict[str, Any] | None:
            try:
                return await kclient.get(
                    "networking.k8s.io/v1", "Ingress", "osi-head-ingress", namespace
                )
            except NotFound:
                return None

        await eventually(ingress, timeout=60, message="Ingress instead of a Route")
        routes, _ = await kclient.list_all("route.openshift.io/v1", "Route", namespace)
        assert routes == []
