"""The API server's application served in the test process on 127.0.0.1 (a free port), as
the unit, integration and e2e tests start it: one place for the runner, the site and the
clean-up."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.options import ApiServerOptions
from kuberay.apiserver.retry import RetryPolicy
from kuberay.apiserver.upstream import Upstream
from kuberay.kube.restconfig import RestConfig

#: A kube-apiserver address with nothing behind it (the discard port: refused at once).
NOTHING_BEHIND = "http://127.0.0.1:9"


@contextlib.asynccontextmanager
async def api_server(
    options: ApiServerOptions,
    upstream: Upstream | None = None,
    *,
    wired: bool = False,
    policy: RetryPolicy | None = None,
    **runner_args: Any,
) -> AsyncIterator[str]:
    """Serve ``make_app(options, upstream)`` until the block ends; its base URL
    (``http://127.0.0.1:PORT``). ``upstream`` defaults to one with nothing behind it; it is
    closed afterwards either way. ``wired`` adds the compute-template routes and body rewrite
    as ``kuberay-apiserver`` does; ``runner_args`` go to ``web.AppRunner``."""
    if upstream is None:
        upstream = Upstream(RestConfig(NOTHING_BEHIND))
    extras: dict[str, Any] = {}
    if wired:
        from kuberay.apiserver.wiring import install

        extras["rewrite"], extras["extra_routes"] = install()
    runner = web.AppRunner(make_app(options, upstream, policy=policy, **extras), **runner_args)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
        await upstream.close()
