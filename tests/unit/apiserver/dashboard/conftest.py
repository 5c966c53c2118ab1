"""The dashboard routes' shared fixture: an API server in caller mode with the dashboard on,
over an upstream with nothing behind it (127.0.0.1:9), on a free loopback port. A module
that needs another server (a fake history server, service-account mode) defines its own
``server``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kuberay.apiserver.options import CALLER, ApiServerOptions
from tests.apiserver_serving import api_server


@pytest.fixture
async def server() -> AsyncIterator[str]:
    """The server's base URL (``http://127.0.0.1:PORT``)."""
    async with api_server(ApiServerOptions(auth_mode=CALLER, enable_dashboard=True)) as url:
        yield url
