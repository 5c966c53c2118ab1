"""``admission.k8s.io/v1`` AdmissionReview handling for the ray.io validating webhooks.

Pure functions, no I/O: :func:`review` takes the decoded request body of one webhook call and
returns the AdmissionReview to send back (or raises :class:`BadRequest`, answered with HTTP
400). The server in :mod:`kuberay.webhooks.server` only moves bytes.

Which rules run (``rules``):

* ``"all"`` (default): every error :mod:`kuberay.api.v1.validation` finds -- schema/CEL
  (``crd``), metadata, spec, upgrade options and the webhook-only unique worker group names
  -- so a bad object is rejected up front with **every** problem listed instead of being
  accepted and then reported one error at a time through events. On UPDATE the transition
  rules (``validate_*_update``: immutable ``managedBy`` and GCS FT backend) run as well.
  ``status`` checks are skipped: the main resource cannot change status, so an odd status
  written by a controller must not block later spec edits. RayCluster spec warnings are
  returned as admission warnings.
* ``"kuberay"``: exactly what KubeRay 1.7's webhooks check -- the first metadata error
  (reported at ``metadata.name``) and, for RayCluster, the first duplicated worker group name
  (reported at ``spec.workerGroupSpecs[i]``); create and update alike.

With either rule set an UPDATE of an object that is being deleted (``deletionTimestamp``
set) is allowed: removing a finalizer must never be blocked by validation.

A denial is what controller-runtime sends for ``apierrors.NewInvalid``: ``allowed: false``
and a ``Failure`` Status with code 422, reason ``Invalid``, message
``<Kind>.ray.io "<name>" is invalid: [<field>: Invalid value: <value>: <detail>, ...]`` and
one ``details.causes`` entry (``reason: FieldValueInvalid``, ``field``, ``message``) per
error. The apiserver passes that Status on to the client, prefixed with
``admission webhook "<name>" denied the request: ``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeAlias

import attrs

from kuberay.api.v1 import validation
from kuberay.api.v1.constants import (
    GROUP,
    KIND_RAYCLUSTER,
    KIND_RAYJOB,
    KIND_RAYSERVICE,
    PLURAL_RAYCLUSTERS,
    PLURAL_RAYJOBS,
    PLURAL_RAYSERVICES,
    VERSION,
)
from kuberay.api.v1.gates import FeatureGates
from kuberay.api.v1.validation import FieldError
from kuberay.api.v1.validation.label_refs import cluster_spec_of, validate_label_refs
from kuberay.gocompat.go_text import go_quote

__all__ = [
    "ADMISSION_API_VERSIONS",
    "RAYCLUSTER_WEBHOOK",
    "RAYJOB_WEBHOOK",
    "RAYSERVICE_WEBHOOK",
    "WEBHOOKS",
    "BadRequest",
    "KindWebhook",
    "RuleSet",
    "bad_request_review",
    "denied_errors",
    "format_value",
    "invalid_status",
    "lookup_path",
    "review",
]

RuleSet: TypeAlias = Literal["all", "kuberay"]

ADMISSION_API_VERSIONS: Final = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
CAUSE_FIELD_VALUE_INVALID: Final = "FieldValueInvalid"
MAX_VALUE_CHARS: Final = 4096  # longer JSON renderings of a bad value are cut (Go's are not)


class _Validate(Protocol):
    def __call__(
        self, obj: Mapping[str, Any], /, *, gates: FeatureGates = None
    ) -> list[FieldError]: ...


class _ValidateUpdate(Protocol):
    def __call__(
        self, old: Mapping[str, Any], new: Mapping[str, Any], /, *, gates: FeatureGates = None
    ) -> list[FieldError]: ...


@attrs.frozen
class KindWebhook:
    """One validating webhook: the kind it guards, its URL path and configuration name."""

    kind: str
    plural: str
    path: str
    name: str
    validate: _Validate
    validate_update: _ValidateUpdate


RAYCLUSTER_WEBHOOK: Final = KindWebhook(
    KIND_RAYCLUSTER,
    PLURAL_RAYCLUSTERS,
    "/validate-ray-io-v1-raycluster",
    "vraycluster.kb.io",
    validation.validate_raycluster,
    validation.validate_raycluster_update,
)
RAYJOB_WEBHOOK: Final = KindWebhook(
    KIND_RAYJOB,
    PLURAL_RAYJOBS,
    "/validate-ray-io-v1-rayjob",
    "vrayjob.kb.io",
    validation.validate_rayjob,
    validation.validate_rayjob_update,
)
RAYSERVICE_WEBHOOK: Final = KindWebhook(
    KIND_RAYSERVICE,
    PLURAL_RAYSERVICES,
    "/validate-ray-io-v1-rayservice",
    "vrayservice.kb.io",
    validation.validate_rayservice,
    validation.validate_rayservice_update,
)
#: The three webhooks KubeRay registers, in its order.
WEBHOOKS: Final = (RAYCLUSTER_WEBHOOK, RAYJOB_WEBHOOK, RAYSERVICE_WEBHOOK)


class BadRequest(ValueError):
    """The body is not an AdmissionReview request this webhook can answer (HTTP 400)."""

    def __init__(self, message: str, uid: str = "") -> None:
        super().__init__(message)
        self.uid = uid


# --- field paths and values -------------------------------------------------------------
def _path_segments(path: str) -> list[str | int]:
    """``a.b[0].c[x.y/z]`` -> ``["a", "b", 0, "c", "x.y/z"]`` (bracketed keys may hold dots)."""
    segments: list[str | int] = []
    current = ""
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == ".":
            if current:
                segments.append(current)
            current = ""
        elif ch == "[":
            if current:
                segments.append(current)
            current = ""
            end = path.find("]", i + 1)
            if end < 0:
                end = len(path)
            key = path[i + 1 : end]
            segments.append(int(key) if key.isdigit() else key)
            i = end
        else:
            current += ch
        i += 1
    if current:
        segments.append(current)
    return segments


def lookup_path(obj: Any, path: str) -> Any:
    """The value at field path ``path`` of a JSON object, or ``None`` if it is not there."""
    value = obj
    for segment in _path_segments(path):
        if isinstance(segment, int):
            if not isinstance(value, list) or segment >= len(value):
                return None
            value = value[segment]
        elif isinstance(value, Mapping):
            value = value.get(segment)
        else:
            return None
    return value


def format_value(value: Any) -> str:
    """A bad value as apimachinery's ``field.Error`` prints it: numbers and booleans bare,
    strings Go-quoted, ``null`` for nothing, anything else as compact JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return go_quote(value)
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + "..."
    return text


# --- statuses ---------------------------------------------------------------------------
def _aggregate(messages: Sequence[str]) -> str:
    """``utilerrors.Aggregate.Error()``: duplicates dropped, brackets when more than one."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


_CAUSES: Final = {
    "Invalid": CAUSE_FIELD_VALUE_INVALID,
    "Forbidden": "FieldValueForbidden",
    "Duplicate": "FieldValueDuplicate",
}


def _error_body(error: FieldError, obj: Mapping[str, Any] | None) -> str:
    """apimachinery's ``field.Error.ErrorBody()``: the kind, the bad value where it prints
    one, then the detail."""
    if error.kind == "Forbidden":
        body = "Forbidden"
    else:
        value = error.value if error.value is not None else lookup_path(obj, error.path)
        label = "Duplicate value" if error.kind == "Duplicate" else "Invalid value"
        body = f"{label}: {format_value(value)}"
    if error.message:
        body += f": {error.message}"
    return body


def invalid_status(
    kind: str,
    name: str,
    errors: Sequence[FieldError],
    obj: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``Status`` of ``apierrors.NewInvalid(ray.io/<kind>, name, errors)``; bad values are
    looked up in ``obj`` by each error's path."""
    causes: list[dict[str, Any]] = []
    texts: list[str] = []
    for error in errors:
        body = _error_body(error, obj)
        causes.append({"reason": _CAUSES[error.kind], "message": body, "field": error.path})
        texts.append(f"{error.path}: {body}")
    message = f"{kind}.{GROUP} {go_quote(name)} is invalid"
    if texts:
        message += f": {_aggregate(texts)}"
    return {
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Invalid",
        "details": {"name": name, "group": GROUP, "kind": kind, "causes": causes},
        "code": 422,
    }


def _error_status(code: int, message: str) -> dict[str, Any]:
    return {"metadata": {}, "status": "Failure", "message": message, "code": code}


# --- rules ------------------------------------------------------------------------------
def _kuberay_errors(webhook: KindWebhook, errors: Sequence[FieldError]) -> list[FieldError]:
    """Reduce a full error list to what KubeRay 1.7's webhook for ``webhook.kind`` reports."""
    out: list[FieldError] = []
    metadata = validation.first_error(errors, "metadata")
    if metadata is not None:
        out.append(FieldError("metadata.name", metadata.message, "webhook"))
    duplicate = validation.first_error(errors, "webhook")
    if webhook.kind == KIND_RAYCLUSTER and duplicate is not None:
        group_path = duplicate.path.removesuffix(".groupName")
        out.append(FieldError(group_path, duplicate.message, "webhook"))
    return out


def _label_refs_error(
    webhook: KindWebhook,
    obj: Mapping[str, Any],
    gates: FeatureGates,
    allowed_node_labels: Collection[str],
) -> list[FieldError]:
    """KubeRay v1.8's ``validateLabelRefs`` of the cluster spec ``obj`` carries (last, as
    KubeRay checks it after the metadata and the worker group names)."""
    found = cluster_spec_of(webhook.kind, obj)
    if found is None:
        return []
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    error = validate_label_refs(
        found[0],
        annotations if isinstance(annotations, Mapping) else None,
        allowed_node_labels,
        found[1],
        gates=gates,
    )
    return [] if error is None else [error]


def denied_errors(
    webhook: KindWebhook,
    operation: str,
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    gates: FeatureGates = None,
    rules: RuleSet = "all",
    allowed_node_labels: Collection[str] = (),
) -> list[FieldError]:
    """The errors that make ``webhook`` deny ``operation`` of ``obj`` (empty: allowed).
    ``allowed_node_labels`` is the operator's ``allowedNodeLabels`` (labelRefs)."""
    if operation not in ("CREATE", "UPDATE"):
        return []
    metadata = obj.get("metadata")
    if (
        operation == "UPDATE"
        and isinstance(metadata, Mapping)
        and metadata.get("deletionTimestamp")
    ):
        return []
    label_refs = _label_refs_error(webhook, obj, gates, allowed_node_labels)
    if rules == "kuberay":
        return _kuberay_errors(webhook, webhook.validate(obj, gates=gates)) + label_refs
    if operation == "UPDATE" and old is not None:
        errors = webhook.validate_update(old, obj, gates=gates)
    else:
        errors = webhook.validate(obj, gates=gates)
    # the controllers' gate rule says what the webhook's says, at the same field: once
    said = {(error.path, error.message) for error in label_refs}
    kept = [
        error
        for error in errors
        if error.source != "status"
        and (error.path, error.message.removeprefix(f"{error.path} ")) not in said
    ]
    return kept + label_refs


def _warnings(webhook: KindWebhook, obj: Mapping[str, Any], rules: RuleSet) -> list[str]:
    if rules != "all" or webhook.kind != KIND_RAYCLUSTER:
        return []
    try:
        return validation.raycluster_spec_warnings(obj)
    except Exception:  # warnings are best effort: an object that does not structure has none
        return []


def _request(body: Any) -> tuple[str, Mapping[str, Any]]:
    if not isinstance(body, Mapping):
        raise BadRequest("request body is not a JSON object")
    api_version = body.get("apiVersion")
    if body.get("kind") != "AdmissionReview" or api_version not in ADMISSION_API_VERSIONS:
        raise BadRequest(
            f"expected an AdmissionReview of {' or '.join(ADMISSION_API_VERSIONS)}, got "
            f"apiVersion={api_version!r} kind={body.get('kind')!r}"
        )
    request = body.get("request")
    if not isinstance(request, Mapping):
        raise BadRequest("AdmissionReview has no request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadRequest("AdmissionReview request has no uid")
    return str(api_version), request


def _check_kind(webhook: KindWebhook, request: Mapping[str, Any], uid: str) -> None:
    kind = request.get("kind")
    if isinstance(kind, Mapping) and (
        kind.get("group") != GROUP or kind.get("kind") != webhook.kind
    ):
        raise BadRequest(
            f"{webhook.path} validates {GROUP}/{VERSION} {webhook.kind}, got "
            f"{kind.get('group')}/{kind.get('version')} {kind.get('kind')}",
            uid,
        )


def review(
    webhook: KindWebhook,
    body: Any,
    *,
    gates: FeatureGates = None,
    rules: RuleSet = "all",
    allowed_node_labels: Collection[str] = (),
) -> dict[str, Any]:
    """Answer one AdmissionReview ``body`` (decoded JSON) for ``webhook``
    (``allowed_node_labels``: the operator's ``allowedNodeLabels``).

    Returns the AdmissionReview response (same apiVersion as the request); raises
    :class:`BadRequest` for a body that is not a usable AdmissionReview request.
    """
    api_version, request = _request(body)
    uid = str(request["uid"])
    _check_kind(webhook, request, uid)
    operation = request.get("operation")
    if not isinstance(operation, str):
        raise BadRequest("AdmissionReview request has no operation", uid)
    response: dict[str, Any] = {"uid": uid}
    if operation not in ("CREATE", "UPDATE"):
        response.update(allowed=True, status={"metadata": {}, "code": 200})
        return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}
    obj = request.get("object")
    if not isinstance(obj, Mapping):
        raise BadRequest(f"{operation} request without an object", uid)
    old = request.get("oldObject")
    if operation == "UPDATE" and not isinstance(old, Mapping):
        raise BadRequest("UPDATE request without an oldObject", uid)
    errors = denied_errors(
        webhook,
        operation,
        obj,
        old if isinstance(old, Mapping) else None,
        gates=gates,
        rules=rules,
        allowed_node_labels=allowed_node_labels,
    )
    if errors:
        metadata = obj.get("metadata")
        name = request.get("name") or (
            metadata.get("name") if isinstance(metadata, Mapping) else None
        )
        response.update(
            allowed=False, status=invalid_status(webhook.kind, str(name or ""), errors, obj)
        )
    else:
        response.update(allowed=True, status={"metadata": {}, "code": 200})
        warnings = _warnings(webhook, obj, rules)
        if warnings:
            response["warnings"] = warnings
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def bad_request_review(
    error: BadRequest, api_version: str = ADMISSION_API_VERSIONS[0]
) -> dict[str, Any]:
    """The AdmissionReview body sent with an HTTP 400 answer."""
    return {
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "response": {
            "uid": error.uid,
            "allowed": False,
            "status": _error_status(400, str(error)),
        },
    }
