"""KubeRay ``checkMTLSSecretsReady``: pods of a cluster with TLS enabled are created only once
cert-manager has issued both leaf certificates at their current generation and both Secrets
hold ``tls.crt``, ``tls.key`` and ``ca.crt`` -- otherwise a pod would mount a missing or stale
Secret."""

from __future__ import annotations

from kuberay.api.v1 import constants as C
from kuberay.controllers.builders.names import tls_cert_name, tls_secret_name
from kuberay.controllers.raycluster.context import Ctx
from kuberay.controllers.raycluster.status import ReconcileError
from kuberay.kube import NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj


async def require_mtls_ready(ctx: Ctx, cluster: Obj) -> None:
    """Raise :class:`ReconcileError` ("mTLS secrets not ready: ...") unless both leaf
    Certificates are Ready and both Secrets are complete (live reads: neither kind is in
    this controller's cache).

    The Secrets are read whole: which keys a Secret holds is only in its ``data`` (not in
    ``PartialObjectMetadata``), and KubeRay refuses pods until all three are there. The
    check runs only on a pass about to create pods (once per pass), never in a steady
    state; the values read are not kept."""
    # the mTLS package only for a cluster with TLS on (its gate is off by default)
    from kuberay.controllers.mtls.builders import (
        CERT_MANAGER_API_VERSION,
        CERTIFICATE_KIND,
        REQUIRED_SECRET_KEYS,
        is_certificate_ready,
    )

    ns, name = cluster["metadata"]["namespace"], cluster["metadata"]["name"]
    for node_type in (C.HEAD_NODE, C.WORKER_NODE):
        cert_name = tls_cert_name(name, node_type)
        try:
            cert = await ctx.client.get(CERT_MANAGER_API_VERSION, CERTIFICATE_KIND, cert_name, ns)
        except NotFound as exc:
            raise ReconcileError(
                f"mTLS secrets not ready: certificate {cert_name} not found: {exc}"
            ) from None
        if not is_certificate_ready(cert):
            generation = k8s.meta(cert).get("generation")
            raise ReconcileError(
                f"mTLS secrets not ready: certificate {cert_name} is not ready at current "
                f"generation {generation}"
            )
    for node_type in (C.HEAD_NODE, C.WORKER_NODE):
        secret_name = tls_secret_name(name, node_type)
        try:
            secret = await ctx.client.get("v1", "Secret", secret_name, ns)
        except NotFound as exc:
            raise ReconcileError(
                f"mTLS secrets not ready: secret {secret_name} not found: {exc}"
            ) from None
        data = secret.get("data") or {}
        for key in REQUIRED_SECRET_KEYS:
            if key not in data:
                raise ReconcileError(
                    f"mTLS secrets not ready: secret {secret_name} missing required key {key}"
                )
