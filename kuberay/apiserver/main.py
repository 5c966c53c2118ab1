"""``kuberay-apiserver``: serve KubeRay's V2 API, acting as its caller."""

from __future__ import annotations

import asyncio
import signal
import ssl
import sys
from collections.abc import Sequence

import structlog
from aiohttp import web

from kuberay.apiserver.app import make_app
from kuberay.apiserver.options import SERVICE_ACCOUNT, ApiServerOptions, OptionsError, parse_options
from kuberay.apiserver.upstream import Upstream
from kuberay.kube import kubeconfig
from kuberay.kube.restconfig import RestConfig
from kuberay.logging import configure_logging

log = structlog.get_logger("apiserver")


def rest_config(options: ApiServerOptions) -> RestConfig:
    """``--kubeconfig`` when given, else the pod's ServiceAccount in a pod, else the user's
    kubeconfig (``KUBECONFIG``, else ``~/.kube/config``); ``kubeconfig.ConfigError``."""
    if options.kubeconfig:
        return kubeconfig.load(options.kubeconfig)
    try:
        return kubeconfig.in_cluster()
    except kubeconfig.ConfigError:
        return kubeconfig.load(None)


def listener_tls(options: ApiServerOptions) -> ssl.SSLContext | None:
    """The listener's TLS context (``--tls-cert-file``/``--tls-private-key-file``), or None."""
    if not options.tls_cert_file:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(options.tls_cert_file, options.tls_private_key_file)
    return context


async def serve(
    options: ApiServerOptions,
    config: RestConfig,
    stop: asyncio.Event,
    *,
    ready: asyncio.Future[int] | None = None,
) -> None:
    """Serve until ``stop`` is set; ``ready`` gets the bound port once listening."""
    from kuberay.apiserver.wiring import install as install_templates

    upstream = Upstream(config)
    rewrite, routes = install_templates()
    app = make_app(options, upstream, rewrite=rewrite, extra_routes=routes)
    # a caller that goes away cancels its request, as Go's request context does: a watch the
    # dashboard left (another namespace chosen, the tab closed) stops upstream at once
    # rather than at its next event
    runner = web.AppRunner(app, access_log=None, handle_signals=False, handler_cancellation=True)
    await runner.setup()
    try:
        site = web.TCPSite(
            runner, options.http_host, options.http_port, ssl_context=listener_tls(options)
        )
        await site.start()
        port = runner.addresses[0][1] if runner.addresses else options.http_port
        scheme = "https" if options.tls_cert_file else "http"
        log.info(
            "listening",
            url=f"{scheme}://{options.http_host}:{port}",
            auth_mode=options.auth_mode,
            apiserver=config.host,
        )
        if ready is not None and not ready.done():
            ready.set_result(port)
        await stop.wait()
    finally:
        await runner.cleanup()
        await upstream.close()


def main(argv: Sequence[str] | None = None) -> None:
    """The console script."""
    try:
        options = parse_options(sys.argv[1:] if argv is None else argv)
    except OptionsError as exc:
        print(f"kuberay-apiserver: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    configure_logging(options.log_format)
    if options.auth_mode == SERVICE_ACCOUNT:
        log.warning(
            "--auth-mode=service-account: every caller acts with this server's own rights "
            "(KubeRay's behaviour); use --auth-mode=caller to have RBAC apply per caller"
        )
    try:
        config = rest_config(options)
    except (kubeconfig.ConfigError, OSError) as exc:
        print(f"kuberay-apiserver: cannot configure a Kubernetes client: {exc}", file=sys.stderr)
        raise SystemExit(1) from None

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await config.prepare()
        await serve(options, config, stop)

    asyncio.run(run())
