"""Trust boundaries part 1, item 2 (Names): a RayJob whose ``authOptions.secretName`` smuggles
a second HTTP request (CR LF, then a DELETE of a ConfigMap in another namespace) is
``ValidationFailed`` naming the field, with a Warning Event; the operator sends no request
with the name, the other namespace's ConfigMap survives, and the user's spec is untouched."""

from __future__ import annotations

import asyncio
import uuid

from kuberay.kube import Client
from tests.integration.apiserver_metrics import apiserver_requests
from tests.integration.rayjob.conftest import Operator
from tests.integration.rayjob.helpers import rayjob, wait_events, wait_state


async def test_a_smuggling_secret_name_is_validation_failed_and_sends_nothing(
    operator: Operator, kclient: Client, namespace: str
) -> None:
    other = f"canary-{uuid.uuid4().hex[:8]}"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    canary = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": other},
    }
    await kclient.create(canary)
    hostile = (
        f"x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/{other}/configmaps/c HTTP/1.1"
        "\r\nX-Pad: y"
    )
    body = rayjob("smuggle", namespace, submissionMode="HTTPMode")
    body["spec"]["rayClusterSpec"]["authOptions"] = {"mode": "token", "secretName": hostile}
    secret_gets = await apiserver_requests(kclient, resource="secrets", verb="GET")
    cm_deletes = await apiserver_requests(kclient, resource="configmaps", verb="DELETE")
    await kclient.create(body)

    job = await wait_state(kclient, namespace, "smuggle", "ValidationFailed")
    assert job["status"]["reason"] == "ValidationFailed"
    assert "spec.rayClusterSpec.authOptions.secretName" in job["status"]["message"]
    assert "\r" not in job["status"]["message"]
    events = await wait_events(kclient, namespace, "smuggle", {"InvalidRayJobSpec"})
    warning = next(e for e in events if e["reason"] == "InvalidRayJobSpec")
    assert warning["type"] == "Warning"
    assert "authOptions.secretName" in warning["note"]

    await asyncio.sleep(2.0)  # let any (wrong) follow-up reconcile happen
    assert (await kclient.get("v1", "ConfigMap", "c", other))["metadata"]["name"] == "c"
    clusters, _ = await kclient.list_all("ray.io/v1", "RayCluster", namespace)
    assert clusters == []
    assert await apiserver_requests(kclient, resource="secrets", verb="GET") == secret_gets
    live = await kclient.get("ray.io/v1", "RayJob", "smuggle", namespace)
    assert live["spec"]["rayClusterSpec"]["authOptions"]["secretName"] == hostile
    assert await apiserver_requests(kclient, resource="configmaps", verb="DELETE") == cm_deletes
