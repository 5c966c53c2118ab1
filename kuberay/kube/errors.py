"""Typed Kubernetes API errors.

Every non-2xx answer from the apiserver becomes an :class:`ApiError` subclass chosen
by HTTP status and the ``Status.reason`` the server sent, so callers write
``except NotFound`` instead of comparing numbers. Transport failures (connection
refused, reset, timeouts) become :class:`TransportError` so reflectors and
controllers can back off without parsing aiohttp exceptions.
"""

from __future__ import annotations

from typing import Any


class KubeError(Exception):
    """Base class of everything the client raises."""


class TransportError(KubeError):
    """The request never got an HTTP answer (connection refused, reset, timed out)."""


class RequestRefused(KubeError, ValueError):
    """The client refused to send a request it cannot frame: a path segment, query or
    header value holds what HTTP/1.1 or the apiserver's paths cannot carry (a CR LF in a
    name, ``..``). Nothing was sent; the message names the field. A path segment's refusal is
    :class:`kuberay.kube.paths.InvalidPathSegment`, a subclass."""


class ConfigError(KubeError):
    """The kubeconfig or service account is missing, malformed, or asks for something this
    client does not do; the message names the file, context, cluster or user at fault."""


class CredentialError(ConfigError, TransportError):
    """A credential source failed: an ``exec`` plugin (the message names its command and
    user) or a token file. Also a TransportError: raised at request time (a refresh), the
    request got no answer and callers retry it as they retry a dropped connection."""


class WriteRefused(KubeError):
    """The client refused to send a write: its write guard said no (e.g. the process
    lost its leader lease). Nothing was sent."""


class ApiError(KubeError):
    """The apiserver answered with a non-2xx status.

    ``status`` is the HTTP code, ``reason`` the machine-readable ``Status.reason``
    (``NotFound``, ``AlreadyExists``, ``Conflict``, ``Invalid``, ``Expired``...),
    ``message`` the server's human text, ``causes`` the field causes of an
    ``Invalid`` answer and ``retry_after`` the ``Retry-After`` seconds if sent.
    """

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        *,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.details = details or {}
        self.retry_after = retry_after

    @property
    def causes(self) -> list[dict[str, Any]]:
        """The ``details.causes`` list the server sent (field, reason, message)."""
        causes = self.details.get("causes") or []
        return list(causes)


class BadRequest(ApiError):
    """400: the request itself was malformed."""


class Unauthorized(ApiError):
    """401: no or stale credentials."""


class Forbidden(ApiError):
    """403: RBAC denied the request."""


class NotFound(ApiError):
    """404: the object (or its resource type) does not exist."""


class Conflict(ApiError):
    """409 Conflict: the resourceVersion or a precondition no longer matches."""


class AlreadyExists(Conflict):
    """409 AlreadyExists: create of a name that is taken."""


class Gone(ApiError):
    """410 Gone / Expired: the resourceVersion asked for was compacted away; relist."""


class Invalid(ApiError):
    """422 Invalid: validation failed; ``causes`` names the fields."""


class TooManyRequests(ApiError):
    """429: the server throttled us; honour ``retry_after``."""


class ServerError(ApiError):
    """5xx: the server failed; usually worth a retry with backoff."""


def error_from_response(
    status: int, body: bytes, headers: dict[str, str] | None = None
) -> ApiError:
    """Build the typed error for an HTTP answer of ``status`` with body ``body``."""
    reason = ""
    message = body.decode("utf-8", "replace")[:2000]
    details: dict[str, Any] = {}
    try:
        import orjson  # not at import: kubectl ray's --help reads a kubeconfig, no answers

        parsed = orjson.loads(body) if body else None
    except ValueError:  # orjson.JSONDecodeError
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        reason = str(parsed.get("reason") or "")
        message = str(parsed.get("message") or "")
        details = parsed.get("details") or {}
    retry_after: float | None = None
    if headers:
        raw = headers.get("Retry-After") or headers.get("retry-after")
        if raw:
            try:
                retry_after = float(raw)
            except ValueError:
                retry_after = None
    return _classify(status, reason)(
        status, reason, message, details=details, retry_after=retry_after
    )


def error_from_status(status_obj: dict[str, Any]) -> ApiError:
    """Build the typed error for a ``Status`` object (as sent in a watch ERROR event)."""
    code = int(status_obj.get("code") or 500)
    reason = str(status_obj.get("reason") or "")
    return _classify(code, reason)(
        code, reason, str(status_obj.get("message") or ""), details=status_obj.get("details") or {}
    )


def _classify(status: int, reason: str) -> type[ApiError]:
    if status == 409:
        return AlreadyExists if reason == "AlreadyExists" else Conflict
    if status == 410 or reason in ("Expired", "Gone"):
        return Gone
    if status >= 500:
        return ServerError
    return {
        400: BadRequest,
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
        422: Invalid,
        429: TooManyRequests,
    }.get(status, ApiError)
