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
        review,
    )
    from kuberay.webhooks.config import (
        encode_ca_bundle,
        validating_webhook_configuration,
    )
    from kuberay.webhooks.server import (
        WebhookServer,
        maybe_start_webhook_server,
        start_webhook_server,
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
        "review",
    ),
    "kuberay.webhooks.config": (
        "encode_ca_bundle",
        "validating_webhook_configuration",
    ),
    "kuberay.webhooks.server": (
        "WebhookServer",
        "maybe_start_webhook_server",
        "start_webhook_server",
        "webhooks_enabled",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "RAYCLUSTER_WEBHOOK",
    "RAYJOB_WEBHOOK",
    "RAYSERVICE_WEBHOOK",
    "WEBHOOKS",
    "BadRequest",
    "KindWebhook",
    "WebhookServer",
    "encode_ca_bundle",
    "maybe_start_webhook_server",
    "review",
    "start_webhook_server",
    "validating_webhook_configuration",
    "webhooks_enabled",
]
