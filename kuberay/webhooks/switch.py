"""KubeRay's switch for the validating webhooks: ``ENABLE_WEBHOOKS`` exactly ``true``.

Apart from the server so the operator can read it without importing the webhooks (their
server and the validation they run) when they are off, as they are by default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = [
    "ENABLE_WEBHOOKS_ENV",
    "WEBHOOK_CERT_DIR_ENV",
    "WEBHOOK_PORT_ENV",
    "webhook_listen",
    "webhooks_enabled",
]

ENABLE_WEBHOOKS_ENV: Final = "ENABLE_WEBHOOKS"
#: (this build) Where the serving certificate is and which port to serve, for an operator
#: run outside a pod; defaults are controller-runtime's (KubeRay has no setting for them).
WEBHOOK_CERT_DIR_ENV: Final = "KUBERAY_WEBHOOK_CERT_DIR"
WEBHOOK_PORT_ENV: Final = "KUBERAY_WEBHOOK_PORT"
DEFAULT_CERT_DIR: Final = "/tmp/k8s-webhook-server/serving-certs"
DEFAULT_PORT: Final = 9443


def webhooks_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """KubeRay's switch: webhooks run only when ``ENABLE_WEBHOOKS`` is exactly ``true``."""
    env = os.environ if environ is None else environ
    return env.get(ENABLE_WEBHOOKS_ENV) == "true"


def webhook_listen(environ: Mapping[str, str] | None = None) -> tuple[str, int]:
    """The serving certificate's directory and the port: ``KUBERAY_WEBHOOK_CERT_DIR`` and
    ``KUBERAY_WEBHOOK_PORT`` when set, else ``/tmp/k8s-webhook-server/serving-certs`` and
    9443; ``ValueError`` for a port that is not a number from 1 to 65535."""
    env = os.environ if environ is None else environ
    port_text = env.get(WEBHOOK_PORT_ENV) or str(DEFAULT_PORT)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{WEBHOOK_PORT_ENV}={port_text!r} is not a port number")
    return env.get(WEBHOOK_CERT_DIR_ENV) or DEFAULT_CERT_DIR, int(port_text)
