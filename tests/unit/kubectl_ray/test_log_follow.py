"""``kubectl ray logs NAME --follow`` streams the head pod's log (``follow=true``) as it
arrives, through a stand-in apiserver on 127.0.0.1 (kwok's pods have no kubelet logs)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from kuberay.kubectl_ray import run

NS = "team"


def pod(name: str, node_type: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NS,
                     "labels": {"ray.io/cluster": "demo", "ray.io/node-type": node_type}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "ray-" + node_type}]},
        "status": {"phase": "Running"},
    }  # fmt: skip


@pytest.fixture
async def apiserver() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    asked: list[dict[str, str]] = []

    async def discovery(_: web.Request) -> web.Response:
        res = {"name": "rayclusters", "kind": "RayCluster", "namespaced": True}
        return web.json_response({"resources": [res]})

    async def cluster(_: web.Request) -> web.Response:
        return web.json_response({"kind": "RayCluster", "metadata": {"name": "demo"}})

    async def pods(request: web.Request) -> web.Response:
        selector = request.query.get("labelSelector", "")
        items = [pod("demo-head", "head"), pod("demo-worker-a", "worker")]
        items = [p for p in items if p["metadata"]["labels"]["ray.io/node-type"] in selector]
        return web.json_response({"kind": "PodList", "metadata": {}, "items": items})

    async def log(request: web.Request) -> web.StreamResponse:
        asked.append({"pod": request.match_info["pod"], **request.query})
        resp = web.StreamResponse()
        await resp.prepare(request)
        for i in range(3):
            await resp.write(f"line {i} of {request.match_info['pod']}\n".encode())
            await asyncio.sleep(0.01)
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/apis/ray.io/v1", discovery)
    app.router.add_get("/apis/ray.io/v1/namespaces/team/rayclusters/demo", cluster)
    app.router.add_get("/api/v1/namespaces/team/pods", pods)
    app.router.add_get("/api/v1/namespaces/team/pods/{pod}/log", log)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", asked
    finally:
        await runner.cleanup()


async def test_logs_follow_streams_the_head_pod(
    apiserver: tuple[str, list[dict[str, str]]], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, asked = apiserver
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # no kubeconfig: --server alone
    out, err = io.StringIO(), io.StringIO()
    argv = ["--server", server, "-n", NS]
    code = await run([*argv, "logs", "demo", "--follow"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == "line 0 of demo-head\nline 1 of demo-head\nline 2 of demo-head\n"
    assert asked == [{"pod": "demo-head", "container": "ray-head", "follow": "true"}]

    out = io.StringIO()
    code = await run([*argv, "log", "demo", "-f", "--node-type", "worker"], stdout=out, stderr=err)
    assert code == 0
    assert out.getvalue().splitlines()[0] == "line 0 of demo-worker-a"

    code = await run([*argv, "log", "demo", "-f", "--out-dir", "x"], stdout=out, stderr=err)
    assert code == 1 and "--follow is incompatible with --out-dir" in err.getvalue()
