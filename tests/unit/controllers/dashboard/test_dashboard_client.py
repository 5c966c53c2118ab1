"""DashboardClient against the fake Ray dashboard on 127.0.0.x: wire shapes, errors, auth."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.controllers.dashboard import (
    BadResponse,
    DashboardError,
    DashboardUnreachable,
    DuplicateSubmissionId,
    JobNotFound,
)
from kuberay.controllers.dashboard.client import DashboardClient, client_at
from kuberay.http import OriginPools
from kuberay.testing import FakeDashboard

HOST = "127.0.0.31"


@pytest.fixture
async def fake() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard(HOST, 0, serve_port=0) as fd:
        yield fd


@pytest.fixture
async def pools() -> AsyncIterator[OriginPools]:
    made = OriginPools()
    yield made
    await made.close()


def client_for(fake: FakeDashboard, pools: OriginPools, **kw: Any) -> DashboardClient:
    return client_at(pools, fake.url, **kw)


async def test_submit_then_get_job_info_reads_what_ray_reports(
    fake: FakeDashboard, pools: OriginPools
) -> None:
    c = client_for(fake, pools)
    body = {
        "entrypoint": "python train.py",
        "submission_id": "rayjob-abcde",
        "metadata": {"owner": "me"},
        "runtime_env": {"pip": ["numpy"]},
        "entrypoint_num_cpus": 1.5,
    }
    assert await c.submit_job(body) == "rayjob-abcde"
    info = await c.get_job_info("rayjob-abcde")
    assert (info.submission_id, info.status, info.entrypoint) == (
        "rayjob-abcde",
        "PENDING",
        "python train.py",
    )
    assert info.metadata == {"owner": "me"}
    assert info.runtime_env == {"pip": ["numpy"]}
    assert info.start_time is not None and info.end_time is None
    assert not info.terminal

    fake.set_job_status("rayjob-abcde", "FAILED", "boom")
    info = await c.get_job_info("rayjob-abcde")
    assert (info.status, info.message, info.error_type) == (
        "FAILED",
        "boom",
        "JOB_ENTRYPOINT_COMMAND_ERROR",
    )
    assert info.end_time is not None and info.end_time >= (info.start_time or 0)
    assert info.terminal
    # The POST carried the body as JSON with the content type Ray expects.
    post = fake.requests.index(("POST", "/api/jobs/"))
    assert fake.request_headers[post]["Content-Type"] == "application/json"


async def test_unknown_job_is_job_not_found(fake: FakeDashboard, pools: OriginPools) -> None:
    with pytest.raises(JobNotFound) as err:
        await client_for(fake, pools).get_job_info("nope")
    assert "nope" in str(err.value) and "does not exist" in str(err.value)


async def test_duplicate_submission_id_is_typed(fake: FakeDashboard, pools: OriginPools) -> None:
    c = client_for(fake, pools)
    await c.submit_job({"entrypoint": "echo", "submission_id": "same"})
    with pytest.raises(DuplicateSubmissionId) as err:
        await c.submit_job({"entrypoint": "echo", "submission_id": "same"})
    assert err.value.submission_id == "same"
    assert len(fake.jobs) == 1


async def test_rejected_submission_is_bad_response_with_status(
    fake: FakeDashboard, pools: OriginPools
) -> None:
    with pytest.raises(BadResponse) as err:
        await client_for(fake, pools).submit_job({"submission_id": "x"})  # no entrypoint
    assert err.value.status == 400
    assert "SubmitJob" in str(err.value)


async def test_list_jobs_and_logs(fake: FakeDashboard, pools: OriginPools) -> None:
    c = client_for(fake, pools)
    fake.add_job("a", status="RUNNING")
    fake.add_job("b", status="SUCCEEDED")
    fake.job_logs["a"] = "hello\nworld\n"
    assert sorted((j.submission_id, j.status) for j in await c.list_jobs()) == [
        ("a", "RUNNING"),
        ("b", "SUCCEEDED"),
    ]
    assert await c.get_job_log("a") == "hello\nworld\n"
    assert await c.get_job_log("missing") is None


async def test_stop_running_job(fake: FakeDashboard, pools: OriginPools) -> None:
    fake.add_job("j", status="RUNNING")
    await client_for(fake, pools).stop_job("j")
    assert fake.jobs["j"]["status"] == "STOPPED"


async def test_stop_not_stopped_is_fine_only_when_already_terminal(
    fake: FakeDashboard, pools: OriginPools
) -> None:
    c = client_for(fake, pools)
    fake.add_job("done", status="SUCCEEDED")
    await c.stop_job("done")  # {"stopped": false}, but terminal: no error
    assert fake.jobs["done"]["status"] == "SUCCEEDED"

    fake.add_job("stuck", status="RUNNING")
    fake.stop_takes_effect = False
    with pytest.raises(DashboardError) as err:
        await c.stop_job("stuck")
    assert "RUNNING" in str(err.value)
    # KubeRay's rule checks the job's status after a refused stop.
    assert fake.requests[-2:] == [("POST", "/api/jobs/stuck/stop"), ("GET", "/api/jobs/stuck")]


async def test_stop_and_delete_unknown_job(fake: FakeDashboard, pools: OriginPools) -> None:
    c = client_for(fake, pools)
    with pytest.raises(JobNotFound):
        await c.stop_job("ghost")
    with pytest.raises(JobNotFound):
        await c.delete_job("ghost")


async def test_delete_job(fake: FakeDashboard, pools: OriginPools) -> None:
    c = client_for(fake, pools)
    fake.add_job("live", status="RUNNING")
    with pytest.raises(BadResponse) as err:
        await c.delete_job("live")  # Ray refuses to delete a running job
    assert err.value.status == 500
    fake.set_job_status("live", "STOPPED")
    await c.delete_job("live")
    assert "live" not in fake.jobs


async def test_auth_header_sent_and_checked(fake: FakeDashboard, pools: OriginPools) -> None:
    fake.require_token = "s3cret"
    fake.add_job("j")
    with pytest.raises(BadResponse) as err:
        await client_for(fake, pools).get_job_info("j")
    assert err.value.status == 401 and "token" in str(err.value)
    with pytest.raises(BadResponse) as err:
        await client_for(fake, pools, auth_token="wrong").get_job_info("j")
    assert err.value.status == 403
    info = await client_for(fake, pools, auth_token="s3cret").get_job_info("j")
    assert info.submission_id == "j"
    assert fake.request_headers[-1]["x-ray-authorization"] == "Bearer s3cret"


async def test_no_auth_header_without_token(fake: FakeDashboard, pools: OriginPools) -> None:
    fake.add_job("j")
    await client_for(fake, pools).get_job_info("j")
    assert "x-ray-authorization" not in {k.lower() for k in fake.request_headers[-1]}


async def test_hanging_dashboard_times_out_as_unreachable(
    fake: FakeDashboard, pools: OriginPools
) -> None:
    fake.hang = True
    lost: list[bool] = []
    c = client_for(fake, pools, timeout=0.2, on_unreachable=lambda: lost.append(True))
    with pytest.raises(DashboardUnreachable) as err:
        await c.get_job_info("j")
    assert "no answer within 0.2s" in str(err.value)
    assert lost == [True]


async def test_refused_connection_is_unreachable(pools: OriginPools) -> None:
    async with FakeDashboard(HOST, 0) as fd:
        url = fd.url
    # The fake is stopped: nothing listens on that port any more.
    with pytest.raises(DashboardUnreachable):
        await client_at(pools, url).list_jobs()


async def test_forced_failure_status_is_bad_response(
    fake: FakeDashboard, pools: OriginPools
) -> None:
    fake.fail_with = 502
    c = client_for(fake, pools)
    for call in (c.get_job_info("j"), c.get_serve_details(), c.list_jobs()):
        with pytest.raises(BadResponse) as err:
            await call
        assert err.value.status == 502


async def test_apiserver_status_404_is_not_job_not_found(pools: OriginPools) -> None:
    """Through the apiserver proxy a 404 Status (Service gone) must not read as 'no job'."""
    from aiohttp import web

    async def status_404(request: web.Request) -> web.Response:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": 'services "rc-head-svc" not found',
            "reason": "NotFound",
            "code": 404,
        }
        return web.Response(status=404, text=json.dumps(body), content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", status_404)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        with pytest.raises(DashboardUnreachable) as err:
            await client_at(pools, f"http://{HOST}:{port}/proxy").get_job_info("j")
        assert "rc-head-svc" in str(err.value)
    finally:
        await runner.cleanup()


async def test_undecodable_job_info_is_bad_response(pools: OriginPools) -> None:
    from aiohttp import web

    async def garbage(request: web.Request) -> web.Response:
        return web.Response(text="<html>not json</html>")

    app = web.Application()
    app.router.add_get("/api/jobs/{id}", garbage)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        with pytest.raises(BadResponse) as err:
            await client_at(pools, f"http://{HOST}:{port}").get_job_info("j")
        assert err.value.status == 200 and "not json" in str(err.value)
    finally:
        await runner.cleanup()


async def test_serve_update_then_status(fake: FakeDashboard, pools: OriginPools) -> None:
    c = client_for(fake, pools)
    assert (await c.get_serve_details()).applications == {}
    config = {
        "applications": [
            {
                "name": "fruit",
                "import_path": "fruit:app",
                "route_prefix": "/fruit",
                "deployments": [{"name": "Mango"}, {"name": "Pear"}],
            }
        ]
    }
    await c.update_serve_applications(config)
    assert fake.serve_config == config
    put = fake.requests.index(("PUT", "/api/serve/applications/"))
    assert fake.request_headers[put]["Content-Type"] == "application/json"

    details = await c.get_serve_details()
    assert not details.all_running
    app = details.applications["fruit"]
    assert (app.status, app.route_prefix) == ("DEPLOYING", "/fruit")
    assert {d.name: d.status for d in app.deployments.values()} == {
        "Mango": "UPDATING",
        "Pear": "UPDATING",
    }

    fake.set_app_status("fruit", "RUNNING")
    statuses = await c.get_multi_application_status()
    assert statuses["fruit"].status == "RUNNING"
    assert {d.status for d in statuses["fruit"].deployments.values()} == {"HEALTHY"}
    assert (await c.get_serve_details()).all_running
    # Serve details are read declaratively, as KubeRay asks for them.
    assert fake.requests_to("/api/serve/applications/")[-1] == ("GET", "/api/serve/applications/")


async def test_serve_update_rejected(fake: FakeDashboard, pools: OriginPools) -> None:
    with pytest.raises(BadResponse) as err:
        await client_for(fake, pools).update_serve_applications({"applications": "nope"})
    assert err.value.status == 400 and "UpdateDeployments" in str(err.value)


async def test_serve_proxy_health(fake: FakeDashboard, pools: OriginPools) -> None:
    proxy = client_at(pools, f"http://{HOST}:{fake.serve_port}", auth_token="t")
    await proxy.check_proxy_health()
    fake.proxy_healthy = False
    with pytest.raises(BadResponse) as err:
        await proxy.check_proxy_health()
    assert err.value.status == 503
    assert fake.requests_to("/-/healthz") == [("GET", "/-/healthz")] * 2


async def test_gcs_health(fake: FakeDashboard, pools: OriginPools) -> None:
    fake.require_token = "t"  # the health endpoint stays open
    assert await client_for(fake, pools).gcs_healthy()


@pytest.mark.parametrize("gzipped", [False, True])
async def test_an_answer_over_the_cap_is_a_bad_response_naming_the_cap(
    pools: OriginPools, gzipped: bool
) -> None:
    """A Ray head runs user code: an answer of more than MAX_ANSWER bytes (on the wire, or
    after gzip: 199 KiB can expand to 214 MiB) is refused, not buffered."""
    import gzip

    from aiohttp import web

    from kuberay.controllers.dashboard.client import MAX_ANSWER

    huge = b'{"job_id": "' + b"0" * (MAX_ANSWER + 1) + b'"}'
    body = gzip.compress(huge, compresslevel=9) if gzipped else huge

    async def answer(request: web.Request) -> web.Response:
        headers = {"Content-Encoding": "gzip"} if gzipped else {}
        return web.Response(body=body, headers=headers, content_type="application/json")

    app = web.Application()
    app.router.add_get("/api/jobs/{id}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        with pytest.raises(BadResponse) as err:
            await client_at(pools, f"http://{HOST}:{port}").get_job_info("j")
        assert f"cap of {MAX_ANSWER} bytes" in str(err.value)
    finally:
        await runner.cleanup()
