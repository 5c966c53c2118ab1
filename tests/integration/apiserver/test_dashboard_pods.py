"""The dashboard's Pods route on the real apiserver, in caller mode: a caller who may not
read the RayCluster gets the apiserver's 403 and nothing else; one who may read it but not
list Pods sees that cluster's pods (listed with the server's rights) and no other's; a
server without Pod rights answers the 403 that says whom to grant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kuberay.apiserver.dashboard.pods import NO_POD_RIGHTS
from kuberay.kube import Client
from kuberay.kube.kubeconfig import load
from kuberay.kube.restconfig import RestConfig

from .bodies import raycluster
from .conftest import StartServer, grant, service_account_token

pytestmark = pytest.mark.usefixtures("crds_installed")

GET_CLUSTERS = [{"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": ["get"]}]


def _pod(name: str, namespace: str, cluster: str, node_type: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "ray.io/cluster": cluster,
                "ray.io/node-type": node_type,
                "ray.io/group": "headgroup" if node_type == "head" else "small",
            },
        },
        "spec": {
            "containers": [
                {"name": "ray", "image": "ray:x", "env": [{"name": "TOKEN", "value": "s3cr3t"}]}
            ]
        },
    }


async def _get(http: aiohttp.ClientSession, url: str, token: str) -> tuple[int, Any]:
    async with http.get(url, headers={"Authorization": f"Bearer {token}"}) as resp:
        return resp.status, await resp.json()


async def test_pods_of_one_cluster_for_a_caller_without_pod_rights(
    start_apiserver: StartServer, kclient: Client, namespace: str, kubeconfig_path: Path
) -> None:
    reader = await service_account_token(kclient, namespace, "reader")
    nobody = await service_account_token(kclient, namespace, "nobody")
    await grant(kclient, namespace, "reader", GET_CLUSTERS)
    await kclient.create(raycluster("rc", namespace))
    for pod in (
        _pod("rc-head", namespace, "rc", "head"),
        _pod("rc-worker", namespace, "rc", "worker"),
        _pod("other-head", namespace, "other", "head"),
    ):
        await kclient.create(pod)
    url = await start_apiserver()  # the server acts as the admin kubeconfig's user
    pods = f"{url}/dashboard/api/namespaces/{namespace}/rayclusters/rc/pods"
    async with aiohttp.ClientSession() as http:
        status, body = await _get(http, pods, nobody)
        assert (status, body["kind"], body["code"]) == (403, "Status", 403)
        assert "rayclusters" in body["message"]
        status, body = await _get(http, pods, reader)
        assert status == 200
        assert [(p["name"], p["nodeType"], p["group"]) for p in body["items"]] == [
            ("rc-head", "head", "headgroup"),
            ("rc-worker", "worker", "small"),
        ]
        assert body["items"][0]["phase"] == "Pending"
        assert body["items"][0]["restarts"] == 0
        assert "s3cr3t" not in str(body)
        status, body = await _get(http, pods.replace("/rc/", "/absent/"), reader)
        assert status == 404

    # a server whose own identity may list nothing
    admin = load(str(kubeconfig_path))
    powerless = RestConfig(
        admin.host,
        ssl_ca_cert=admin.ssl_ca_cert,
        ca_data=admin.ca_data,
        verify_ssl=admin.verify_ssl,
        token=nobody,
    )
    bare = await start_apiserver(config=powerless)
    async with aiohttp.ClientSession() as http:
        status, body = await _get(http, pods.replace(url, bare), reader)
    assert (status, body["message"]) == (403, NO_POD_RIGHTS)
