"""``kuberay-history-server``: serve stored Ray sessions (no Kubernetes needed)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence

import structlog
from aiohttp import web

from kuberay.historyserver.server.app import IDLE_TIMEOUT, make_app
from kuberay.historyserver.server.config import ConfigError, ServerOptions, parse_options
from kuberay.historyserver.server.ui_builds import UiBuilds
from kuberay.historyserver.storage.config import open_store, storage_settings
from kuberay.historyserver.storage.errors import StorageError
from kuberay.logging import configure_logging

log = structlog.get_logger("historyserver.server")


def ui_directory(options: ServerOptions) -> str:
    """Where the UI builds are looked for: ``--dashboard-ui-dir`` when given, else KubeRay's
    ``--dashboard-dir`` (default ``/dashboard``, where the server image keeps one build per
    Ray ``major.minor``) when that directory exists, else nowhere (``""``)."""
    if options.dashboard_ui_dir:
        return options.dashboard_ui_dir
    return options.dashboard_dir if os.path.isdir(options.dashboard_dir) else ""


async def run(options: ServerOptions, stop: asyncio.Event | None = None) -> None:
    """Open the store, serve until SIGTERM/SIGINT (or ``stop``), close everything. The
    storage root goes into keys (``Layout``), so the store is opened without one."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    settings = storage_settings(
        options.storage_backend, root_dir="", config_path=options.storage_backend_config_path
    )
    store = await open_store(settings)
    runner: web.AppRunner | None = None
    try:
        app = make_app(
            store,
            root=options.storage_root_dir,
            cache_size=options.session_cache_size,
            cache_max_bytes=options.session_cache_max_memory,
            cache_ttl=options.session_cache_ttl,
            load_timeout=options.session_process_timeout,
            cluster_list_ttl=options.cluster_list_ttl,
            ui=UiBuilds.discover(
                ui_directory(options), use_installed_ray=options.dashboard_ui_from_ray
            ),
        )
        runner = web.AppRunner(app, access_log=None, keepalive_timeout=IDLE_TIMEOUT)
        await runner.setup()
        site = web.TCPSite(runner, options.listen_host, options.listen_port)
        await site.start()
        for address in runner.addresses:
            log.info("history server listening", address=str(address))
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if runner is not None:
            await runner.cleanup()
        await store.close()


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
    except (StorageError, OSError) as exc:
        log.error(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
