"""KubeRay's compute-template routes (the V1 ``ComputeTemplateService`` over its
grpc-gateway), each answered from the template ConfigMaps read and written as the caller.

| route | answer |
| --- | --- |
| ``POST /apis/v1/namespaces/{ns}/compute_templates`` | 200 and the template created |
| ``GET /apis/v1/namespaces/{ns}/compute_templates/{name}`` | 200 and the template |
| ``GET /apis/v1/namespaces/{ns}/compute_templates`` | 200 ``{"computeTemplates": [...]}`` |
| ``GET /apis/v1/compute_templates`` | the same over all namespaces (one ConfigMap list) |
| ``DELETE /apis/v1/namespaces/{ns}/compute_templates/{name}`` | 200 ``{}`` |

An empty list answers ``{}`` (protojson leaves an empty list out). Refusals are KubeRay's
grpc-gateway Status ``{"code": <gRPC code>, "message": ...}`` with its messages: 400 (code 3)
for an invalid template or path segment, 404 (5) for no such template, 409 (6) for one that
exists. Any other refusal of the kube-apiserver (403 for a caller without rights...) is
returned unchanged. Beyond KubeRay: a ConfigMap without the compute-template label is no
template (KubeRay would show or delete any ConfigMap), a delete carries the uid it checked,
an invalid memory unit is 400 (KubeRay: 500), and lists follow ``continue`` to the end.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import orjson
import structlog
from aiohttp import web

from kuberay.apiserver.kube_calls import KubeAnswer, KubeCall
from kuberay.apiserver.templates.middleware import answer_object
from kuberay.apiserver.templates.model import (
    TEMPLATE_SELECTOR,
    TemplateInvalid,
    configmaps_path,
    create_problem,
    from_configmap,
    is_template,
    parse_request,
)
from kuberay.kube.paths import InvalidPathSegment, check_segment

log = structlog.get_logger("apiserver.templates")

INVALID_ARGUMENT: Final = 3
NOT_FOUND: Final = 5
ALREADY_EXISTS: Final = 6
#: gRPC code -> HTTP status (grpc-gateway's ``HTTPStatusFromCode``).
HTTP_STATUS: Final = {INVALID_ARGUMENT: 400, NOT_FOUND: 404, ALREADY_EXISTS: 409}
LIST_KEY: Final = "computeTemplates"
LIST_PAGE: Final = "500"

CallOf = Callable[[web.Request], KubeCall]


def grpc_status(code: int, *chain: str) -> web.Response:
    """KubeRay's error answer: the message is its ``UserError`` text, the external message
    then each wrapping, joined by ``": "``."""
    return web.json_response({"code": code, "message": ": ".join(chain)}, status=HTTP_STATUS[code])


def passthrough(answer: KubeAnswer) -> web.Response:
    """The kube-apiserver's answer, unchanged."""
    return web.Response(
        status=answer.status, body=answer.body, headers={"Content-Type": answer.content_type}
    )


def _not_found(name: str, wrapping: str) -> web.Response:
    message = f"Compute template {name} not found"
    detail = f'configmaps "{name}" not found'
    return grpc_status(NOT_FOUND, message, wrapping, f"NotFoundError: {message}", detail)


def _segment(request: web.Request, key: str) -> str:
    return check_segment(key, request.match_info[key])


async def _create(request: web.Request, call: KubeCall) -> web.Response:
    namespace = _segment(request, "namespace")
    raw = await request.read()
    try:
        template = parse_request(orjson.loads(raw) if raw.strip() else {})
    except orjson.JSONDecodeError as exc:
        return grpc_status(INVALID_ARGUMENT, f"proto: syntax error: {exc}")
    except TemplateInvalid as exc:
        return grpc_status(INVALID_ARGUMENT, str(exc))
    problem = create_problem(template, namespace)
    if problem:
        wrapping = "Validate compute template runtime request failed."
        return grpc_status(INVALID_ARGUMENT, problem, wrapping, f"Invalid input error: {problem}")
    answer = await call("POST", configmaps_path(namespace), body=template.to_configmap())
    if answer.status == 409:
        message = (
            f"Compute template with name {template.name} already exists in namespace {namespace}"
        )
        return grpc_status(
            ALREADY_EXISTS,
            message,
            "Create compute template failed.",
            f"Already exist error: {message}",
        )
    if not answer.ok:
        return passthrough(answer)
    log.info("compute template created", namespace=namespace, template=template.name)
    return web.json_response(from_configmap(answer_object(answer)).to_json())


async def _read(call: KubeCall, namespace: str, name: str) -> dict[str, Any] | KubeAnswer | None:
    """The template's ConfigMap, None when there is none, or the apiserver's refusal."""
    answer = await call("GET", configmaps_path(namespace, name))
    if answer.status == 404:
        return None
    if not answer.ok:
        return answer
    configmap = answer_object(answer)
    return configmap if is_template(configmap) else None


async def _get(request: web.Request, call: KubeCall) -> web.Response:
    namespace, name = _segment(request, "namespace"), _segment(request, "name")
    found = await _read(call, namespace, name)
    if isinstance(found, KubeAnswer):
        return passthrough(found)
    if found is None:
        return _not_found(name, "Get compute template failed.")
    return web.json_response(from_configmap(found).to_json())


async def _delete(request: web.Request, call: KubeCall) -> web.Response:
    namespace, name = _segment(request, "namespace"), _segment(request, "name")
    found = await _read(call, namespace, name)
    if isinstance(found, KubeAnswer):
        return passthrough(found)
    if found is not None:
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": found["metadata"].get("uid")},
        }
        answer = await call("DELETE", configmaps_path(namespace, name), body=options)
        if answer.ok:
            log.info("compute template deleted", namespace=namespace, template=name)
            return web.json_response({})
        if answer.status not in (404, 409):  # 409: replaced since read
            return passthrough(answer)
    return _not_found(name, "Get compute template failure")


async def _list(call: KubeCall, path: str) -> web.Response:
    """Every template ConfigMap under ``path``, page by page."""
    templates: list[dict[str, Any]] = []
    params = {"labelSelector": TEMPLATE_SELECTOR, "limit": LIST_PAGE}
    while True:
        answer = await call("GET", path, params=params)
        if not answer.ok:
            return passthrough(answer)
        page = answer_object(answer)
        items = page.get("items")
        templates += [from_configmap(cm).to_json() for cm in items or () if isinstance(cm, dict)]
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return web.json_response({LIST_KEY: templates} if templates else {})
        params = {**params, "continue": str(token)}


async def _list_namespace(request: web.Request, call: KubeCall) -> web.Response:
    return await _list(call, configmaps_path(_segment(request, "namespace")))


async def _list_all(request: web.Request, call: KubeCall) -> web.Response:
    return await _list(call, "/api/v1/configmaps")


Route = Callable[[web.Request, KubeCall], Awaitable[web.Response]]


def _handler(route: Route, call_of: CallOf) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(request: web.Request) -> web.Response:
        try:
            return await route(request, call_of(request))
        except InvalidPathSegment as exc:
            return grpc_status(INVALID_ARGUMENT, str(exc))

    return handle


def add_routes(router: web.UrlDispatcher, call_of: CallOf) -> None:
    """Mount the five routes; ``call_of`` gives the :class:`KubeCall` of a request's caller."""
    base = "/apis/v1/namespaces/{namespace}/compute_templates"
    router.add_post(base, _handler(_create, call_of))
    router.add_get(base, _handler(_list_namespace, call_of), allow_head=False)
    router.add_get(base + "/{name}", _handler(_get, call_of), allow_head=False)
    router.add_delete(base + "/{name}", _handler(_delete, call_of))
    router.add_get("/apis/v1/compute_templates", _handler(_list_all, call_of), allow_head=False)
