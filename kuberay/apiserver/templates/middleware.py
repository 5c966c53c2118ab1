"""The compute-template middleware of KubeRay's V2 proxy: a RayCluster, RayJob or RayService
body on its way to the kube-apiserver gets the templates its groups name applied (see
:mod:`~kuberay.apiserver.templates.apply`), each template read as the caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from kuberay.apiserver.errors import UpstreamUnavailable
from kuberay.apiserver.kube_calls import KubeAnswer, KubeCall
from kuberay.apiserver.templates.apply import apply_templates, referenced_names
from kuberay.apiserver.templates.bodies import decode_body, encode_body, is_yaml
from kuberay.apiserver.templates.errors import TemplateMissing, UpstreamRefused
from kuberay.apiserver.templates.model import (
    ComputeTemplate,
    configmaps_path,
    from_configmap,
    is_template,
)
from kuberay.kube.paths import check_segment, path_segment_problems

log = structlog.get_logger("apiserver.templates")

#: A YAML body larger than this is read in a worker thread (seconds of CPU for megabytes).
INLINE_YAML = 64 * 2**10
#: Reads a template by name in one namespace: None when there is none.
Fetch = Callable[[str], Awaitable[ComputeTemplate | None]]


def answer_object(answer: KubeAnswer) -> dict[str, Any]:
    """A 2xx answer's JSON object; :class:`UpstreamUnavailable` when it is not one."""
    try:
        obj = answer.json()
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise UpstreamUnavailable("the kube-apiserver's answer is not a JSON object")
    return obj


def template_fetcher(call: KubeCall, namespace: str) -> Fetch:
    """Reads templates of ``namespace`` through ``call`` (so as its caller): a 404, or a
    ConfigMap without the compute-template label, is None; any other refusal raises
    :class:`UpstreamRefused` carrying the apiserver's answer. ``namespace`` is checked now
    (:class:`~kuberay.kube.paths.InvalidPathSegment`)."""
    check_segment("namespace", namespace)

    async def fetch(name: str) -> ComputeTemplate | None:
        answer = await call("GET", configmaps_path(namespace, name))
        if answer.status == 404:
            return None
        if not answer.ok:
            raise UpstreamRefused(answer)
        configmap = answer_object(answer)
        return from_configmap(configmap) if is_template(configmap) else None

    return fetch


async def rewrite_body(
    kind: str, content_type: str, raw: bytes, fetch: Fetch, *, namespace: str = ""
) -> bytes:
    """The body of a create or replace of ``kind`` (``RayCluster``, ``RayJob``,
    ``RayService``), JSON or YAML by ``content_type``, as JSON with its templates applied.

    Raises :class:`BadBody` for a body that is not one object within the size limit,
    :class:`TemplateMissing` for a name that is no template (every name is checked before
    any is read; ``namespace`` only words the message) and whatever ``fetch`` raises."""
    if is_yaml(content_type) and len(raw) > INLINE_YAML:
        body = await asyncio.to_thread(decode_body, content_type, raw)
    else:
        body = decode_body(content_type, raw)
    names = referenced_names(kind, body)
    for name in names:
        problems = path_segment_problems(name)
        if problems:
            raise TemplateMissing(name, namespace, f"invalid name: {'; '.join(problems)}")
    templates: dict[str, ComputeTemplate] = {}
    for name in names:
        template = await fetch(name)
        if template is None:
            raise TemplateMissing(name, namespace)
        templates[name] = template
    if templates:
        body = apply_templates(kind, body, templates)
        log.info("compute templates applied", kind=kind, templates=names)
    return encode_body(body)
