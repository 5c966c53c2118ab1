"""The Manager's Events go through a client (token bucket) of their own, so a
reconciler that has used up its rate limit never holds Events back, and Events never
use the reconcilers' tokens; the events client still obeys the write guard."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry

from kuberay.kube import WriteRefused
from kuberay.reconcile import Manager
from kuberay.reconcile.options import ManagerOptions
from tests.unit.kube.test_kube_client_http import http_server, make_client


def _manager(port: int, **client_kw: Any) -> Manager:
    return Manager(
        make_client(port, **client_kw),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            handle_signals=False,
        ),
        registry=CollectorRegistry(),
    )


def _pod(name: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


async def test_events_are_written_while_the_reconcile_client_waits_for_a_token() -> None:
    paths: list[str] = []

    async def echo(request: web.Request) -> web.StreamResponse:
        paths.append(request.path)
        body = await request.read()
        return web.Response(body=body or b"{}", content_type="application/json")

    async with http_server(echo) as port:
        # Three tokens, then one more every 1000 s: the fourth pod create must wait.
        mgr = _manager(port, qps=0.001, burst=3)
        assert mgr.event_client.throttle is not mgr.client.throttle
        try:
            for name in ("p1", "p2", "p3"):
                await mgr.client.create(_pod(name))
            blocked = asyncio.create_task(mgr.client.create(_pod("p4")))
            recorder = mgr.event_recorder("kuberay-operator")
            for name in ("a", "b", "c"):
                recorder.event(_pod(name), "Normal", "Created", f"Created pod {name}")
            await asyncio.wait_for(recorder.flush(), 20)
            assert recorder.written == 3
            assert not blocked.done(), "the pod create still waits for its token"
            event_paths = [p for p in paths if p.endswith("/events")]
            assert len(event_paths) == 3
            blocked.cancel()
        finally:
            await mgr.client.close()


async def test_the_events_client_obeys_the_managers_write_guard() -> None:
    async def ok(request: web.Request) -> web.StreamResponse:
        return web.Response(body=orjson.dumps({}), content_type="application/json")

    async with http_server(ok) as port:
        mgr = _manager(port)
        allowed = [True]
        mgr.client.set_write_guard(lambda: allowed[0])
        try:
            await mgr.event_client.create(_pod("x"))
            allowed[0] = False
            with pytest.raises(WriteRefused):
                await mgr.event_client.create(_pod("y"))
        finally:
            await mgr.client.close()
