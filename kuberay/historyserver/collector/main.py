"""``kuberay-history-collector``: the ``ray-history-collector`` sidecar's program."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping, Sequence

import structlog

from kuberay.historyserver.collector.app import Collector, StartupError
from kuberay.historyserver.collector.config import CollectorOptions, ConfigError, parse_options
from kuberay.historyserver.collector.store import open_configured_store
from kuberay.logging import configure_logging

log = structlog.get_logger("historyserver.collector")


async def run(options: CollectorOptions, environ: Mapping[str, str]) -> None:
    """Open the store, run the collector until SIGTERM/SIGINT, flush, close the store."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    store = await open_configured_store(options, environ)
    try:
        await Collector(options, store).run(stop)
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 with one error line on a bad setting)."""
    environ = dict(os.environ)
    try:
        options = parse_options(sys.argv[1:] if argv is None else argv, environ)
    except ConfigError as exc:
        print(f"kuberay-history-collector: {exc}", file=sys.stderr)
        return 1
    configure_logging(options.log_format, level=environ.get("RAY_COLLECTOR_LOG_LEVEL", "info"))
    structlog.contextvars.bind_contextvars(
        cluster=options.cluster_name, namespace=options.cluster_namespace, role=options.role
    )
    for warning in options.warnings:
        log.warning(warning)
    try:
        asyncio.run(run(options, environ))
    except (StartupError, ConfigError) as exc:
        log.error(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
