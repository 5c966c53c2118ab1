"""No user-written string becomes a request: the property that closes the smuggling finding.

A namespace user writes these fields, and the operator (with its own credentials) later puts
each into a request line, a path or a header:

* an object's **name** and **namespace** (every ``Client`` verb: the smuggling RayJob's
  ``authOptions.secretName`` became the name of a Secret GET; ``clusterSelector``'s cluster
  name a RayCluster GET; the head Service name a Service GET);
* **label and field selectors** built from user values (query strings);
* ``rayClusterSpec.authOptions.secretName`` (the dashboard factory's Secret read);
* ``headGroupSpec.headService.metadata.name`` and the dashboard port's name (the apiserver
  Service-proxy path in ``--use-kubernetes-proxy`` mode);
* a RayJob's ``jobId`` (the dashboard's ``/api/jobs/<id>``, ``/stop``, ``DELETE``);
* the ``auth_token`` key of the cluster's auth Secret (the ``x-ray-authorization`` header).

Hypothesis drives strings made of CR, LF, NUL, spaces, tabs, ``/``, ``.``, ``..``, ``../``,
``%2e%2e``, ``%0d%0a``, ``%2F``, ``?``, ``#``, Unicode line separators, a smuggled request
line, and 64 KiB values through each of them, against an h11 server that records every
request it reads. The property, for each field: either nothing is sent (the client refuses
with an error naming the field), or exactly the one expected request arrives, with the value
percent-encoded inside its own path segment (or its own query parameter) and every other
segment as the code wrote it: no extra request, no extra or missing segment, no ``.``/``..``.
"""

from __future__ import annotations

import asyncio
import base64
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from kuberay.controllers.dashboard import DashboardError
from kuberay.controllers.dashboard.client import DashboardClient
from kuberay.controllers.dashboard.factory import DashboardClientFactory
from kuberay.controllers.dashboard.target import DashboardTarget
from kuberay.http import ConnectionPool
from kuberay.kube import Client, KubeError
from kuberay.kube.restconfig import RestConfig
from tests.unit.security.recording_server import RecordingServer, recording_server

SMUGGLED = "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api/v1/namespaces/other/configmaps/c HTTP/1.1"
PIECES = [
    "\r\n",
    "\r",
    "\n",
    "\x00",
    " ",
    "\t",
    "/",
    ".",
    "..",
    "../",
    "%2e%2e",
    "%2E%2E/",
    "%0d%0a",
    "%2F",
    "?",
    "#",
    ";",
    ":",
    "@",
    "\u2028",
    "\x85",
    "\u00e9",
    "\x7f",
    SMUGGLED,
]
hostile = st.one_of(
    st.lists(
        st.one_of(st.sampled_from(PIECES), st.text(alphabet="ab-.0", max_size=4)),
        min_size=1,
        max_size=6,
    ).map("".join),
    st.text(max_size=40),
    st.just("a" * 65536),
    st.just("a\r\n" * 21846),
)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with recording_server() as started:
        yield started


def run(server: RecordingServer, act: Callable[[], Awaitable[Any]]) -> tuple[list[Any], bool]:
    """Run ``act``; the requests it made the server read, and whether it raised (a refusal or
    the server's 404, both expected here)."""
    before = len(server.snapshot())

    async def go() -> bool:
        try:
            await act()
        except (KubeError, DashboardError, ValueError):
            return True
        return False

    raised = asyncio.run(go())
    return server.snapshot()[before:], raised


def assert_in_place(
    requests: list[tuple[bytes, bytes]],
    method: bytes,
    shape: list[str | None],
    value: str,
    *,
    decode: Callable[[str], str] = urllib.parse.unquote,
) -> None:
    """Nothing was sent, or one ``method`` request whose path has exactly ``shape``'s
    segments: literal ones as given, and at ``None`` a segment that decodes to ``value``."""
    if not requests:
        return
    assert len(requests) == 1, f"one call sent {len(requests)} requests: {requests!r}"
    sent_method, target = requests[0]
    assert sent_method == method
    path = target.decode("ascii").split("?", 1)[0]
    segments = path.split("/")[1:]
    assert len(segments) == len(shape), f"{path!r} does not have the shape {shape!r}"
    for seg, want in zip(segments, shape, strict=True):
        assert seg not in (".", "..") and urllib.parse.unquote(seg) not in (".", "..")
        if want is None:
            assert decode(seg) == value
        else:
            assert seg == want


def client(server: RecordingServer) -> Client:
    return Client(RestConfig(server.url), max_retries=0)


async def closing(c: Client, act: Awaitable[Any]) -> Any:
    try:
        return await act
    finally:
        await c.close()


@SETTINGS
@given(value=hostile)
@example(value="..")
@example(value=".")
@example(value="%2e%2e")
@example(value="a/../../secrets/x")
@example(value=SMUGGLED)
def test_an_object_name_stays_inside_its_segment(server: RecordingServer, value: str) -> None:
    for verb, method in (("get", b"GET"), ("delete", b"DELETE")):

        def act(verb: str = verb) -> Awaitable[Any]:
            c = client(server)
            return closing(c, getattr(c, verb)("v1", "ConfigMap", value, "team-a"))

        sent, _ = run(server, act)
        assert_in_place(
            sent, method, ["api", "v1", "namespaces", "team-a", "configmaps", None], value
        )


@SETTINGS
@given(value=hostile)
@example(value="..")
@example(value=SMUGGLED)
def test_a_namespace_stays_inside_its_segment(server: RecordingServer, value: str) -> None:
    assume(value)  # no namespace: the cluster-wide path, as client-go builds it

    def act() -> Awaitable[Any]:
        c = client(server)
        return closing(c, c.get("v1", "ConfigMap", "cm", value))

    sent, _ = run(server, act)
    assert_in_place(sent, b"GET", ["api", "v1", "namespaces", None, "configmaps", "cm"], value)


@SETTINGS
@given(value=hostile)
@example(value="ray.io/cluster=a&fieldSelector=x")
@example(value=SMUGGLED)
def test_a_selector_stays_inside_its_query_parameter(server: RecordingServer, value: str) -> None:
    def act() -> Awaitable[Any]:
        c = client(server)
        return closing(c, c.list("v1", "Pod", "team-a", label_selector=value, field_selector=value))

    sent, _ = run(server, act)
    assert_in_place(sent, b"GET", ["api", "v1", "namespaces", "team-a", "pods"], value)
    if sent and value:
        query = urllib.parse.parse_qs(sent[0][1].decode("ascii").split("?", 1)[1])
        assert query["labelSelector"] == [value] and query["fieldSelector"] == [value]


@SETTINGS
@given(value=hostile)
@example(value="..")
@example(value="../../api/v1/namespaces/kube-system/secrets/x")
@example(value=SMUGGLED)
def test_a_job_id_stays_inside_its_segment_of_the_dashboard_path(
    server: RecordingServer, value: str
) -> None:
    calls: list[tuple[str, bytes, list[str | None]]] = [
        ("get_job_info", b"GET", ["api", "jobs", None]),
        ("stop_job", b"POST", ["api", "jobs", None, "stop"]),
        ("delete_job", b"DELETE", ["api", "jobs", None]),
    ]
    for name, method, shape in calls:

        async def act(name: str = name) -> Any:
            pool = ConnectionPool(server.url)
            try:
                return await getattr(DashboardClient(pool, timeout=5), name)(value)
            finally:
                await pool.close()

        sent, _ = run(server, act)
        assert_in_place(sent, method, shape, value)


def ray_cluster(auth: dict[str, Any] | None, head_service: str | None) -> dict[str, Any]:
    head: dict[str, Any] = {"template": {"spec": {"containers": []}}}
    if head_service is not None:
        head["headService"] = {"metadata": {"name": head_service}}
    spec: dict[str, Any] = {"headGroupSpec": head}
    if auth is not None:
        spec["authOptions"] = auth
    return {"metadata": {"name": "rc", "namespace": "team-a"}, "spec": spec}


async def through_proxy(server: RecordingServer, cluster: dict[str, Any]) -> Any:
    kube = client(server)
    factory = DashboardClientFactory(kube, use_kubernetes_proxy=True, environ={})
    try:
        dashboard = await factory.client_for(DashboardTarget.from_cluster(cluster))
        return await dashboard.get_job_info("j")
    finally:
        await factory.close()
        await kube.close()


@SETTINGS
@given(value=hostile)
@example(value="..")
@example(value=SMUGGLED)
def test_an_auth_secret_name_stays_inside_its_segment(server: RecordingServer, value: str) -> None:
    assume(value)  # an empty secretName means the default one, <cluster>
    cluster = ray_cluster({"mode": "token", "secretName": value}, None)
    sent, raised = run(server, lambda: through_proxy(server, cluster))
    assert raised  # the fake apiserver has no Secret: the cluster is unreachable, named
    assert_in_place(sent, b"GET", ["api", "v1", "namespaces", "team-a", "secrets", None], value)


@SETTINGS
@given(value=hostile)
@example(value="..")
@example(value="x:dashboard/proxy/../../../secrets")
@example(value=SMUGGLED)
def test_a_head_service_name_stays_inside_the_service_proxy_segment(
    server: RecordingServer, value: str
) -> None:
    assume(value)  # an empty name means the default one, <cluster>-head-svc
    cluster = ray_cluster(None, value)
    sent, _ = run(server, lambda: through_proxy(server, cluster))
    shape = ["api", "v1", "namespaces", "team-a", "services", None, "proxy", "api", "jobs", "j"]
    assert_in_place(sent, b"GET", shape, f"{value}:dashboard")


@SETTINGS
@given(token=hostile)
@example(token="t\r\nX-Evil: 1")
@example(token=SMUGGLED)
def test_an_auth_token_never_splits_a_header(token: str) -> None:
    """The token of the user's auth Secret becomes ``x-ray-authorization``: a token that a
    header cannot carry is refused where it is read, and no request reaches the dashboard."""
    secret = {
        "metadata": {"name": "rc", "namespace": "team-a"},
        "data": {"auth_token": base64.b64encode(token.encode("utf-8", "surrogatepass")).decode()},
    }
    with recording_server() as server:

        async def act() -> Any:
            kube = client(server)
            factory = DashboardClientFactory(
                kube,
                use_kubernetes_proxy=True,
                environ={},
                cached_secret=lambda ns, name: secret,
            )
            try:
                target = DashboardTarget.from_cluster(ray_cluster({"mode": "token"}, None))
                return await (await factory.client_for(target)).get_job_info("j")
            finally:
                await factory.close()
                await kube.close()

        sent, _ = run(server, act)
    # one request at most (the service-proxy GET), never a second one smuggled in a header
    assert len(sent) <= 1
    if any(c in token for c in "\r\n\x00"):
        assert sent == []
