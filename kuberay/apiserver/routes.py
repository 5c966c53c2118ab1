"""Which of KubeRay's V2 routes a request takes (a pure decision over method and path).

Upstream's ``apiserversdk/proxy.go`` registers, on Go's ``ServeMux``:

* ``/apis/ray.io/v1`` and below (any method; discovery, lists in all namespaces, objects and their
  subresources) → :data:`RAY`; ``POST .../namespaces/{ns}/{rayclusters,rayjobs,rayservices}``
  and ``PUT .../{kind}/{name}`` go through the compute-template middleware first
  (``template_kind`` is set);
* ``GET /apis/events.k8s.io/v1/namespaces/{ns}/events`` → :data:`EVENTS` (HEAD too, as Go's
  ``GET`` pattern; any other method is 405);
* ``/api/v1/namespaces/{ns}/services/{svc}/proxy`` with or without a tail → :data:`SERVICE`;
* anything else → :data:`NOT_FOUND` (404).

The compute-template routes (``/apis/v1/...compute_templates``) are aiohttp routes of their
own and never reach this decision.
"""

from __future__ import annotations

import attrs

from kuberay.apiserver.request_path import RequestPath

RAY = "ray"
EVENTS = "events"
SERVICE = "service-proxy"
NOT_FOUND = "not-found"
METHOD_NOT_ALLOWED = "method-not-allowed"

RAY_PREFIX = ("apis", "ray.io", "v1")
EVENTS_PREFIX = ("apis", "events.k8s.io", "v1")
#: Kinds whose bodies go through the compute-template middleware: the plural resource name
#: and the kind's name as the middleware reads it.
TEMPLATED = {"rayclusters": "RayCluster", "rayjobs": "RayJob", "rayservices": "RayService"}


@attrs.frozen
class Route:
    """Where a request goes. ``namespace`` is set for namespaced routes; ``service`` is the
    ``{svc}`` segment of the Service proxy (``[scheme:]name[:port]``); ``template_kind`` the
    kind whose body the compute-template middleware rewrites (None: no rewrite)."""

    name: str
    namespace: str = ""
    service: str = ""
    template_kind: str | None = None


def route(method: str, path: RequestPath) -> Route:
    """The route ``method`` and ``path`` take (see the module doc)."""
    s = path.segments
    if path.starts_with(*RAY_PREFIX):
        kind = None
        if (len(s) == 6 and s[3] == "namespaces" and method == "POST") or (
            len(s) == 7 and s[3] == "namespaces" and method == "PUT"
        ):
            kind = TEMPLATED.get(s[5])
        namespace = s[4] if len(s) > 4 and s[3] == "namespaces" else ""
        return Route(RAY, namespace=namespace, template_kind=kind)
    if (
        path.starts_with(*EVENTS_PREFIX)
        and len(s) == 6
        and s[3] == "namespaces"
        and s[5] == "events"
        and not path.trailing_slash
    ):
        if method in ("GET", "HEAD"):
            return Route(EVENTS, namespace=s[4])
        return Route(METHOD_NOT_ALLOWED)
    if (
        len(s) >= 7
        and s[:3] == ("api", "v1", "namespaces")
        and s[4] == "services"
        and s[6] == "proxy"
    ):
        return Route(SERVICE, namespace=s[3], service=s[5])
    return Route(NOT_FOUND)


def split_scheme_name_port(value: str) -> tuple[str, str, str] | None:
    """``(scheme, name, port)`` of ``name``, ``name:port`` or ``scheme:name:port``, or None
    when malformed (apimachinery's ``net.SplitSchemeNamePort``: at most three parts, a name,
    a scheme of ``http``, ``https`` or none)."""
    parts = value.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port
