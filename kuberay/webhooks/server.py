"""The HTTPS server of the webhooks (aiohttp): the three validating ones and, given a
:class:`~kuberay.webhooks.pods.PodWebhooks`, node label delivery's two mutating ones.

KubeRay serves its webhooks from the operator process on port 9443 with the serving
certificate in ``/tmp/k8s-webhook-server/serving-certs/tls.{crt,key}`` (controller-runtime's
defaults) and only when the environment variable ``ENABLE_WEBHOOKS`` is exactly ``true``;
this module keeps those defaults (:func:`webhooks_enabled`, :func:`maybe_start_webhook_server`).

Like controller-runtime's certificate watcher, the server re-reads the certificate and key
when the files change (a renewed Secret is swapped into the mounted volume), so rotation needs
no restart: new TLS handshakes use the new pair, established connections keep theirs.
Every load and every poll of the files counts as a certificate read
(``certwatcher_read_certificate_total``, ``..._errors_total`` when the files are missing
or do not load), as controller-runtime's watcher reads them on start and every 10 s.
Requests are counted, timed and gauged per path (:mod:`kuberay.webhooks.metrics`).

Answers: a request that is not a decodable AdmissionReview (wrong content type, bad JSON,
missing request/uid/object, kind not served at that path) gets HTTP 400 with an
AdmissionReview body explaining why; everything else gets HTTP 200 with the review.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Final

import orjson
import structlog
from aiohttp import web

from kuberay.api.v1.gates import FeatureGates
from kuberay.reconcile.metrics import CERT_READ_ERRORS, CERT_READS
from kuberay.webhooks.admission import (
    WEBHOOKS,
    BadRequest,
    KindWebhook,
    RuleSet,
    bad_request_review,
    review,
)
from kuberay.webhooks.metrics import instrument
from kuberay.webhooks.pods import (
    POD_BINDING_WEBHOOK_PATH,
    POD_WEBHOOK_PATH,
    PodWebhooks,
    mutate_binding,
    mutate_pod,
)
from kuberay.webhooks.switch import (
    DEFAULT_CERT_DIR,
    DEFAULT_PORT,
    ENABLE_WEBHOOKS_ENV,
    webhooks_enabled,
)

__all__ = [
    "DEFAULT_CERT_DIR",
    "DEFAULT_CERT_NAME",
    "DEFAULT_KEY_NAME",
    "DEFAULT_PORT",
    "ENABLE_WEBHOOKS_ENV",
    "MAX_REQUEST_BYTES",
    "WebhookServer",
    "maybe_start_webhook_server",
    "server_ssl_context",
    "start_webhook_server",
    "webhook_app",
    "webhooks_enabled",
]

log = structlog.get_logger("kuberay.webhooks")

DEFAULT_CERT_NAME: Final = "tls.crt"
DEFAULT_KEY_NAME: Final = "tls.key"
MAX_REQUEST_BYTES: Final = 7 * 1024 * 1024  # controller-runtime's limit
DEFAULT_RELOAD_INTERVAL: Final = 10.0

_JSON = "application/json"


def _json_response(body: Mapping[str, Any], status: int = 200) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type=_JSON)


async def _read_body(request: web.Request) -> Any:
    """The decoded JSON body; :class:`BadRequest` when there is none."""
    if request.content_type != _JSON:
        raise BadRequest(f"contentType={request.content_type}, expected {_JSON}")
    raw = await request.read()
    if not raw:
        raise BadRequest("request body is empty")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from exc


def _bad_request(body: Any, error: BadRequest) -> web.Response:
    api_version = body.get("apiVersion") if isinstance(body, dict) else None
    if not isinstance(api_version, str) or not api_version.startswith("admission"):
        api_version = "admission.k8s.io/v1"
    return _json_response(bad_request_review(error, api_version), 400)


def _handler(
    webhook: KindWebhook, gates: FeatureGates, rules: RuleSet, allowed_node_labels: frozenset[str]
) -> Any:
    async def handle(request: web.Request) -> web.Response:
        body: Any = None
        try:
            body = await _read_body(request)
            answer = review(
                webhook, body, gates=gates, rules=rules, allowed_node_labels=allowed_node_labels
            )
        except BadRequest as exc:
            log.info("bad admission request", webhook=webhook.name, error=str(exc))
            return _bad_request(body, exc)
        response = answer["response"]
        req = body["request"]
        log.info(
            f"validate {str(req.get('operation', '')).lower()}",
            webhook=webhook.name,
            namespace=req.get("namespace"),
            name=req.get("name"),
            allowed=response["allowed"],
            causes=len(response.get("status", {}).get("details", {}).get("causes", [])),
        )
        return _json_response(answer)

    return handle


def _mutating_handler(mutate: Any, hooks: PodWebhooks) -> Any:
    async def handle(request: web.Request) -> web.Response:
        body: Any = None
        try:
            body = await _read_body(request)
            return _json_response(await mutate(hooks, body))
        except BadRequest as exc:
            log.info("bad admission request", path=request.path, error=str(exc))
            return _bad_request(body, exc)

    return handle


def webhook_app(
    gates: FeatureGates = None,
    *,
    rules: RuleSet = "all",
    allowed_node_labels: Collection[str] = (),
    pods: PodWebhooks | None = None,
) -> web.Application:
    """An app serving the three ``/validate-ray-io-v1-*`` endpoints and, with ``pods``, the
    ``/mutate-v1-pod`` and ``/mutate-v1-pod-binding`` ones (plain HTTP; TLS is the site's
    business). ``allowed_node_labels`` is the operator's ``allowedNodeLabels``."""
    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    allowed = frozenset(allowed_node_labels)
    for webhook in WEBHOOKS:
        handler = _handler(webhook, gates, rules, allowed)
        app.router.add_post(webhook.path, instrument(webhook.path, handler))
    if pods is not None:
        for path, mutate in (
            (POD_WEBHOOK_PATH, mutate_pod),
            (POD_BINDING_WEBHOOK_PATH, mutate_binding),
        ):
            app.router.add_post(path, instrument(path, _mutating_handler(mutate, pods)))
    return app


def server_ssl_context(
    cert_file: str | os.PathLike[str], key_file: str | os.PathLike[str]
) -> ssl.SSLContext:
    """A TLS >= 1.2 server context holding the PEM certificate chain and key (one
    certificate read; a read error when they do not load, which is raised)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    CERT_READS.inc()
    try:
        ctx.load_cert_chain(os.fspath(cert_file), os.fspath(key_file))
    except (OSError, ssl.SSLError):
        CERT_READ_ERRORS.inc()
        raise
    return ctx


def _stamp(*paths: Path) -> tuple[tuple[int, int, int], ...]:
    out = []
    for path in paths:
        st = path.stat()
        out.append((st.st_ino, st.st_mtime_ns, st.st_size))
    return tuple(out)


class WebhookServer:
    """A running webhook server; ``port`` is the bound port (useful with port 0)."""

    def __init__(
        self,
        runner: web.AppRunner,
        ssl_context: ssl.SSLContext,
        host: str | None,
        port: int,
        cert_file: Path,
        key_file: Path,
    ) -> None:
        self.runner = runner
        self.ssl_context = ssl_context
        self.host = host
        self.port = port
        self.cert_file = cert_file
        self.key_file = key_file
        self.reloads = 0
        self._stamp = _stamp(cert_file, key_file)
        self._reloader: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """``https://<host>:<port>`` (host ``localhost`` when bound to every interface)."""
        host = self.host or "localhost"
        if ":" in host:
            host = f"[{host}]"
        return f"https://{host}:{self.port}"

    def reload_certificate(self) -> bool:
        """Load the certificate and key again if either file changed; whether it did.

        A pair that does not load (caught half-written) is kept for the next try. Each
        call is a certificate read; missing or unloadable files are a read error."""
        CERT_READS.inc()
        try:
            stamp = _stamp(self.cert_file, self.key_file)
        except OSError:
            CERT_READ_ERRORS.inc()
            return False
        if stamp == self._stamp:
            return False
        try:
            self.ssl_context.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            CERT_READ_ERRORS.inc()
            log.warning("cannot reload webhook serving certificate", error=str(exc))
            return False
        self._stamp = stamp
        self.reloads += 1
        log.info("reloaded webhook serving certificate", cert=str(self.cert_file))
        return True

    def _start_reloader(self, interval: float) -> None:
        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                self.reload_certificate()

        self._reloader = asyncio.get_running_loop().create_task(loop())

    async def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._reloader is not None:
            self._reloader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reloader
            self._reloader = None
        await self.runner.cleanup()

    async def cleanup(self) -> None:
        """Alias of :meth:`stop`, as on an aiohttp ``AppRunner``."""
        await self.stop()


async def start_webhook_server(
    host: str | None,
    port: int,
    cert_file: str | os.PathLike[str],
    key_file: str | os.PathLike[str],
    gates: FeatureGates = None,
    *,
    rules: RuleSet = "all",
    reload_interval: float | None = DEFAULT_RELOAD_INTERVAL,
    allowed_node_labels: Collection[str] = (),
    pods: PodWebhooks | None = None,
) -> WebhookServer:
    """Serve the ray.io validating webhooks over HTTPS on ``host:port``.

    ``host`` ``None`` or ``""`` binds every interface, ``port`` 0 a free port (see
    :attr:`WebhookServer.port`). ``gates`` are the operator's feature gates (a mapping or a
    ``name -> bool`` callable), ``rules`` picks the rule set (see
    :mod:`kuberay.webhooks.admission`), ``reload_interval`` how often (seconds) the
    certificate files are checked for rotation (``None``: never); ``allowed_node_labels``
    and ``pods`` as for :func:`webhook_app`. Stop with :meth:`WebhookServer.stop`.
    """
    cert_path, key_path = Path(cert_file), Path(key_file)
    ctx = server_ssl_context(cert_path, key_path)
    app = webhook_app(gates, rules=rules, allowed_node_labels=allowed_node_labels, pods=pods)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host or None, port, ssl_context=ctx)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = port
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            bound = int(address[1])
            break
    server = WebhookServer(runner, ctx, host or None, bound, cert_path, key_path)
    if reload_interval:
        server._start_reloader(reload_interval)
    log.info("serving validating webhooks", port=bound, rules=rules)
    return server


async def maybe_start_webhook_server(
    gates: FeatureGates = None,
    *,
    environ: Mapping[str, str] | None = None,
    host: str | None = None,
    port: int = DEFAULT_PORT,
    cert_dir: str | os.PathLike[str] = DEFAULT_CERT_DIR,
    rules: RuleSet = "all",
    allowed_node_labels: Collection[str] = (),
    pods: PodWebhooks | None = None,
) -> WebhookServer | None:
    """What the operator does at start-up: serve the webhooks on ``port`` with
    ``<cert_dir>/tls.crt`` and ``tls.key`` if ``ENABLE_WEBHOOKS=true``, else nothing
    (``allowed_node_labels`` and ``pods`` as for :func:`webhook_app`)."""
    if not webhooks_enabled(environ):
        return None
    directory = Path(cert_dir)
    return await start_webhook_server(
        host,
        port,
        directory / DEFAULT_CERT_NAME,
        directory / DEFAULT_KEY_NAME,
        gates,
        rules=rules,
        allowed_node_labels=allowed_node_labels,
        pods=pods,
    )
