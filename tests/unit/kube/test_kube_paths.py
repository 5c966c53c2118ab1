"""Names become URL path segments only once checked and escaped (Trust boundaries part 1,
item 2): a hostile name is refused before any request is sent, and a name with characters
that need escaping stays one segment."""

from __future__ import annotations

import pytest
from aiohttp import web

from kuberay.controllers.dashboard.client import client_at
from kuberay.controllers.dashboard.errors import DashboardError
from kuberay.http import OriginPools
from kuberay.kube import KubeError, ResourceInfo
from kuberay.kube.paths import InvalidPathSegment, check_segment, has_control, segment
from tests.unit.kube.test_kube_client_http import http_server, make_client

SMUGGLE = (
    "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/other/configmaps/c HTTP/1.1\r\nX-Pad: y"
)
HOSTILE = [".", "..", "a/b", "a%2fb", "a\r\nb", SMUGGLE, "a b", "a\x00b", "a\tb", "", "n" * 65536]
SECRETS = ResourceInfo("", "v1", "Secret", "secrets", True)


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
@pytest.mark.parametrize("kind", ["name", "namespace", "subresource"])
def test_a_hostile_segment_is_refused_naming_the_segment(kind: str, value: str) -> None:
    with pytest.raises(InvalidPathSegment) as info:
        check_segment(kind, value)
    message = str(info.value)
    assert message.startswith(f"invalid {kind} ")
    assert "\r" not in message and "\n" not in message and "\x00" not in message
    assert len(message) < 300  # a truncated repr, never the whole 64 KiB
    assert isinstance(info.value, ValueError) and isinstance(info.value, KubeError)


def test_whitespace_and_control_characters_are_found_in_any_position() -> None:
    ascii_refused = [chr(c) for c in range(128) if chr(c).isspace() or not chr(c).isprintable()]
    assert len(ascii_refused) == 34  # \x00-\x1f, space, \x7f
    refused = [*ascii_refused, *"\x85\xa0\u2028\u2029\u200b\ufeff"]
    for ch in refused:
        for value in (ch, f"rc-{ch}", f"{ch}rc", f"r{ch}c", f"é{ch}"):
            assert has_control(value), repr(value)
    for value in ("rc-0001", "a.b_c~d:e@f", "é", "名前", "!#$&'()*+,;=", "\x7e"):
        assert not has_control(value), repr(value)


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_resource_paths_refuse_hostile_names_namespaces_and_subresources(value: str) -> None:
    with pytest.raises(InvalidPathSegment, match=r"^invalid name"):
        SECRETS.path("ns", value)
    if value:  # an empty namespace means "all namespaces"
        with pytest.raises(InvalidPathSegment, match=r"^invalid namespace"):
            SECRETS.path(value, "ok")
        with pytest.raises(InvalidPathSegment, match=r"^invalid subresource"):
            SECRETS.path("ns", "ok", value)


def test_names_that_need_escaping_stay_one_segment() -> None:
    rbac = ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False)
    assert rbac.path(None, "system:controller:x@y") == (
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Acontroller%3Ax%40y"
    )
    assert (
        SECRETS.path("ns", "my-secret", "status")
        == "/api/v1/namespaces/ns/secrets/my-secret/status"
    )
    assert segment("name", "a?b#c") == "a%3Fb%23c"
    assert segment("name", "ü") == "%C3%BC"


async def test_the_client_sends_nothing_for_a_hostile_name() -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.json_response({"kind": "Secret", "apiVersion": "v1", "metadata": {}})

    async with http_server(handler) as port:
        client = make_client(port)
        try:
            for value in HOSTILE:
                with pytest.raises(InvalidPathSegment):
                    await client.get("v1", "Secret", value, "ns")
                with pytest.raises(InvalidPathSegment):
                    await client.delete("v1", "ConfigMap", value, "ns")
                with pytest.raises(InvalidPathSegment):
                    await client.patch("v1", "ConfigMap", "ok", {}, value or "..")
            await client.get("v1", "ConfigMap", "a:b", "ns")
        finally:
            await client.close()
    assert seen == ["/api/v1/namespaces/ns/configmaps/a%3Ab"]


async def test_the_dashboard_client_refuses_a_job_id_that_is_not_one_segment() -> None:
    calls: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(request.raw_path)
        return web.json_response({"job_id": "x", "status": "RUNNING"})

    pools = OriginPools()
    try:
        async with http_server(handler) as port:
            client = client_at(pools, f"http://127.0.0.1:{port}")
            for job_id in ("..", "a/b", "a\r\nb", "%2e%2e"):
                with pytest.raises(DashboardError, match="invalid job id"):
                    await client.get_job_info(job_id)
            await client.get_job_info("raysubmit_1")
    finally:
        await pools.close()
    assert calls == ["/api/jobs/raysubmit_1"]
