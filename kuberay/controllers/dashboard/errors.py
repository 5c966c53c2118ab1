"""Typed failures of a Ray dashboard call. Nothing else escapes the dashboard client.

``str(error)`` is written for the user who reads it in a log line: it says which call failed,
where, and what to look at. Every error also carries a :class:`Cause` (what kind of failure),
the ``address`` it concerns (``host:port``, or a URL through the apiserver proxy; "" when no
address was reached) and a ``detail``. :func:`describe` turns that into the one line a RayJob's
status message and Events show; :func:`classify` maps a transport exception to its cause.
Both are pure, and they are the only place where failures are classified.
"""

from __future__ import annotations

import enum
import errno
import socket
import ssl

from kuberay.http import HTTPClientError

__all__ = [
    "ALLOWED_NETWORKS_ENV",
    "BadResponse",
    "Cause",
    "DashboardError",
    "DashboardUnreachable",
    "DuplicateSubmissionId",
    "JobNotFound",
    "classify",
    "describe",
    "host_port",
]

#: The setting that widens the dial guard (see :mod:`.guard`).
ALLOWED_NETWORKS_ENV = "KUBERAY_DASHBOARD_ALLOWED_NETWORKS"

#: How long a detail may get in :func:`describe`'s line.
_DETAIL_LIMIT = 300


class Cause(enum.StrEnum):
    """Why a dashboard call failed. The value is the suffix of the Event reason
    (``Dashboard<value>``)."""

    #: The dial guard refused the address (the operator runs outside the cluster).
    NOT_ALLOWED = "AddressNotAllowed"
    DNS = "DNSFailure"
    CONNECTION_REFUSED = "ConnectionRefused"
    TIMEOUT = "Timeout"
    TLS = "TLSError"
    #: HTTP 401/403 from the dashboard (token auth).
    AUTH = "Unauthorized"
    #: No answer for another reason: no route, reset, no ready endpoint, closed connection.
    UNREACHABLE = "Unreachable"
    #: The dashboard answered, but not as expected (or anything else).
    OTHER = "Error"

    @property
    def event_reason(self) -> str:
        """The reason of the Warning Event about this cause (``DashboardTimeout``...)."""
        return f"Dashboard{self.value}"


class DashboardError(Exception):
    """Base class: a dashboard call did not produce its result.

    ``cause``/``address``/``detail`` feed :func:`describe` (see the module doc)."""

    def __init__(
        self, message: str, *, cause: Cause = Cause.OTHER, address: str = "", detail: str = ""
    ) -> None:
        super().__init__(message)
        self.cause = cause
        self.address = address
        self.detail = detail


class JobNotFound(DashboardError):
    """``GET /api/jobs/{id}`` answered 404: the cluster has no such job (KubeRay: "not exist")."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"Job {job_id} does not exist on the cluster")
        self.job_id = job_id


class DuplicateSubmissionId(DashboardError):
    """``POST /api/jobs/`` refused the submission id because a job already uses it.

    KubeRay treats this as "already submitted" (the id is ours, so the job is ours).
    """

    def __init__(self, submission_id: str) -> None:
        super().__init__(
            f"submission ID '{submission_id}' already used, Please use a different submission_id"
        )
        self.submission_id = submission_id


class DashboardUnreachable(DashboardError):
    """No answer: connection refused or reset, timeout, no ready endpoint behind the head
    Service, missing auth Secret, or an address the dial guard refuses (``cause`` says which;
    default :attr:`Cause.UNREACHABLE`)."""

    def __init__(
        self,
        message: str,
        *,
        cause: Cause = Cause.UNREACHABLE,
        address: str = "",
        detail: str = "",
    ) -> None:
        super().__init__(message, cause=cause, address=address, detail=detail)


class BadResponse(DashboardError):
    """The dashboard answered, but not as expected: an unexpected HTTP status (``status``) or a
    body that does not decode (``status`` is then the HTTP status of that answer). A 401/403 is
    :attr:`Cause.AUTH`."""

    def __init__(self, message: str, *, status: int, address: str = "", detail: str = "") -> None:
        cause = Cause.AUTH if status in (401, 403) else Cause.OTHER
        super().__init__(message, cause=cause, address=address, detail=detail)
        self.status = status


def host_port(host: str, port: int | None) -> str:
    """``host:port`` (``[host]:port`` for IPv6; ``host`` alone when ``port`` is None)."""
    if port is None:
        return host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps (``os_error``, ``__cause__``, ``__context__``), once each."""
    chain: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo and len(chain) < 16:
        e = todo.pop(0)
        if any(e is seen for seen in chain):
            continue
        chain.append(e)
        for inner in (getattr(e, "os_error", None), e.__cause__, e.__context__):
            if isinstance(inner, BaseException):
                todo.append(inner)
    return chain


def classify(exc: BaseException) -> Cause:
    """The cause of a transport failure: an exception raised by the HTTP client
    (:mod:`kuberay.http`), asyncio, ssl or the socket layer while dialling a dashboard
    (wrapped ones are looked through). Pure.

    TLS before DNS before refused before timeout (the most specific first); any other
    connection or OS error is :attr:`Cause.UNREACHABLE`; anything else :attr:`Cause.OTHER`."""
    chain = _causes(exc)
    checks: list[tuple[Cause, type[BaseException] | tuple[type[BaseException], ...], int]] = [
        (Cause.TLS, ssl.SSLError, 0),
        (Cause.DNS, socket.gaierror, 0),
        (Cause.CONNECTION_REFUSED, ConnectionRefusedError, errno.ECONNREFUSED),
        (Cause.TIMEOUT, TimeoutError, errno.ETIMEDOUT),
    ]
    for cause, types, code in checks:
        for e in chain:
            if isinstance(e, types) or (code and isinstance(e, OSError) and e.errno == code):
                return cause
    if any(isinstance(e, (OSError, HTTPClientError)) for e in chain):
        return Cause.UNREACHABLE
    return Cause.OTHER


def _one_line(text: str, limit: int = _DETAIL_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(error: BaseException) -> str:
    """One line naming the address and the cause of a failed dashboard call, e.g.
    ``dashboard address 10.244.0.5:8265 refused: not in the allowed networks 127.0.0.0/8
    (set KUBERAY_DASHBOARD_ALLOWED_NETWORKS or run the operator in the cluster)``.

    Errors without an address, of :attr:`Cause.OTHER`, and exceptions that are not
    :class:`DashboardError` are described by their own text (on one line). Pure."""
    if not isinstance(error, DashboardError) or not error.address or error.cause is Cause.OTHER:
        return _one_line(str(error))
    where, detail = error.address, _one_line(error.detail)
    suffix = f": {detail}" if detail else ""
    match error.cause:
        case Cause.NOT_ALLOWED:
            return (
                f"dashboard address {where} refused: not in the allowed networks "
                f"{detail or '(none)'} (set {ALLOWED_NETWORKS_ENV} or run the operator in the "
                "cluster)"
            )
        case Cause.DNS:
            return f"dashboard host {where}: DNS lookup failed{suffix}"
        case Cause.CONNECTION_REFUSED:
            return f"dashboard address {where}: connection refused (is the Ray head running?)"
        case Cause.TIMEOUT:
            return f"dashboard address {where}: no answer" + (f" within {detail}" if detail else "")
        case Cause.TLS:
            return f"dashboard address {where}: TLS error{suffix}"
        case Cause.AUTH:
            status = getattr(error, "status", "401/403")
            return (
                f"dashboard at {where} refused the request with HTTP {status}{suffix} "
                "(check the RayCluster's auth token Secret)"
            )
        case _:
            return f"dashboard address {where} unreachable{suffix}"
