"""The router under hostile paths (a fuzz test): whatever a client sends, an accepted path
reaches the kube-apiserver inside the route it was accepted for, with no ``.``/``..`` or
encoded slash, and a refused one is refused before any route sees it."""

from __future__ import annotations

import urllib.parse

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kuberay.apiserver import routes
from kuberay.apiserver.request_path import BadPath, encode, parse_path

PIECES = st.sampled_from(
    [
        "apis", "ray.io", "v1", "namespaces", "ns", "rayclusters", "c", "api", "services",
        "svc", "proxy", "events", "events.k8s.io", "pods", "secrets", "..", ".", "%2e%2e",
        "%2E", "%2F", "%2f", "%252F", "%0d%0a", "%00", " ", "%20", "a%3Ab", "http:svc:80",
        "", "~", "%C0%AE", "%ff", "\u2028", "x" * 300,
    ]
)  # fmt: skip
RAW_PATHS = st.lists(PIECES, max_size=10).map(lambda parts: "/" + "/".join(parts))


def _decoded_segments(path: str) -> list[str]:
    return [urllib.parse.unquote(s) for s in path.split("/")[1:]]


@settings(max_examples=800, deadline=None)
@given(raw=RAW_PATHS, method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]))
@example(raw="/apis/ray.io/v1/namespaces/ns/rayclusters/../../../../api/v1/secrets", method="GET")
@example(raw="/api/v1/namespaces/ns/services/svc/proxy/%2F..%2F..%2Fsecrets", method="GET")
@example(raw="/apis/ray.io/v1/namespaces/ns%2F..%2F..%2Fapi/rayclusters", method="POST")
def test_an_accepted_path_stays_in_its_route(raw: str, method: str) -> None:
    try:
        path = parse_path(raw)
    except BadPath as exc:
        assert raw not in str(exc)  # the refusal never echoes the path
        return
    sent = encode(path.segments, path.trailing_slash)
    segments = _decoded_segments(sent.rstrip("/")) if sent != "/" else []
    assert all(s not in ("", ".", "..") and "/" not in s for s in segments)
    assert tuple(segments) == path.segments  # what is sent is what was routed
    route = routes.route(method, path)
    if route.name == routes.RAY:
        assert sent.startswith("/apis/ray.io/v1")
    elif route.name == routes.EVENTS:
        assert segments[:4] == ["apis", "events.k8s.io", "v1", "namespaces"]
        assert segments[5:] == ["events"] and method in ("GET", "HEAD")
    elif route.name == routes.SERVICE:
        assert segments[:3] == ["api", "v1", "namespaces"] and segments[4] == "services"
        assert segments[6] == "proxy"
    else:
        assert route.name in (routes.NOT_FOUND, routes.METHOD_NOT_ALLOWED)


@pytest.mark.parametrize(
    ("method", "raw", "name", "template_kind"),
    [
        ("POST", "/apis/ray.io/v1/namespaces/ns/rayclusters", routes.RAY, "RayCluster"),
        ("PUT", "/apis/ray.io/v1/namespaces/ns/rayjobs/j", routes.RAY, "RayJob"),
        ("POST", "/apis/ray.io/v1/namespaces/ns/rayservices", routes.RAY, "RayService"),
        ("PATCH", "/apis/ray.io/v1/namespaces/ns/rayclusters/c", routes.RAY, None),
        ("PUT", "/apis/ray.io/v1/namespaces/ns/rayclusters/c/status", routes.RAY, None),
        ("GET", "/apis/ray.io/v1/rayclusters", routes.RAY, None),
        ("GET", "/apis/ray.io/v1", routes.RAY, None),
        ("GET", "/apis/events.k8s.io/v1/namespaces/ns/events", routes.EVENTS, None),
        ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", routes.METHOD_NOT_ALLOWED, None),
        ("GET", "/apis/events.k8s.io/v1/events", routes.NOT_FOUND, None),
        ("GET", "/api/v1/namespaces/ns/services/svc/proxy", routes.SERVICE, None),
        ("POST", "/api/v1/namespaces/ns/services/svc/proxy/api/jobs/", routes.SERVICE, None),
        ("GET", "/api/v1/namespaces/ns/services/svc", routes.NOT_FOUND, None),
        ("GET", "/api/v1/namespaces/ns/pods", routes.NOT_FOUND, None),
        ("GET", "/apis/apps/v1/deployments", routes.NOT_FOUND, None),
    ],
)
def test_routes_are_upstreams(method: str, raw: str, name: str, template_kind: str | None) -> None:
    got = routes.route(method, parse_path(raw))
    assert (got.name, got.template_kind) == (name, template_kind)


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        ("svc", ("", "svc", "")),
        ("svc:8265", ("", "svc", "8265")),
        ("https:svc:dashboard", ("https", "svc", "dashboard")),
        ("ftp:svc:80", None),
        (":80", None),
        ("a:b:c:d", None),
    ],
)
def test_service_names_split_as_apimachinery(
    value: str, parts: tuple[str, str, str] | None
) -> None:
    assert routes.split_scheme_name_port(value) == parts
