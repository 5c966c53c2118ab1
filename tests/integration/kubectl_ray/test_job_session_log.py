"""``job submit`` (with a local stand-in for the Ray dashboard's job API, and this test
playing the RayJob controller's part), ``session`` with a local port already taken,
and ``log``'s errors when no kubelet can serve logs."""

from __future__ import annotations

import asyncio
import io
import re
import socket
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kuberay.kube import Client, NotFound
from tests.helpers import eventually
from tests.integration.kubectl_ray.conftest import Cli
from tests.integration.raycluster.conftest import Operator
from tests.integration.raycluster.helpers import raycluster


class FakeDashboard:
    """The parts of the Ray dashboard job API that ``job submit`` uses."""

    def __init__(self) -> None:
        self.packages: dict[str, bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.polls = 0
        self.url = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/packages/gcs/{name}", self.get_package)
        app.router.add_put("/api/packages/gcs/{name}", self.put_package)
        app.router.add_post("/api/jobs/", self.submit)
        app.router.add_get("/api/jobs/{id}", self.status)
        app.router.add_get("/api/jobs/{id}/logs", self.logs)
        return app

    async def get_package(self, request: web.Request) -> web.Response:
        return web.Response(status=200 if request.match_info["name"] in self.packages else 404)

    async def put_package(self, request: web.Request) -> web.Response:
        self.packages[request.match_info["name"]] = await request.read()
        return web.json_response({})

    async def submit(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.jobs[body["submission_id"]] = body
        return web.json_response(
            {"job_id": body["submission_id"], "submission_id": body["submission_id"]}
        )

    async def status(self, request: web.Request) -> web.Response:
        self.polls += 1
        status = "RUNNING" if self.polls < 2 else "SUCCEEDED"
        return web.json_response({"status": status})

    async def logs(self, request: web.Request) -> web.Response:
        return web.json_response({"logs": "hello from the job\n" if self.polls else ""})


@pytest.fixture
async def dashboard() -> AsyncIterator[FakeDashboard]:
    fake = FakeDashboard()
    runner = web.AppRunner(fake.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    fake.url = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        await runner.cleanup()


async def act_as_rayjob_controller(client: Client, ns: str, job: str) -> None:
    """Create the RayJob's cluster (ready) and point the RayJob's status at it."""

    async def exists() -> dict[str, Any] | None:
        try:
            return await client.get("ray.io/v1", "RayJob", job, ns)
        except NotFound:
            return None

    rayjob = await eventually(exists, timeout=30, message="RayJob created")
    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": f"{job}-cluster", "namespace": ns},
        "spec": rayjob["spec"]["rayClusterSpec"],
    }
    await client.create(cluster)
    await client.patch_status(
        "ray.io/v1", "RayCluster", f"{job}-cluster", {"status": {"state": "ready"}}, ns
    )
    await client.patch_status(
        "ray.io/v1", "RayJob", job, {"status": {"rayClusterName": f"{job}-cluster"}}, ns
    )


async def test_job_submit_follows_logs(
    cli: Cli, kclient: Client, namespace: str, dashboard: FakeDashboard, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "main.py").write_text("print('hi')\n")
    controller = asyncio.create_task(act_as_rayjob_controller(kclient, namespace, "myjob"))
    result = await cli(
        "job", "submit", "--name", "myjob", "--working-dir", str(workdir),
        "--address", dashboard.url, "--runtime-env-json", '{"env_vars": {"A": "1"}}',
        "--head-cpu", "1", "--", "python", "main.py",
    )  # fmt: skip
    await controller
    assert result.code == 0, result.err
    job_id = re.search(r"Generated submission ID for Ray job: (\S+)", result.out)
    assert job_id is not None
    assert "Submitted RayJob myjob." in result.out
    assert "hello from the job" in result.out
    assert "Current status: SUCCEEDED (RayJob: myjob" in result.out

    rayjob = await kclient.get("ray.io/v1", "RayJob", "myjob", namespace)
    assert rayjob["spec"]["submissionMode"] == "InteractiveMode"
    assert rayjob["spec"]["jobId"] == job_id.group(1)
    assert rayjob["spec"]["entrypoint"] == "python main.py"
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["resources"]["requests"]["cpu"] == "1"

    submitted = dashboard.jobs[job_id.group(1)]
    assert submitted["entrypoint"] == "python main.py"
    assert submitted["runtime_env"]["env_vars"] == {"A": "1"}
    uri = submitted["runtime_env"]["working_dir"]
    assert uri.startswith("gcs://_ray_pkg_")
    package = dashboard.packages[uri.removeprefix("gcs://")]
    assert zipfile.ZipFile(io.BytesIO(package)).read("main.py") == b"print('hi')\n"


async def test_job_submit_no_wait(
    cli: Cli, kclient: Client, namespace: str, dashboard: FakeDashboard, tmp_path: Path
) -> None:
    controller = asyncio.create_task(act_as_rayjob_controller(kclient, namespace, "quick"))
    result = await cli(
        "job", "submit", "--name", "quick", "--working-dir", str(tmp_path), "--no-wait",
        "--address", dashboard.url, "--submission-id", "raysubmit_fixed", "--", "echo", "x",
    )  # fmt: skip
    await controller
    assert result.code == 0, result.err
    assert result.out.splitlines()[-1] == "Ray job submitted with ID raysubmit_fixed"
    assert dashboard.polls == 0


async def test_job_submit_needs_a_working_dir(cli: Cli) -> None:
    result = await cli("job", "submit", "--name", "j", "--", "python", "x.py")
    assert result.code == 1
    assert "working directory is required" in result.err


async def test_job_submit_dry_run_prints_the_rayjob(
    cli: Cli, tmp_path: Path, namespace: str
) -> None:
    result = await cli(
        "job", "submit", "--name", "dry", "--working-dir", str(tmp_path), "--dry-run",
        "--submission-id", "raysubmit_x", "--", "python", "a.py",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "submissionMode: InteractiveMode" in result.out
    assert "jobId: raysubmit_x" in result.out
    assert f"namespace: {namespace}" in result.out


async def test_session_with_local_port_taken(cli: Cli) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        result = await asyncio.wait_for(
            cli("session", "raycluster/any", "--dashboard-port", str(port), "--client-port", "0"),
            timeout=30,
        )
    finally:
        taken.close()
    assert result.code == 1
    assert f"local port {port} (Ray Dashboard) is already in use" in result.err
    assert "Traceback" not in result.err


async def test_session_without_running_head(
    operator: Operator, cli: Cli, kclient: Client, namespace: str
) -> None:
    await kclient.create(raycluster("nohead", namespace, replicas=0))
    result = await asyncio.wait_for(
        cli("session", "nohead", "--dashboard-port", "0", "--client-port", "0"), timeout=30
    )
    assert result.code == 1
    assert "the head pod of RayCluster nohead is not running" in result.err


async def test_log_errors_are_actionable(
    operator: Operator, cli: Cli, kclient: Client, namespace: str, tmp_path: Path
) -> None:
    empty = await cli("log", "raycluster/none", "--out-dir", str(tmp_path))
    assert empty.code == 1 and "unable to find RayCluster none" in empty.err
    await kclient.create(raycluster("logs", namespace, replicas=0))

    async def head_exists() -> bool:
        pods, _ = await kclient.list_all(
            "v1", "Pod", namespace, label_selector="ray.io/cluster=logs"
        )
        return bool(pods)

    await eventually(head_exists, timeout=30)
    # No kubelet serves this pod (it has no node): the error says which node and why.
    result = await cli("log", "logs", "--out-dir", str(tmp_path), "--node-type", "head")
    assert result.code == 1
    assert "Error retrieving log for Ray cluster node logs-head-" in result.err
    assert "not on a node yet" in result.err and "kubectl ray why raycluster/logs" in result.err
    assert "Traceback" not in result.err
