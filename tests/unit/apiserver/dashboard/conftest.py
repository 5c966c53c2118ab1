"""The dashboard routes' shared fixture: an API server in caller mode with the dashboard on,
over an upstream with nothing behind it (127.0.0.1:9), on a free loopback port. A module
that needs another server (a fake history server, service-account mode) defines its own
``server``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.options import CALLER, ApiServerOptions
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig


@pytest.fixture
async def server() -> AsyncIterator[str]:
    """The server's base URL (``http://127.0.0.1:PORT``)."""
    options = ApiServerOptions(auth_mode=CALLER, enable_dashboard=True)
    upstream = Upstream(RestConfig("http://127.0.0.1:9"))  # nothing behind it
    runner = web.AppRunner(make_app(options, upstream))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
        await upstream.close()
