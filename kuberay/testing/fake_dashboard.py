"""An in-process stand-in for a Ray head's dashboard (Jobs and Serve REST APIs) for tests.

It answers with the JSON shapes Ray's dashboard uses (``JobDetails``, ``JobSubmitResponse``,
``JobStopResponse``, ``JobDeleteResponse``, ``JobLogsResponse``, ``ServeInstanceDetails``) and
the error texts KubeRay keys on (404 "Job <id> does not exist", 500 "... Please use a different
submission_id"). Nothing runs: jobs stay ``PENDING`` until a test moves them with
:meth:`FakeDashboard.set_job_status`; applications stay ``DEPLOYING`` until
:meth:`FakeDashboard.set_app_status`.

Test controls: ``hang`` (requests never answer, until the fake stops), ``fail_with`` (answer
every request with that HTTP status), ``require_token`` (Ray token auth: 401 without the
``x-ray-authorization: Bearer <token>`` header, 403 with a wrong one; ``/api/gcs_healthz`` stays
open as the submitter's health probe needs it), ``stop_takes_effect`` (False: a stop request of
a live job answers ``{"stopped": false}`` and changes nothing), ``proxy_healthy`` (the Serve
proxy's ``/-/healthz`` on ``serve_port``), and ``requests``, the ``(method, path)`` log.

Only bind it to 127.0.0.0/8. A test makes it reachable by the operator by writing its host as
the head pod's ``status.podIP`` (pod Ready, container port ``dashboard`` = :attr:`port`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from kuberay.api.v1.constants import RAY_AUTH_HEADER

__all__ = ["FakeDashboard"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

JOB_STATUSES = ("PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED")
TERMINAL = ("STOPPED", "SUCCEEDED", "FAILED")

# Ray's default messages per status (job_manager / job_supervisor).
DEFAULT_MESSAGES = {
    "PENDING": (
        "Job has not started yet. It may be waiting for resources (CPUs, GPUs, memory, custom "
        "resources) to become available. It may be waiting for the runtime environment to be "
        "set up."
    ),
    "RUNNING": "Job is currently running.",
    "SUCCEEDED": "Job finished successfully.",
    "STOPPED": "Job was intentionally stopped.",
    "FAILED": "Job entrypoint command failed with exit code 1.",
}

_SUBMIT_FIELDS = {
    "entrypoint",
    "submission_id",
    "job_id",
    "runtime_env",
    "metadata",
    "entrypoint_num_cpus",
    "entrypoint_num_gpus",
    "entrypoint_memory",
    "entrypoint_resources",
}


def _now_ms() -> int:
    return int(time.time() * 1000)


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(text=json.dumps(body), content_type="application/json", status=status)


def _traceback(exc_type: str, message: str) -> str:
    """The shape of the ``traceback.format_exc()`` text Ray's dashboard answers errors with."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/dashboard/modules/job/'
        'job_head.py", line 1, in submit_job\n'
        f"{exc_type}: {message}\n"
    )


def _check_submit_body(body: Any) -> str | None:
    """Why ``body`` is not a valid ``JobSubmitRequest`` (None when it is)."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    unknown = sorted(set(body) - _SUBMIT_FIELDS)
    if unknown:
        return f"__init__() got an unexpected keyword argument '{unknown[0]}'"
    if not isinstance(body.get("entrypoint"), str):
        return "entrypoint must be a string, got " + type(body.get("entrypoint")).__name__
    for key in ("submission_id", "job_id"):
        if body.get(key) is not None and not isinstance(body[key], str):
            return f"{key} must be a string if provided"
    if body.get("runtime_env") is not None and not isinstance(body["runtime_env"], dict):
        return "runtime_env must be a dict"
    metadata = body.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        return "metadata must be a dict of strings to strings"
    for key in ("entrypoint_num_cpus", "entrypoint_num_gpus", "entrypoint_memory"):
        value = body.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"{key} must be a number"
    resources = body.get("entrypoint_resources")
    if resources is not None and not (
        isinstance(resources, dict)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in resources.values())
    ):
        return "entrypoint_resources must be a dict of strings to numbers"
    return None


class FakeDashboard:
    """A fake Ray dashboard on ``host:port`` (``port=0``: any free port, read :attr:`port`
    after :meth:`start`), plus a fake Serve proxy on ``serve_port`` when given."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 8265, *, serve_port: int | None = None
    ) -> None:
        self.host = host
        self.port = port
        self.serve_port = serve_port
        #: Jobs by submission id, each the JSON ``GET /api/jobs/{id}`` answers.
        self.jobs: dict[str, dict[str, Any]] = {}
        #: Logs ``GET /api/jobs/{id}/logs`` answers, by submission id.
        self.job_logs: dict[str, str] = {}
        #: Serve applications by name, each the JSON ``GET /api/serve/applications/`` lists.
        self.applications: dict[str, dict[str, Any]] = {}
        #: The last body ``PUT /api/serve/applications/`` accepted (None before any).
        self.serve_config: dict[str, Any] | None = None
        #: Every body ``PUT /api/serve/applications/`` accepted, in order.
        self.serve_config_history: list[dict[str, Any]] = []
        #: Called with each accepted ``PUT /api/serve/applications/`` body, as it is accepted:
        #: a test records what else was true at that moment (ordering, not polling).
        self.on_serve_config: Callable[[dict[str, Any]], None] | None = None
        self.hang = False
        self.fail_with: int | None = None
        self.require_token: str | None = None
        self.stop_takes_effect = True
        self.proxy_healthy = True
        #: ``(method, path)`` of every request received (dashboard and Serve proxy), in order.
        self.requests: list[tuple[str, str]] = []
        #: Headers of every request received, in the same order as :attr:`requests`.
        self.request_headers: list[dict[str, str]] = []
        self._runners: list[web.AppRunner] = []
        self._release = asyncio.Event()
        self._driver_ids = 0

    # ----- lifecycle ----------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``host:port`` of the dashboard (what KubeRay calls the dashboard URL)."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    async def start(self) -> None:
        """Listen on the dashboard port (and the Serve proxy port when set)."""
        self._release = asyncio.Event()
        self.port = await self._listen(self._dashboard_app(), self.port)
        if self.serve_port is not None:
            self.serve_port = await self._listen(self._proxy_app(), self.serve_port)

    async def stop(self) -> None:
        """Close the listeners; hanging requests are answered 503 and released."""
        self._release.set()
        runners, self._runners = self._runners, []
        for runner in runners:
            await runner.cleanup()

    async def __aenter__(self) -> FakeDashboard:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _listen(self, app: web.Application, port: int) -> int:
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, self.host, port, reuse_address=True)
        await site.start()
        self._runners.append(runner)
        sockets = getattr(site._server, "sockets", None)
        return int(sockets[0].getsockname()[1]) if sockets else port

    # ----- test controls ------------------------------------------------------------------
    def add_job(
        self,
        submission_id: str,
        entrypoint: str = "python -c 'pass'",
        *,
        status: str = "PENDING",
        message: str = "",
        metadata: Mapping[str, str] | None = None,
        runtime_env: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a job as if submitted (for tests that start from an existing job)."""
        job = self._new_job(
            {
                "entrypoint": entrypoint,
                "submission_id": submission_id,
                "metadata": dict(metadata) if metadata is not None else None,
                "runtime_env": dict(runtime_env) if runtime_env is not None else None,
            }
        )
        self.jobs[submission_id] = job
        if status != "PENDING" or message:
            self.set_job_status(submission_id, status, message)
        return job

    def set_job_status(self, job_id: str, status: str, message: str = "") -> None:
        """Move a job to ``status`` as Ray would (driver id once running, ``end_time`` once
        terminal, ``error_type`` on failure); ``message`` empty: Ray's default text."""
        if status not in JOB_STATUSES:
            raise ValueError(f"unknown Ray job status {status!r}")
        job = self._find(job_id)
        if job is None:
            raise KeyError(job_id)
        job["status"] = status
        job["message"] = message or DEFAULT_MESSAGES[status]
        if status != "PENDING" and job.get("job_id") is None:
            self._driver_ids += 1
            driver = f"{self._driver_ids:02x}000000"
            job["job_id"] = driver
            job["driver_info"] = {"id": driver, "node_ip_address": self.host, "pid": "4242"}
            job["driver_agent_http_address"] = f"http://{self.host}:52365"
            job["driver_node_id"] = "f" * 56
        if status in TERMINAL:
            job["end_time"] = job.get("end_time") or _now_ms()
            job["driver_exit_code"] = {"SUCCEEDED": 0, "FAILED": 1, "STOPPED": None}[status]
            job["error_type"] = "JOB_ENTRYPOINT_COMMAND_ERROR" if status == "FAILED" else None
        else:
            job["end_time"] = None

    def set_app_status(
        self,
        name: str,
        status: str,
        message: str = "",
        *,
        deployments: Mapping[str, str] | None = None,
    ) -> None:
        """Set a Serve application's status (and its deployments'; by default all ``HEALTHY``
        when the application is ``RUNNING``, else unchanged)."""
        app = self.applications[name]
        app["status"] = status
        app["message"] = message
        for dep_name, dep in app["deployments"].items():
            if deployments is not None and dep_name in deployments:
                dep["status"] = deployments[dep_name]
            elif deployments is None and status == "RUNNING":
                dep["status"] = "HEALTHY"
        for dep_name, dep_status in (deployments or {}).items():
            if dep_name not in app["deployments"]:
                app["deployments"][dep_name] = self._new_deployment(dep_name, dep_status)

    def requests_to(self, path_prefix: str) -> list[tuple[str, str]]:
        """The logged requests whose path starts with ``path_prefix``."""
        return [r for r in self.requests if r[1].startswith(path_prefix)]

    # ----- apps and middleware ------------------------------------------------------------
    def _dashboard_app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware(auth=True)])
        r = app.router
        r.add_get("/api/gcs_healthz", self._gcs_healthz)
        r.add_get("/api/version", self._version)
        r.add_get("/api/jobs/", self._list_jobs)
        r.add_post("/api/jobs/", self._submit_job)
        r.add_get("/api/jobs/{id}", self._get_job)
        r.add_delete("/api/jobs/{id}", self._delete_job)
        r.add_get("/api/jobs/{id}/logs", self._get_logs)
        r.add_post("/api/jobs/{id}/stop", self._stop_job)
        r.add_get("/api/serve/applications/", self._get_serve)
        r.add_put("/api/serve/applications/", self._put_serve)
        return app

    def _proxy_app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware(auth=False)])
        app.router.add_get("/-/healthz", self._proxy_healthz)
        return app

    def _middleware(self, *, auth: bool) -> Any:
        @web.middleware
        async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.requests.append((request.method, request.path))
            self.request_headers.append(dict(request.headers))
            if self.hang:
                await self._release.wait()
                return web.Response(status=503, text="fake dashboard stopped")
            if self.fail_with is not None:
                return web.Response(status=self.fail_with, text="fake dashboard: forced failure")
            if auth and self.require_token is not None and request.path != "/api/gcs_healthz":
                given = request.headers.get(RAY_AUTH_HEADER)
                if given is None:
                    return web.Response(
                        status=401, text="Unauthorized: Missing authentication token"
                    )
                if given != f"Bearer {self.require_token}":
                    return web.Response(status=403, text="Forbidden: Invalid authentication token")
            return await handler(request)

        return middleware

    # ----- jobs ---------------------------------------------------------------------------
    def _find(self, job_or_submission_id: str) -> dict[str, Any] | None:
        job = self.jobs.get(job_or_submission_id)
        if job is not None:
            return job
        by_driver = (j for j in self.jobs.values() if j.get("job_id") == job_or_submission_id)
        return next(by_driver, None)

    def _new_job(self, body: Mapping[str, Any]) -> dict[str, Any]:
        submission_id = body.get("submission_id") or body.get("job_id")
        if not submission_id:
            submission_id = "raysubmit_" + secrets.token_hex(8)
        return {
            "type": "SUBMISSION",
            "job_id": None,
            "submission_id": submission_id,
            "driver_info": None,
            "status": "PENDING",
            "entrypoint": body["entrypoint"],
            "message": DEFAULT_MESSAGES["PENDING"],
            "error_type": None,
            "start_time": _now_ms(),
            "end_time": None,
            "metadata": body.get("metadata") or {},
            "runtime_env": body.get("runtime_env") or {},
            "driver_agent_http_address": None,
            "driver_node_id": None,
            "driver_exit_code": None,
            "entrypoint_num_cpus": body.get("entrypoint_num_cpus"),
            "entrypoint_num_gpus": body.get("entrypoint_num_gpus"),
            "entrypoint_memory": body.get("entrypoint_memory"),
            "entrypoint_resources": body.get("entrypoint_resources"),
        }

    @staticmethod
    def _not_found(job_id: str) -> web.Response:
        return web.Response(status=404, text=f"Job {job_id} does not exist")

    async def _gcs_healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="success")

    async def _version(self, request: web.Request) -> web.Response:
        return _json(
            {"version": "4", "ray_version": "2.52.0", "ray_commit": "0" * 40, "session_name": "s"}
        )

    async def _list_jobs(self, request: web.Request) -> web.Response:
        return _json([copy.deepcopy(j) for j in self.jobs.values()])

    async def _submit_job(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError as exc:
            return web.Response(status=400, text=_traceback("JSONDecodeError", str(exc)))
        problem = _check_submit_body(body)
        if problem is not None:
            return web.Response(status=400, text=_traceback("TypeError", problem))
        job = self._new_job(body)
        sid = job["submission_id"]
        if sid in self.jobs:
            # Ray: the job agent answers 400 with the ValueError; the head wraps it in a 500.
            inner = _traceback(
                "ValueError",
                f"Job with submission_id {sid} already exists. "
                "Please use a different submission_id.",
            )
            text = _traceback("RuntimeError", f"Request failed with status code 400: {inner}.")
            return web.Response(status=500, text=text)
        self.jobs[sid] = job
        return _json({"job_id": sid, "submission_id": sid})

    async def _get_job(self, request: web.Request) -> web.Response:
        job_id = request.match_info["id"]
        job = self._find(job_id)
        return self._not_found(job_id) if job is None else _json(job)

    async def _get_logs(self, request: web.Request) -> web.Response:
        job_id = request.match_info["id"]
        job = self._find(job_id)
        if job is None:
            return self._not_found(job_id)
        return _json({"logs": self.job_logs.get(job["submission_id"], "")})

    async def _stop_job(self, request: web.Request) -> web.Response:
        job_id = request.match_info["id"]
        job = self._find(job_id)
        if job is None:
            return self._not_found(job_id)
        if job["status"] in TERMINAL or not self.stop_takes_effect:
            return _json({"stopped": False})
        self.set_job_status(job["submission_id"], "STOPPED")
        return _json({"stopped": True})

    async def _delete_job(self, request: web.Request) -> web.Response:
        job_id = request.match_info["id"]
        job = self._find(job_id)
        if job is None:
            return self._not_found(job_id)
        sid = job["submission_id"]
        if job["status"] not in TERMINAL:
            text = _traceback(
                "RuntimeError",
                f"Attempted to delete job with submission_id {sid}, but it is in the "
                f"non-terminal state {job['status']}. Please stop the job before deleting it.",
            )
            return web.Response(status=500, text=text)
        del self.jobs[sid]
        self.job_logs.pop(sid, None)
        return _json({"deleted": True})

    # ----- serve --------------------------------------------------------------------------
    @staticmethod
    def _new_deployment(name: str, status: str = "UPDATING") -> dict[str, Any]:
        return {
            "name": name,
            "status": status,
            "status_trigger": "CONFIG_UPDATE_STARTED",
            "message": "",
            "deployment_config": {"name": name},
            "target_num_replicas": 1,
            "required_resources": {"CPU": 1},
            "replicas": [],
        }

    async def _get_serve(self, request: web.Request) -> web.Response:
        target_capacity = (self.serve_config or {}).get("target_capacity")
        return _json(
            {
                "controller_info": {"node_id": "f" * 56, "node_ip": self.host},
                "proxy_location": "EveryNode",
                "http_options": {"host": "0.0.0.0", "port": self.serve_port or 8000},
                "grpc_options": {"port": 9000, "grpc_servicer_functions": []},
                "proxies": {},
                "deploy_mode": "MULTI_APP",
                "applications": copy.deepcopy(self.applications),
                "target_capacity": target_capacity,
                "target_groups": [],
            }
        )

    async def _put_serve(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError as exc:
            return web.Response(status=400, text=_traceback("JSONDecodeError", str(exc)))
        apps = body.get("applications") if isinstance(body, dict) else None
        if not isinstance(apps, list) or not all(isinstance(a, dict) for a in apps):
            return web.Response(
                status=400, text=_traceback("ValidationError", "applications: a list required")
            )
        old = self.applications
        new: dict[str, dict[str, Any]] = {}
        for config in apps:
            name = str(config.get("name") or "default")
            previous = old.get(name)
            if previous is not None and previous["deployed_app_config"] == config:
                new[name] = previous
                continue
            deployments = {
                str(d.get("name")): self._new_deployment(str(d.get("name")))
                for d in config.get("deployments") or []
                if isinstance(d, dict) and d.get("name")
            }
            new[name] = {
                "name": name,
                "route_prefix": config.get("route_prefix", "/"),
                "docs_path": None,
                "status": "DEPLOYING",
                "message": "",
                "last_deployed_time_s": time.time(),
                "deployed_app_config": config,
                "source": "declarative",
                "deployments": deployments,
            }
        self.applications = new
        self.serve_config = body
        self.serve_config_history.append(body)
        if self.on_serve_config is not None:
            self.on_serve_config(body)
        return web.Response(status=200)

    async def _proxy_healthz(self, request: web.Request) -> web.Response:
        if self.proxy_healthy:
            return web.Response(text="success")
        return web.Response(status=503, text="This node is being drained.")
