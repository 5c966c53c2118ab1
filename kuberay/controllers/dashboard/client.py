"""HTTP client for one Ray dashboard (Jobs and Serve REST APIs) or one Serve proxy.

Wire behaviour follows KubeRay's dashboard client: same paths and methods, the
``x-ray-authorization: Bearer <token>`` header in token-auth mode, ``Content-Type:
application/json`` on writes, 404 on ``GET /api/jobs/{id}`` = no such job, a 500 whose body says
"Please use a different submission_id" = duplicate submission, ``{"stopped": false}`` is only an
error when the job is not terminal. Every call has a total timeout (2 s direct, 10 s through the
apiserver proxy, chosen by the factory) and raises only :mod:`.errors` types.

Differences from KubeRay, all on error paths: an answer that is an apiserver ``Status`` object
(proxy mode: Service missing, no endpoints, forbidden) is :class:`DashboardUnreachable`, never
"job not found"; ``DELETE``/``stop`` of an unknown job raise :class:`JobNotFound` and other
non-2xx answers raise :class:`BadResponse` where KubeRay ignores or mis-decodes them.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kuberay.api.v1.constants import RAY_AUTH_HEADER
from kuberay.http import (
    BodyTooLarge,
    ConnectionPool,
    HTTPClientError,
    InvalidRequest,
    OriginPools,
)
from kuberay.kube.paths import InvalidPathSegment, segment

from .errors import (
    BadResponse,
    Cause,
    DashboardError,
    DashboardUnreachable,
    DuplicateSubmissionId,
    JobNotFound,
    classify,
)
from .models import JobInfo, ServeApplicationStatus, ServeDetails

__all__ = [
    "DIRECT_TIMEOUT",
    "DUPLICATE_SUBMISSION_TEXT",
    "MAX_ANSWER",
    "PROXY_TIMEOUT",
    "DashboardClient",
    "client_at",
]

JOBS_PATH = "/api/jobs/"
SERVE_APPLICATIONS_PATH = "/api/serve/applications/"
SERVE_PROXY_HEALTH_PATH = "/-/healthz"
DUPLICATE_SUBMISSION_TEXT = "Please use a different submission_id"
#: KubeRay's ``RayHTTPClientDirectTimeoutSeconds`` / ``RayHTTPClientProxyTimeoutSeconds``.
DIRECT_TIMEOUT = 2.0
PROXY_TIMEOUT = 10.0
#: Most bytes of one answer read, on the wire and after gzip (a Ray head runs user code; Ray's
#: own answers for one job or the Serve applications are kilobytes).
MAX_ANSWER = 16 * 1024 * 1024
#: How much of an unexpected body goes into an error message.
_BODY_EXCERPT = 512

HeaderSource = Callable[[], Awaitable[Mapping[str, str]]]


def _excerpt(raw: bytes) -> str:
    text = raw[:_BODY_EXCERPT].decode("utf-8", "replace").strip()
    return text + ("..." if len(raw) > _BODY_EXCERPT else "")


def _to_json(body: Mapping[str, Any], what: str) -> bytes:
    """Compact JSON with sorted keys (Go's encoding of a map)."""
    try:
        return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    except (TypeError, ValueError) as exc:
        raise DashboardError(f"{what}: the request body is not JSON: {exc}") from exc


def _apiserver_status(raw: bytes) -> str | None:
    """The message of a Kubernetes ``Status`` body (an apiserver error, not the dashboard's)."""
    if not raw.startswith(b"{"):
        return None
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if isinstance(body, dict) and body.get("kind") == "Status" and "apiVersion" in body:
        return str(body.get("message") or body.get("reason") or "error")
    return None


def _address_of(base_url: str) -> str:
    """What errors name as the address: ``host:port`` of a direct URL, else the whole URL."""
    try:
        url = urllib.parse.urlsplit(base_url)
    except ValueError:
        return base_url
    if url.path in ("", "/") and url.netloc:
        return url.netloc
    return base_url


class DashboardClient:
    """Calls to one dashboard: ``pool``'s origin (``http://host:port``, or the apiserver
    for a proxy URL) at ``path`` below the pool's base (``""``, or the apiserver proxy path).

    ``pool`` is shared and owned by the caller (the factory). ``headers`` supplies extra
    headers per request (the apiserver credentials in proxy mode). ``on_unreachable`` is called
    when a call gets no answer (the factory drops its cached address).
    """

    def __init__(
        self,
        pool: ConnectionPool,
        path: str = "",
        *,
        timeout: float = DIRECT_TIMEOUT,
        auth_token: str | None = None,
        headers: HeaderSource | None = None,
        on_unreachable: Callable[[], None] | None = None,
    ) -> None:
        self.pool = pool
        self.path = path.rstrip("/")
        self.base_url = f"{pool.scheme}://{pool.authority}{pool.base_path}{self.path}"
        self.timeout = timeout
        self._auth_token = auth_token or None
        self._headers = headers
        self._on_unreachable = on_unreachable
        self.address = _address_of(self.base_url)

    def __repr__(self) -> str:
        return f"DashboardClient({self.base_url!r}, timeout={self.timeout})"

    # ----- transport ----------------------------------------------------------------------
    async def _request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: bytes | None = None,
        what: str,
    ) -> tuple[int, bytes]:
        """Send one request; (status, body). Raises DashboardUnreachable when no answer."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers: dict[str, str] = {}
        if self._headers is not None:
            try:
                headers.update(await self._headers())
            except Exception as exc:  # credentials refresh (exec plugin, token file)
                raise DashboardUnreachable(f"{what}: no credentials for {url}: {exc}") from exc
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._auth_token is not None:
            headers[RAY_AUTH_HEADER] = f"Bearer {self._auth_token}"
        try:
            async with asyncio.timeout(self.timeout):
                resp = await self.pool.request(
                    method,
                    self.path + path,
                    params=dict(query) if query else None,
                    headers=headers.items(),
                    body=body,
                )
                async with resp:
                    raw = await resp.read(limit=MAX_ANSWER)
                status = resp.status
        except InvalidRequest as exc:  # nothing was sent: not the dashboard's fault
            raise DashboardError(f"{what}: {method} {url}: {exc}") from exc
        except BodyTooLarge as exc:
            raise BadResponse(
                f"{what}: {method} {url}: {exc}",
                status=resp.status,
                address=self.address,
                detail=str(exc),
            ) from exc
        except TimeoutError as exc:
            self._unreachable()
            raise DashboardUnreachable(
                f"{what}: {method} {url} got no answer within {self.timeout:g}s",
                cause=Cause.TIMEOUT,
                address=self.address,
                detail=f"{self.timeout:g}s",
            ) from exc
        except (HTTPClientError, OSError, ValueError) as exc:
            self._unreachable()
            cause = classify(exc)
            inner = getattr(exc, "os_error", None) or exc
            detail = f"{self.timeout:g}s" if cause is Cause.TIMEOUT else str(inner)
            raise DashboardUnreachable(
                f"{what}: {method} {url} failed: {exc}",
                cause=cause if cause is not Cause.OTHER else Cause.UNREACHABLE,
                address=self.address,
                detail=detail,
            ) from exc
        status_message = _apiserver_status(raw) if status >= 400 else None
        if status_message is not None:
            self._unreachable()
            raise DashboardUnreachable(
                f"{what}: the apiserver proxy answered {status} for {url}: {status_message}",
                address=self.address,
                detail=f"the apiserver proxy answered {status}: {status_message}",
            )
        if status in (401, 403):
            raise BadResponse(
                f"{what}: the dashboard refused the request ({status}): {_excerpt(raw)}; "
                "check the cluster's auth token Secret",
                status=status,
                address=self.address,
                detail=_excerpt(raw),
            )
        return status, raw

    def _unreachable(self) -> None:
        if self._on_unreachable is not None:
            self._on_unreachable()

    @staticmethod
    def _fail(what: str, status: int, raw: bytes) -> BadResponse:
        return BadResponse(f"{what} fail: {status} {_excerpt(raw)}", status=status)

    @staticmethod
    def _decode(what: str, status: int, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError:
            raise BadResponse(
                f"{what} failed. Failed to unmarshal bytes: {_excerpt(raw)}", status=status
            ) from None

    @staticmethod
    def _job_path(job_id: str, suffix: str = "") -> str:
        try:
            return JOBS_PATH + segment("job id", job_id) + suffix
        except InvalidPathSegment as exc:
            raise DashboardError(f"cannot ask the dashboard about this job: {exc}") from exc

    # ----- jobs ---------------------------------------------------------------------------
    async def get_job_info(self, job_id: str) -> JobInfo:
        """``GET /api/jobs/{job_id}``; raises JobNotFound on 404."""
        status, raw = await self._request("GET", self._job_path(job_id), what="GetJobInfo")
        if status == 404:
            raise JobNotFound(job_id)
        if not 200 <= status < 300:
            raise self._fail("GetJobInfo", status, raw)
        try:
            return JobInfo.from_json(self._decode("GetJobInfo", status, raw))
        except ValueError as exc:
            raise BadResponse(f"GetJobInfo fail: {exc}", status=status) from None

    async def list_jobs(self) -> list[JobInfo]:
        """``GET /api/jobs/``; an empty list on 404 (as KubeRay)."""
        status, raw = await self._request("GET", JOBS_PATH, what="ListJobs")
        if status == 404:
            return []
        if not 200 <= status < 300:
            raise self._fail("ListJobs", status, raw)
        body = self._decode("ListJobs", status, raw)
        if not isinstance(body, list):
            raise BadResponse("ListJobs fail: expected a JSON list", status=status)
        try:
            return [JobInfo.from_json(item) for item in body]
        except ValueError as exc:
            raise BadResponse(f"ListJobs fail: {exc}", status=status) from None

    async def submit_job(self, body: Mapping[str, Any]) -> str:
        """``POST /api/jobs/`` with ``body`` (a ``JobSubmitRequest``); the job id Ray returns.

        Raises DuplicateSubmissionId when ``body["submission_id"]`` is already taken.
        """
        payload = _to_json(body, "SubmitJob")
        status, raw = await self._request("POST", JOBS_PATH, body=payload, what="SubmitJob")
        if not 200 <= status < 300:
            if status == 500 and DUPLICATE_SUBMISSION_TEXT.encode() in raw:
                raise DuplicateSubmissionId(str(body.get("submission_id") or ""))
            raise self._fail("SubmitJob", status, raw)
        answer = self._decode("SubmitJob", status, raw)
        job_id = answer.get("job_id") if isinstance(answer, dict) else None
        if not isinstance(job_id, str):
            raise BadResponse(f"SubmitJob fail: {_excerpt(raw)}", status=status)
        return job_id

    async def get_job_log(self, job_id: str) -> str | None:
        """``GET /api/jobs/{job_id}/logs``; None when the job is unknown (404, as KubeRay)."""
        status, raw = await self._request("GET", self._job_path(job_id, "/logs"), what="GetJobLog")
        if status == 404:
            return None
        if not 200 <= status < 300:
            raise self._fail("GetJobLog", status, raw)
        answer = self._decode("GetJobLog", status, raw)
        logs = answer.get("logs", "") if isinstance(answer, dict) else None
        if not isinstance(logs, str):
            raise BadResponse(f"GetJobLog fail: {_excerpt(raw)}", status=status)
        return logs

    async def stop_job(self, job_id: str) -> None:
        """``POST /api/jobs/{job_id}/stop``. ``{"stopped": false}`` is fine when the job is
        already terminal (checked with a GET), an error otherwise (KubeRay's rule)."""
        status, raw = await self._request(
            "POST", self._job_path(job_id, "/stop"), body=b"", what="StopJob"
        )
        if status == 404:
            raise JobNotFound(job_id)
        if not 200 <= status < 300:
            raise self._fail("StopJob", status, raw)
        answer = self._decode("StopJob", status, raw)
        stopped = answer.get("stopped") if isinstance(answer, dict) else None
        if not isinstance(stopped, bool):
            raise BadResponse(f"StopJob fail: {_excerpt(raw)}", status=status)
        if stopped:
            return
        info = await self.get_job_info(job_id)
        if not info.terminal:
            raise DashboardError(
                f"failed to stop job {job_id}: the dashboard did not stop it and it is "
                f"{info.status or 'in no known state'}"
            )

    async def delete_job(self, job_id: str) -> None:
        """``DELETE /api/jobs/{job_id}`` (Ray refuses to delete a job that is not terminal)."""
        status, raw = await self._request("DELETE", self._job_path(job_id), what="DeleteJob")
        if status == 404:
            raise JobNotFound(job_id)
        if not 200 <= status < 300:
            raise self._fail("DeleteJob", status, raw)

    # ----- serve --------------------------------------------------------------------------
    async def get_serve_details(self) -> ServeDetails:
        """``GET /api/serve/applications/?api_type=declarative``."""
        status, raw = await self._request(
            "GET",
            SERVE_APPLICATIONS_PATH,
            query={"api_type": "declarative"},
            what="GetServeDetails",
        )
        if not 200 <= status < 300:
            raise self._fail("GetServeDetails", status, raw)
        try:
            return ServeDetails.from_json(self._decode("GetServeDetails", status, raw))
        except ValueError as exc:
            raise BadResponse(f"GetServeDetails fail: {exc}", status=status) from None

    async def get_multi_application_status(self) -> dict[str, ServeApplicationStatus]:
        """The applications of :meth:`get_serve_details`, by name."""
        return dict((await self.get_serve_details()).applications)

    async def update_serve_applications(self, config: Mapping[str, Any] | bytes) -> None:
        """``PUT /api/serve/applications/`` with a Serve config (a mapping is sent as compact
        JSON with sorted keys, as KubeRay marshals it); any non-2xx answer is an error."""
        payload = config if isinstance(config, bytes) else _to_json(config, "UpdateDeployments")
        status, raw = await self._request(
            "PUT", SERVE_APPLICATIONS_PATH, body=payload, what="UpdateDeployments"
        )
        if not 200 <= status < 300:
            raise self._fail("UpdateDeployments", status, raw)

    async def check_proxy_health(self) -> None:
        """``GET /-/healthz`` on a Serve proxy client; returns only on 200."""
        status, raw = await self._request(
            "GET", SERVE_PROXY_HEALTH_PATH, what="CheckProxyActorHealth"
        )
        if status != 200:
            raise BadResponse(
                f"CheckProxyActorHealth fails. status code: {status}, body: {_excerpt(raw)}",
                status=status,
            )

    async def gcs_healthy(self) -> bool:
        """``GET /api/gcs_healthz`` answers 200 with ``success`` (the submitter's wait loop)."""
        status, raw = await self._request("GET", "/api/gcs_healthz", what="GcsHealthz")
        return status == 200 and b"success" in raw


def client_at(pools: OriginPools, url: str, **options: Any) -> DashboardClient:
    """A :class:`DashboardClient` for the dashboard at ``url`` (``http://host:port`` or a
    URL with a path, e.g. an apiserver proxy), over ``pools``' connections to its origin;
    ``options`` are :class:`DashboardClient`'s keywords."""
    return DashboardClient(pools.pool(url), urllib.parse.urlsplit(url).path, **options)
