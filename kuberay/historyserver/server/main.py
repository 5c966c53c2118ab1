"""``kuberay-history-server``: serve stored Ray sessions (no Kubernetes needed)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import web

from kuberay.historyserver.server.app import IDLE_TIMEOUT, make_app
from kuberay.historyserver.server.config import ConfigError, ServerOptions, parse_options
from kuberay.historyserver.server.deferred_store import DeferredStore
from kuberay.historyserver.server.kube_access import bearer_headers, open_kube
from kuberay.historyserver.server.live import LiveClusters
from kuberay.historyserver.server.live_access import ProxyAccess
from kuberay.historyserver.server.live_proxy import LiveProxy
from kuberay.historyserver.server.login import KubeLogin, login_middleware
from kuberay.historyserver.server.login import add_routes as add_login_routes
from kuberay.historyserver.server.ui_builds import UiBuilds
from kuberay.historyserver.storage.config import open_store, storage_settings
from kuberay.historyserver.storage.errors import StorageError
from kuberay.logging import configure_logging

if TYPE_CHECKING:
    from kuberay.kube.client import Client

log = structlog.get_logger("historyserver.server")


def ui_directory(options: ServerOptions) -> str:
    """Where the UI builds are looked for: ``--dashboard-ui-dir`` when given, else KubeRay's
    ``--dashboard-dir`` (default ``/dashboard``, where the server image keeps one build per
    Ray ``major.minor``) when that directory exists, else nowhere (``""``)."""
    if options.dashboard_ui_dir:
        return options.dashboard_ui_dir
    return options.dashboard_dir if os.path.isdir(options.dashboard_dir) else ""


async def run(options: ServerOptions, stop: asyncio.Event | None = None) -> None:
    """Listen at once while the store is opened in the background (``DeferredStore``: a
    request waits for it; a store that cannot be opened ends the run with its error), serve
    until SIGTERM/SIGINT (or ``stop``), close everything. The storage root goes into keys
    (``Layout``), so the store is opened without one."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    settings = storage_settings(
        options.storage_backend, root_dir="", config_path=options.storage_backend_config_path
    )
    store = DeferredStore(lambda: open_store(settings))
    runner: web.AppRunner | None = None
    kube: Client | None = None
    proxy: LiveProxy | None = None
    try:
        live = None
        middlewares: list[Any] = []
        extra_routes = None
        if options.enable_live_clusters or options.kubernetes_login:
            kube = await open_kube(options)
        if options.enable_live_clusters and kube is not None:
            live, proxy = _live(options, kube)
        if options.kubernetes_login and kube is not None:
            login = KubeLogin(kube)
            middlewares.append(login_middleware(login))
            extra_routes = partial(add_login_routes, login=login)
        app = make_app(
            store,
            root=options.storage_root_dir,
            cache_size=options.session_cache_size,
            cache_max_bytes=options.session_cache_max_memory,
            cache_ttl=options.session_cache_ttl,
            load_timeout=options.session_process_timeout,
            cluster_list_ttl=options.cluster_list_ttl,
            reload_interval=options.session_reload_interval,
            ui=UiBuilds.discover(
                ui_directory(options), use_installed_ray=options.dashboard_ui_from_ray
            ),
            live=live,
            proxy=proxy,
            middlewares=tuple(middlewares),
            extra_routes=extra_routes,
        )
        runner = web.AppRunner(app, access_log=None, keepalive_timeout=IDLE_TIMEOUT)
        await runner.setup()
        site = web.TCPSite(runner, options.listen_host, options.listen_port)
        await site.start()
        for address in runner.addresses:
            log.info("history server listening", address=str(address))
        stopped = asyncio.ensure_future(stop.wait())
        opened = asyncio.ensure_future(store.ready())
        await asyncio.wait({stopped, opened}, return_when=asyncio.FIRST_COMPLETED)
        if opened.done():
            opened.result()  # raises the store's opening error
            log.info("storage opened", backend=options.storage_backend)
        else:
            opened.cancel()
        await stopped
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if runner is not None:
            await runner.cleanup()
        if proxy is not None:
            await proxy.close()
        if kube is not None:
            await kube.close()
        await store.close()


def _live(options: ServerOptions, kube: Client) -> tuple[LiveClusters, LiveProxy]:
    live = LiveClusters(
        kube, auth_token_mode=options.use_auth_token_mode, list_ttl=options.cluster_list_ttl
    )

    async def credentials() -> Mapping[str, str]:
        return await bearer_headers(kube)

    proxy = LiveProxy(
        live,
        use_kubernetes_proxy=options.use_kubernetes_proxy,
        apiserver=kube.host,
        apiserver_session=kube.session if options.use_kubernetes_proxy else None,
        apiserver_credentials=credentials,
        apiserver_server_hostname=getattr(kube.configuration, "tls_server_name", None),
        access=ProxyAccess(kube) if options.kubernetes_login else None,
        drop_authorization=options.kubernetes_login,
    )
    return live, proxy


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 with one error line on a bad setting)."""
    try:
        options = parse_options(sys.argv[1:] if argv is None else argv, dict(os.environ))
    except ConfigError as exc:
        print(f"kuberay-history-server: {exc}", file=sys.stderr)
        return 1
    configure_logging(options.log_format, level=os.environ.get("HISTORY_SERVER_LOG_LEVEL", "info"))
    try:
        asyncio.run(run(options))
    except (StorageError, OSError, ConfigError) as exc:
        log.error(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
