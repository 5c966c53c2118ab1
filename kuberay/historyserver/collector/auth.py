"""The dashboard credential (KubeRay ``pkg/utils/auth.go``).

``RAY_ENABLE_K8S_TOKEN_AUTH=true``: the projected ServiceAccount token file, read on every
request (the kubelet rotates it). Otherwise ``RAY_AUTH_TOKEN`` (from the cluster's Secret).
``RAY_AUTH_MODE=token`` with neither is a configuration error. The header is
``x-ray-authorization: Bearer <token>``.
"""

from __future__ import annotations

from pathlib import Path

from kuberay.historyserver.collector.config import AuthSettings
from kuberay.historyserver.layout import RAY_AUTH_HEADER


class AuthConfigError(Exception):
    """The collector's own credential cannot be resolved (never retried)."""


class AuthRejected(Exception):
    """The dashboard answered 401 or 403 to a credential we sent (never retried)."""


def auth_headers(settings: AuthSettings) -> dict[str, str]:
    """The headers to send, ``{}`` when auth is off; raises ``AuthConfigError``."""
    if settings.k8s_token_auth:
        try:
            token = Path(settings.token_path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise AuthConfigError(
                f"failed to read projected ServiceAccount token at {settings.token_path}: {exc}"
            ) from exc
        if not token:
            raise AuthConfigError(
                f"projected ServiceAccount token at {settings.token_path} is empty"
            )
        return {RAY_AUTH_HEADER: f"Bearer {token}"}
    if settings.token:
        return {RAY_AUTH_HEADER: f"Bearer {settings.token}"}
    if settings.mode.lower() == "token":
        raise AuthConfigError(
            "RAY_AUTH_MODE=token but no credential is available: set RAY_AUTH_TOKEN, or "
            "RAY_ENABLE_K8S_TOKEN_AUTH=true with the projected token volume mounted"
        )
    return {}


def is_auth_failure(status: int) -> bool:
    """401 and 403: a rejected credential that retrying will not fix."""
    return status in (401, 403)
