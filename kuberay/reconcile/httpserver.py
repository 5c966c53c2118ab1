"""/metrics, /healthz and /readyz over aiohttp.

Health endpoints follow controller-runtime: the aggregate runs every check and
answers 200 ``ok`` or 500 with ``[+]name ok`` / ``[-]name failed: reason`` lines;
``/<endpoint>/<name>`` runs one check; ``?exclude=name`` skips one; ``?verbose``
lists every check even on success. A bind address of ``0`` or empty disables a
server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import prometheus_client
from aiohttp import web

Check = Callable[[], Awaitable[None] | None]

REGISTRY_KEY = web.AppKey("registry", prometheus_client.CollectorRegistry)


def parse_bind_address(addr: str) -> tuple[str, int] | None:
    """``":8080"`` -> ``("0.0.0.0", 8080)``; ``"127.0.0.1:0"`` keeps port 0; ``"0"``/"" -> None."""
    if addr in ("", "0"):
        return None
    host, _, port = addr.rpartition(":")
    return (host or "0.0.0.0"), int(port)


class ProbeChecks:
    """Named checks for one endpoint (healthz or readyz)."""

    def __init__(self) -> None:
        self.checks: dict[str, Check] = {}

    def add(self, name: str, check: Check) -> None:
        """Register ``check``: it passes by returning, fails by raising."""
        self.checks[name] = check

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info.get("name")
        if name:
            if name not in self.checks:
                return web.Response(status=404, text=f"no check named {name}\n")
            selected = {name: self.checks[name]}
        else:
            excluded = set(request.query.getall("exclude", []))
            selected = {k: v for k, v in self.checks.items() if k not in excluded}
        lines: list[str] = []
        failed = False
        for check_name, check in selected.items():
            try:
                result = check()
                if result is not None:
                    await result
                lines.append(f"[+]{check_name} ok")
            except Exception as exc:
                failed = True
                lines.append(f"[-]{check_name} failed: {exc}")
        if failed:
            return web.Response(status=500, text="\n".join(lines) + "\nhealthz check failed\n")
        if "verbose" in request.query:
            return web.Response(text="\n".join(lines) + "\nok\n")
        return web.Response(text="ok")


async def _metrics(request: web.Request) -> web.Response:
    registry = request.app[REGISTRY_KEY]
    body = prometheus_client.generate_latest(registry)
    return web.Response(body=body, headers={"Content-Type": prometheus_client.CONTENT_TYPE_LATEST})


class Server:
    """One aiohttp site; ``port`` is known after :meth:`start` (useful with port 0)."""

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None)
        if sockets:
            self.port = sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def metrics_app(registry: prometheus_client.CollectorRegistry) -> web.Application:
    """An app serving ``/metrics`` from ``registry``."""
    app = web.Application()
    app[REGISTRY_KEY] = registry
    app.router.add_get("/metrics", _metrics)
    return app


def probes_app(healthz: ProbeChecks, readyz: ProbeChecks) -> web.Application:
    """An app serving ``/healthz`` and ``/readyz`` (and one check by name)."""
    app = web.Application()
    app.router.add_get("/healthz", healthz.handle)
    app.router.add_get("/healthz/{name}", healthz.handle)
    app.router.add_get("/readyz", readyz.handle)
    app.router.add_get("/readyz/{name}", readyz.handle)
    return app
