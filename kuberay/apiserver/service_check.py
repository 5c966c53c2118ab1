"""Upstream's ``requireKubeRayService``: the Service proxy reaches only KubeRay's Services.

A Service proxy request passes only when the Service ``{svc}`` names (``[scheme:]name[:port]``,
400 ``invalid service format: ...`` when malformed) exists in the namespace and carries
``app.kubernetes.io/name=kuberay`` (the head and serve Services the operator makes); else
404 ``kuberay service not found``. The Service is read **as the caller** (upstream lists it
as itself): a caller who may not read it gets the apiserver's own answer (403), and nothing
about the Service leaks through the server's rights.
"""

from __future__ import annotations

import attrs
from aiohttp import web

from kuberay.api.v1.constants import APPLICATION_NAME, KUBERNETES_APPLICATION_NAME_LABEL_KEY
from kuberay.apiserver.kube_calls import KubeCall
from kuberay.apiserver.routes import split_scheme_name_port
from kuberay.kube.objects import labels
from kuberay.kube.paths import segment


@attrs.frozen
class Refusal:
    """Why a Service proxy request is refused: the answer to send."""

    status: int
    text: str
    content_type: str = "text/plain; charset=utf-8"


async def check_service(call: KubeCall, namespace: str, service: str) -> Refusal | None:
    """None when the request may pass, else the :class:`Refusal` to answer."""
    parts = split_scheme_name_port(service)
    if parts is None:
        return Refusal(400, f"invalid service format: {service}\n")
    path = (
        f"/api/v1/namespaces/{segment('namespace', namespace)}"
        f"/services/{segment('service name', parts[1])}"
    )
    answer = await call("GET", path)
    if answer.status == 404:
        return Refusal(404, "kuberay service not found\n")
    if not answer.ok:
        return Refusal(answer.status, answer.body.decode("utf-8", "replace"), answer.content_type)
    try:
        found = labels(answer.json())
    except (ValueError, AttributeError):
        return Refusal(500, "failed to list kuberay services\n")
    if found.get(KUBERNETES_APPLICATION_NAME_LABEL_KEY) != APPLICATION_NAME:
        return Refusal(404, "kuberay service not found\n")
    return None


def refusal_response(refusal: Refusal) -> web.Response:
    """The answer for ``refusal``."""
    headers = {"Content-Type": refusal.content_type or "text/plain"}
    return web.Response(status=refusal.status, body=refusal.text.encode(), headers=headers)
