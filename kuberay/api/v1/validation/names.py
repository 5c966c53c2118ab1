"""Names a user writes in a spec that the operator later puts in a request (Trust boundaries
part 1, item 2), each checked with the Kubernetes rule of the object it names.

The CRDs admit any string in these fields; KubeRay itself checks none of them. Here each is
checked where the other spec rules are (webhook and controllers alike), so a bad one surfaces
as the spec error of its kind (RayCluster ``InvalidRayClusterSpec``, RayJob
``ValidationFailed``, RayService ``ValidationFailed``) naming the field path, and the operator
sends no request with it. Messages follow Kubernetes' ``field.Invalid`` form
(``Invalid value: "<value>": <rule>``); the value is Go-quoted (no raw control character) and
cut to :data:`SHOWN_CHARS` characters.

=====================================================  ========================================
field                                                  rule (object it names)
=====================================================  ========================================
``authOptions.secretName``                             DNS-1123 subdomain (Secret)
``headGroupSpec.headService.metadata.name``            DNS-1035 label (Service)
RayJob ``clusterSelector[ray.io/cluster]``             DNS-1123 subdomain (RayCluster) and label
                                                       value (it is also a selector value)
RayJob ``jobId``                                       one URL path segment (the dashboard's
                                                       ``/api/jobs/<id>``)
RayService ``serveService.metadata.name``              DNS-1035 label (Service)
=====================================================  ========================================

Not checked here, because the operator only looks them up in its cache or sends them inside
an object's body, where the apiserver validates them (and KubeRay's own samples use
placeholders such as ``$KSA_NAME`` in them): the head ``serviceAccountName``,
``gcsFaultToleranceOptions.storage.claimName`` and Secret references in ``valueFrom``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kuberay.api.v1.constants import RAY_CLUSTER_LABEL_KEY
from kuberay.api.v1.convert import join_path
from kuberay.api.v1.raycluster_types import RayClusterSpec
from kuberay.api.v1.validation.common import _Errors
from kuberay.gocompat.go_text import go_quote
from kuberay.gocompat.goutil import is_dns1035_label, is_dns1123_subdomain, is_valid_label_value
from kuberay.kube.paths import path_segment_problems

__all__ = [
    "SHOWN_CHARS",
    "invalid_name_message",
    "validate_cluster_spec_names",
    "validate_job_spec_names",
    "validate_service_spec_names",
]

#: Characters of a bad value shown in a message.
SHOWN_CHARS: Final = 64

Rule = Callable[[str], list[str]]


def _label_value_and_subdomain(value: str) -> list[str]:
    return is_dns1123_subdomain(value) + is_valid_label_value(value)


def _one_path_segment(value: str) -> list[str]:
    return [f"must be usable as one URL path segment: {p}" for p in path_segment_problems(value)]


def invalid_name_message(value: str, problems: list[str]) -> str:
    """``Invalid value: "<value>": <problems>`` with the value Go-quoted and cut short."""
    shown = go_quote(value[:SHOWN_CHARS]) + ("..." if len(value) > SHOWN_CHARS else "")
    return f"Invalid value: {shown}: {'; '.join(problems)}"


def _check(errors: _Errors, path: str, value: Any, rule: Rule, prefix: str = "") -> None:
    if value is None or value == "":
        return
    if not isinstance(value, str):
        errors.add(path, f"{prefix}Invalid value: {value!r}: must be a string")
        return
    problems = rule(value)
    if problems:
        errors.add(path, prefix + invalid_name_message(value, problems))


def _meta_name(obj: Mapping[str, Any] | None) -> Any:
    meta = (obj or {}).get("metadata")
    return meta.get("name") if isinstance(meta, Mapping) else None


def validate_cluster_spec_names(errors: _Errors, base: str, spec: RayClusterSpec) -> None:
    """Add an error for each name in a RayCluster spec (at ``base``) that the operator would
    use in a request and that the Kubernetes rule of the object it names refuses."""
    auth = spec.auth_options
    if auth is not None:
        _check(
            errors,
            join_path(base, "authOptions.secretName"),
            auth.secret_name,
            is_dns1123_subdomain,
        )
    head = spec.head_group_spec
    head_base = join_path(base, "headGroupSpec")
    if head.head_service is not None:
        _check(
            errors,
            f"{head_base}.headService.metadata.name",
            _meta_name(head.head_service),
            is_dns1035_label,
        )


def validate_job_spec_names(
    errors: _Errors, base: str, cluster_selector: Mapping[str, str] | None, job_id: str | None
) -> None:
    """Add an error for a RayJob's ``clusterSelector`` cluster name or ``jobId`` that cannot
    be used in a request (messages prefixed ``"The RayJob spec is invalid: "``)."""
    prefix = "The RayJob spec is invalid: "
    selected = (cluster_selector or {}).get(RAY_CLUSTER_LABEL_KEY)
    _check(
        errors,
        join_path(base, "clusterSelector[ray.io/cluster]"),
        selected,
        _label_value_and_subdomain,
        prefix,
    )
    _check(errors, join_path(base, "jobId"), job_id, _one_path_segment, prefix)


def validate_service_spec_names(
    errors: _Errors, base: str, serve_service: Mapping[str, Any] | None
) -> None:
    """Add an error for a RayService's ``serveService.metadata.name`` that is not a
    DNS-1035 label (the Service it names); prefixed ``"The RayService spec is invalid: "``."""
    path = join_path(base, "serveService.metadata.name")
    prefix = "The RayService spec is invalid: "
    _check(errors, path, _meta_name(serve_service), is_dns1035_label, prefix)
