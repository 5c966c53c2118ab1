"""Validating admission webhooks for RayCluster, RayJob and RayService (KubeRay's
``pkg/webhooks/v1``), off by default as in KubeRay (``ENABLE_WEBHOOKS=true`` turns them on).

* :mod:`kuberay.webhooks.admission`: AdmissionReview in, AdmissionReview out; the rules come
  from :mod:`kuberay.api.v1.validation` and a denial lists every error with its field path;
* :mod:`kuberay.webhooks.server`: the aiohttp HTTPS server (:func:`start_webhook_server`,
  :func:`maybe_start_webhook_server`), with certificate hot reload;
* :mod:`kuberay.webhooks.config`: the ``ValidatingWebhookConfiguration`` registering them.

Operator wiring::

    server = await maybe_start_webhook_server(gates.enabled)  # None unless ENABLE_WEBHOOKS=true
    ...
    if server is not None:
        await server.stop()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kuberay.lazy import lazy_exports

if TYPE_CHECKING:
    from kuberay.webhooks.admission import (
        RAYCLUSTER_WEBHOOK,
        RAYJOB_WEBHOOK,
        RAYSERVICE_WEBHOOK,
        WEBHOOKS,
        BadRequest,
        KindWebhook,
        RuleSet,
        denied_errors,
        invalid_status,
        review,
    )
    from kuberay.webhooks.config import (
        DEFAULT_CONFIGURATION_NAME,
        encode_ca_bundle,
        validating_webhook_configuration,
    )
    from kuberay.webhooks.server import (
        DEFAULT_CERT_DIR,
        DEFAULT_CERT_NAME,
        DEFAULT_KEY_NAME,
        DEFAULT_PORT,
        ENABLE_WEBHOOKS_ENV,
        WebhookServer,
        maybe_start_webhook_server,
        server_ssl_context,
        start_webhook_server,
        webhook_app,
        webhooks_enabled,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "kuberay.webhooks.admission": (
        "RAYCLUSTER_WEBHOOK",
        "RAYJOB_WEBHOOK",
        "RAYSERVICE_WEBHOOK",
        "WEBHOOKS",
        "BadRequest",
        "KindWebhook",
        "RuleSet",
        "denied_errors",
        "invalid_status",
        "review",
    ),
    "kuberay.webhooks.config": (
        "DEFAULT_CONFIGURATION_NAME",
        "encode_ca_bundle",
        "validating_webhook_configuration",
    ),
    "kuberay.webhooks.server": (
        "DEFAULT_CERT_DIR",
        "DEFAULT_CERT_NAME",
        "DEFAULT_KEY_NAME",
        "DEFAULT_PORT",
        "ENABLE_WEBHOOKS_ENV",
        "WebhookServer",
        "maybe_start_webhook_server",
        "server_ssl_context",
        "start_webhook_server",
        "webhook_app",
        "webhooks_enabled",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_CERT_DIR",
    "DEFAULT_CERT_NAME",
    "DEFAULT_CONFIGURATION_NAME",
    "DEFAULT_KEY_NAME",
    "DEFAULT_PORT",
    "ENABLE_WEBHOOKS_ENV",
    "RAYCLUSTER_WEBHOOK",
    "RAYJOB_WEBHOOK",
    "RAYSERVICE_WEBHOOK",
    "WEBHOOKS",
    "BadRequest",
    "KindWebhook",
    "RuleSet",
    "WebhookServer",
    "denied_errors",
    "encode_ca_bundle",
    "invalid_status",
    "maybe_start_webhook_server",
    "review",
    "server_ssl_context",
    "start_webhook_server",
    "validating_webhook_configuration",
    "webhook_app",
    "webhooks_enabled",
]
