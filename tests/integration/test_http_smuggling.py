"""The HTTP layer beneath validation, on a real kube-apiserver: a name, namespace or header
value that would split a request is refused before a byte is sent, whatever calls the client
(a future code path that forgets to validate, a library user). A canary ConfigMap in another
namespace must survive every attempt, and the apiserver must count no DELETE of ConfigMaps."""

from __future__ import annotations

import uuid

import pytest

from kuberay.kube import Client, KubeError
from tests.integration.apiserver_metrics import apiserver_requests

pytestmark = pytest.mark.integration


def smuggle(other: str) -> str:
    return (
        f"x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/{other}/configmaps/c HTTP/1.1"
        "\r\nX-Pad: y"
    )


async def test_a_smuggled_request_in_a_name_namespace_or_header_never_reaches_the_apiserver(
    kclient: Client, namespace: str
) -> None:
    other = f"canary-{uuid.uuid4().hex[:8]}"
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    await kclient.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": other}}
    )
    deletes = await apiserver_requests(kclient, resource="configmaps", verb="DELETE")
    hostile = smuggle(other)
    attempts = [
        kclient.get("v1", "Secret", hostile, namespace),
        kclient.delete("v1", "Secret", hostile, namespace),
        kclient.get("v1", "Secret", "s", hostile),
        kclient.list("v1", "Pod", namespace, label_selector=hostile),  # a query: encoded
        kclient.get("v1", "ConfigMap", f"../../{other}/configmaps/c", namespace),
    ]
    outcomes = []
    for attempt in attempts:
        try:
            await attempt
            outcomes.append("answered")
        except KubeError as exc:
            outcomes.append(type(exc).__name__)
    # names and namespaces are refused before sending; the selector is sent, encoded, and the
    # apiserver refuses it as a selector (400), never as a second request
    assert outcomes[:3] == ["InvalidPathSegment"] * 3
    assert outcomes[3] == "BadRequest"
    assert outcomes[4] == "InvalidPathSegment"
    # the same value as a header (an auth token, say) through the apiserver's pool
    with pytest.raises(Exception) as refused:
        await kclient.pool.request("GET", "/version", headers=[("X-Ray-Authorization", hostile)])
    assert "header 'X-Ray-Authorization'" in str(refused.value)
    assert (await kclient.get("v1", "ConfigMap", "c", other))["metadata"]["name"] == "c"
    assert await apiserver_requests(kclient, resource="configmaps", verb="DELETE") == deletes
    await kclient.delete("v1", "Namespace", other)
